"""Run the provider simulator for real: uvicorn in-process on a free port, talked to over HTTP."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from devkit.simulators.provider.app import create_app
from devkit.simulators.provider.clock import ReplayClock
from devkit.simulators.provider.config import BUNDLED_RECORDINGS_DIR, ProviderSimConfig
from devkit.simulators.provider.server import build_server
from devkit.simulators.provider.simulator import Simulator

TOKEN = "test-token"
BASIC = BUNDLED_RECORDINGS_DIR / "football-basic.jsonl"
CORRECTION = BUNDLED_RECORDINGS_DIR / "football-correction.jsonl"
THREE_MATCHES = BUNDLED_RECORDINGS_DIR / "football-three-matches.jsonl"
BASIC_ID = 81000001
CORRECTION_ID = 81000002
# football-basic.jsonl: start 15:00:00Z, kick-off 15:02:00 (t=120).
BASIC_ORIGIN = 1773500400.0


@dataclass
class RunningSim:
    """A simulator listening on localhost, and a client that carries the token."""

    base_url: str
    client: httpx.AsyncClient
    simulator: Simulator

    async def get(self, path: str, **params: Any) -> httpx.Response:
        """GET a data endpoint (`path` below /v3/football) with the token."""
        return await self.client.get(f"/v3/football/{path}", params=params)

    async def clock(self, **change: Any) -> dict[str, Any]:
        """POST /_sim/clock and return the clock status."""
        response = await self.client.post("/_sim/clock", json=change)
        response.raise_for_status()
        result: dict[str, Any] = response.json()
        return result

    async def fault(self, **fault: Any) -> dict[str, Any]:
        """POST a live fault."""
        response = await self.client.post("/_sim/faults", json=fault)
        assert response.status_code == 201, response.text
        result: dict[str, Any] = response.json()
        return result


StartSim = Callable[..., Awaitable[RunningSim]]


@pytest.fixture(scope="session")
async def stopping_servers() -> AsyncIterator[list[asyncio.Task[None]]]:
    """Servers told to stop; awaited once at the end of the session.

    uvicorn's shutdown takes ~0.2 s (its tick and a fixed pause); letting it finish in the
    background keeps that out of every test.
    """
    tasks: list[asyncio.Task[None]] = []
    yield tasks
    await asyncio.gather(*tasks)


@pytest.fixture
async def start_sim(stopping_servers: list[asyncio.Task[None]]) -> AsyncIterator[StartSim]:
    """Start simulators on free ports; all are stopped when the test ends.

    Call with `recordings` and either `t` (a frozen clock at that replay time, default 0; `wall`
    fixes the real time it maps to) or `own_clock=True` for the running `start_in`/`speed` clock a
    real start gets.
    """
    running: list[tuple[Any, asyncio.Task[None], httpx.AsyncClient]] = []

    async def start(
        recordings: Sequence[Path] = (BASIC,),
        *,
        t: float = 0.0,
        speed: float = 1.0,
        start_in: float = 30.0,
        own_clock: bool = False,
        wall: Callable[[], float] = time.time,
    ) -> RunningSim:
        config = ProviderSimConfig(
            recordings=tuple(recordings), speed=speed, start_in=start_in, token=TOKEN, port=0
        )
        clock = None if own_clock else ReplayClock(speed=speed, t=t, frozen=True, wall=wall)
        app = create_app(config, clock=clock)
        server = build_server(config, app)
        task = asyncio.create_task(server.serve())
        while not server.started:
            if task.done():
                task.result()
            await asyncio.sleep(0.005)
        port = server.servers[0].sockets[0].getsockname()[1]
        base_url = f"http://127.0.0.1:{port}"
        client = httpx.AsyncClient(base_url=base_url, params={"api_token": TOKEN}, timeout=5.0)
        running.append((server, task, client))
        return RunningSim(base_url=base_url, client=client, simulator=app.state.simulator)

    yield start
    for server, task, client in running:
        await client.aclose()
        server.should_exit = True
        stopping_servers.append(task)


def write_recording(
    path: Path,
    lines: Sequence[dict[str, Any]],
    *,
    fixtures: Sequence[int] = (BASIC_ID,),
    start: str = "2026-03-14T15:00:00Z",
) -> Path:
    """Write a recording with a standard header and `lines` after it."""
    header = {"recording": 1, "sport": "football", "name": "test", "start": start, "fixtures": list(fixtures)}
    path.write_text("\n".join(json.dumps(line) for line in [header, *lines]) + "\n")
    return path


def recording_lines(path: Path) -> list[dict[str, Any]]:
    """The lines after the header."""
    return [json.loads(line) for line in path.read_text().splitlines()[1:] if line.strip()]


def with_faults(tmp_path: Path, faults: Sequence[tuple[float, dict[str, Any]]]) -> Path:
    """football-basic with fault lines inserted at their `t`."""
    lines = recording_lines(BASIC) + [{"t": t, "fault": fault} for t, fault in faults]
    lines.sort(key=lambda line: line["t"])
    return write_recording(tmp_path / "faulty.jsonl", lines)
