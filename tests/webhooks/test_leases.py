"""A match in flight is one sender's, whatever makes its messages due meanwhile; a partner's
broadcast delay holds its webhooks back as it holds its key."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import timedelta

from sqlalchemy.ext.asyncio import AsyncEngine
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from scoreline.feeds.partner_delay import set_partner_delay
from scoreline.settings import Settings
from scoreline.webhooks.endpoints import resume_endpoint
from tests.feeds.partner_matches import match_in
from tests.support.http import serve
from tests.support.waiting import eventually
from tests.webhooks.conftest import LEAGUE, endpoint_at, running

MATCH = 93000601
ENTRIES = 8
SLOW_SEQ = 3
SLOW_FOR = 1.5


@dataclass
class Watched:
    """What a receiver saw of one match: each arrival's seq and time, and the most in flight at once."""

    url: str = ""
    arrivals: list[tuple[int, float]] = field(default_factory=list)
    in_flight: int = 0
    most_in_flight: int = 0


@asynccontextmanager
async def watching(slow_seq: int | None) -> AsyncIterator[Watched]:
    watched = Watched()

    async def hook(request: Request) -> Response:
        seq = int((await request.json())["seq"])
        watched.arrivals.append((seq, time.monotonic()))
        watched.in_flight += 1
        watched.most_in_flight = max(watched.most_in_flight, watched.in_flight)
        try:
            if seq == slow_seq:
                await asyncio.sleep(SLOW_FOR)
            return Response("ok")
        finally:
            watched.in_flight -= 1

    async with serve(Starlette(routes=[Route("/hook", hook, methods=["POST"])])) as base:
        watched.url = base + "/hook"
        yield watched


async def test_a_resume_while_a_match_is_in_flight_never_sends_it_twice_at_once(
    engine: AsyncEngine, webhook_settings: Settings, partner: str
) -> None:
    """A resume made every undelivered message due at once, which also wiped the lease of the
    messages a task was sending: another claim took the match again and sent it beside the first,
    out of order and twice."""
    async with watching(slow_seq=SLOW_SEQ) as seen:
        endpoint, _ = await endpoint_at(engine, seen.url)
        match = await match_in(engine, MATCH, LEAGUE)
        # A deadline past the slow answer: seq 3 is answered, not retried.
        patient = webhook_settings.model_copy(update={"webhook_timeout": timedelta(seconds=5)})
        async with running(engine, patient):
            await match.change(entries=ENTRIES)
            await eventually(lambda: _arrived(seen, SLOW_SEQ))
            await resume_endpoint(engine, endpoint.id)  # while seq 3 is being answered
            await eventually(lambda: _arrived(seen, ENTRIES), within=20)
            await asyncio.sleep(0.5)  # anything sent twice would arrive meanwhile
    seqs = [seq for seq, _ in seen.arrivals]
    assert seen.most_in_flight == 1, seqs
    assert seqs == list(range(1, ENTRIES + 1))


async def test_a_partners_delay_holds_its_webhooks_back(
    engine: AsyncEngine, webhook_settings: Settings, partner: str
) -> None:
    """Only the endpoint's own delay held webhooks back: a partner sold a delayed tier got every
    change live through an endpoint registered without one."""
    await set_partner_delay(engine, partner, 2)
    async with watching(slow_seq=None) as seen:
        await endpoint_at(engine, seen.url)
        match = await match_in(engine, MATCH, LEAGUE)
        async with running(engine, webhook_settings):
            committed = time.monotonic()
            await match.change(entries=2)
            await eventually(lambda: _arrived(seen, 2), within=15)
    assert [seq for seq, _ in seen.arrivals] == [1, 2]
    assert all(at - committed >= 2 for _, at in seen.arrivals)


async def _arrived(seen: Watched, seq: int) -> bool:
    return any(arrived >= seq for arrived, _ in seen.arrivals)
