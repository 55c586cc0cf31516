"""Broadcast delay on live screens: every version, in order, none before its commit plus the delay.

Each commit's time is bracketed by the test's own clock (`began` before its transaction, `done`
after): the commit happened in between, so a message that arrives at or after `began + delay` was
not early by more than the commit's own measured length, and one must never arrive before it.
"""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine
from websockets.exceptions import InvalidStatus

from tests.outbox.writer import MatchWriter
from tests.streams.clients import sse, websocket

MATCH = 81000001
DELAY = 2


async def _commit(match: MatchWriter, began: dict[int, float], entries: int = 1) -> None:
    """Commit the next version, noting when its transaction began."""
    start = time.time()
    version = await match.change(entries=entries)
    began[version] = start


def _in_order_and_never_early(
    arrivals: list[tuple[float, dict[str, Any]]], began: dict[int, float], last: int
) -> None:
    """Each value follows on from the one before (the first may be a plain current value, or the
    change that made it), its entries cover every seq up to `last`, and none came early."""
    held = 0
    for arrived, value in arrivals:
        assert arrived >= began[value["version"]] + DELAY, value["version"]
        if value["previous"] is None:
            assert value is arrivals[0][1]
            held = value["version"]
            continue
        assert value["previous"] == held
        assert [entry["seq"] for entry in value["entries"]] == list(range(held + 1, value["version"] + 1))
        held = value["version"]
    assert held == last


async def test_a_delayed_match_stream_gets_every_version_in_order_and_never_early(
    api_url: str, engine: AsyncEngine
) -> None:
    """The first value and every change arrive at least the delay after their commit, with no gap."""
    match = await MatchWriter.create(engine, MATCH)
    began: dict[int, float] = {}
    await _commit(match, began)
    async with sse(api_url, f"/v1/matches/{MATCH}/stream?delay={DELAY}") as stream:
        for entries in (1, 2, 1):
            await _commit(match, began, entries)
        arrivals = []
        for event in await stream.until_version(match.version, within=DELAY + 15):
            arrivals.append((time.time(), event.body))
    _in_order_and_never_early(arrivals, began, match.version)


async def test_a_delayed_socket_gets_every_version_in_order_and_never_early(
    api_url: str, engine: AsyncEngine
) -> None:
    """On the WebSocket too, each value comes at least the delay after its commit, in order."""
    match = await MatchWriter.create(engine, MATCH)
    began: dict[int, float] = {}
    await _commit(match, began)
    channel = f"match:{MATCH}"
    async with websocket(api_url, f"?delay={DELAY}") as socket:
        assert await socket.subscribe(channel) == [{"type": "subscribed", "channels": [channel]}]
        for entries in (2, 1, 1):
            await _commit(match, began, entries)
        arrivals = []
        while not arrivals or arrivals[-1][1]["version"] < match.version:
            message = await socket.next(within=DELAY + 15)
            arrivals.append((time.time(), message))
    assert {value["type"] for _, value in arrivals} == {"value"}
    _in_order_and_never_early(arrivals, began, match.version)


@pytest.mark.parametrize("delay", ["-1", "301", "x", "1.5"])
async def test_an_invalid_delay_is_refused(api_url: str, engine: AsyncEngine, delay: str) -> None:
    """A delay outside 0..300 whole seconds is a 422 on SSE, and no WebSocket connection."""
    await MatchWriter.create(engine, MATCH)
    async with httpx.AsyncClient(base_url=api_url) as client:
        for path in (f"/v1/matches/{MATCH}/stream", "/v1/stream?matches=live"):
            response = await client.get(path, params={"delay": delay})
            assert response.status_code == 422, path
            assert response.json()["error"]["code"] == "validation_error"
    with pytest.raises(InvalidStatus):
        async with websocket(api_url, f"?delay={delay}"):
            pass
