"""The soak's screens against two real API processes, one of which goes away and comes back."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path

import uvicorn
from sqlalchemy.ext.asyncio import AsyncEngine

from api.app import create_app
from devkit.devstack.ports import free_port
from devkit.soak.model import SoakFixtures, SoakTargets
from devkit.soak.screens import ScreenPart
from scoreline.settings import Settings
from tests.outbox.writer import MatchWriter

MATCHES = (81000001, 81000002)


@asynccontextmanager
async def api_process(settings: Settings, port: int) -> AsyncIterator[None]:
    """An API served on `port` whose shutdown cuts its open streams after 0.5 s, as a killed
    process would, instead of waiting for screens that never hang up."""
    config = uvicorn.Config(
        create_app(settings),
        host="127.0.0.1",
        port=port,
        log_config=None,
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=1,
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    try:
        while not server.started:
            if task.done():
                task.result()
            await asyncio.sleep(0.02)
        yield
    finally:
        server.should_exit = True
        await task


async def _changes(matches: list[MatchWriter], rounds: int) -> None:
    for number in range(rounds):
        for match in matches:
            await match.change(entries=1 + number % 2, goal="home" if number % 3 == 0 else None)
        await asyncio.sleep(0.05)


async def test_every_screen_sees_every_version_across_a_lost_api_process(
    database_url: str, redis_url: str, engine: AsyncEngine
) -> None:
    """Process one stops mid-match and returns: its clients move to process two and resume; the
    check then finds every version of both matches, in order, and reconnects that happened."""
    settings = Settings(
        database_url=database_url,
        redis_url=redis_url,
        log_format="json",
        live_keepalive_interval=timedelta(seconds=0.3),
    )
    matches = [await MatchWriter.create(engine, fixture_id) for fixture_id in MATCHES]
    ports = (free_port(), free_port())
    urls = tuple(f"http://127.0.0.1:{port}" for port in ports)
    targets = SoakTargets(urls, "", "", database_url, Path("unused"))
    part = ScreenPart(targets, SoakFixtures(MATCHES, ()), random.Random(5), sse_clients=4, ws_clients=4)
    stop = asyncio.Event()
    async with api_process(settings, ports[1]):
        async with api_process(settings, ports[0]):
            running = asyncio.create_task(part.run(stop))
            await asyncio.sleep(1.5)
            await _changes(matches, 6)
            await asyncio.sleep(0.5)
        await _changes(matches, 6)
        async with api_process(settings, ports[0]):
            await _changes(matches, 6)
            await asyncio.sleep(1.0)
            stop.set()
            await running
            result = await part.check()
    assert result.violations == ()
    assert result.figures["reconnects"] > 0
    assert result.figures["messages"] > 0
    assert result.checked == 8
