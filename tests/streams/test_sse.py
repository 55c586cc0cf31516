"""`GET /v1/matches/{id}/stream` over real HTTP: first value, every version, resume, keep-alive, drops."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Sequence

import httpx
import redis.asyncio as aioredis
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncEngine

from api.app import create_app
from api.live.runtime import LiveRuntime
from scoreline.readmodel.cache import refresh
from scoreline.settings import Settings
from tests.outbox.writer import MatchWriter
from tests.streams.clients import SseEvent, server_let_go, sse
from tests.support.http import serve
from tests.support.waiting import eventually

MATCH = 81000001


def assert_no_gap(events: Sequence[SseEvent], start: int, end: int) -> None:
    """Ids rise, each message follows on from the one before, and the entries are exactly start..end."""
    ids = [int(event.id or 0) for event in events]
    assert ids == sorted(set(ids)), ids
    previous = start - 1
    seqs: list[int] = []
    for event in events:
        body = event.body
        assert event.event == "value"
        assert body["version"] == int(event.id or 0) == body["match"]["version"]
        assert body["previous"] == previous
        seqs += [entry["seq"] for entry in body["entries"]]
        previous = body["version"]
    assert seqs == list(range(start, end + 1))


async def test_first_the_current_value_then_every_version_in_order(api_url: str, engine: AsyncEngine) -> None:
    match = await MatchWriter.create(engine, MATCH)
    await match.change()
    async with sse(api_url, f"/v1/matches/{MATCH}/stream") as stream:
        first = await stream.next()
        assert (first.event, first.id) == ("value", "1")
        assert first.body["previous"] is None
        assert first.body["entries"] == []
        assert first.body["match"]["fixture"]["id"] == MATCH

        for number in range(12):
            await match.change(entries=1 + number % 3, goal="home" if number == 4 else None)
        events = await stream.until_version(match.version)

    assert_no_gap(events, 2, match.version)
    assert events[-1].body["match"]["score"] == {"home": 1, "away": 0}
    goal = [e for event in events for e in event.body["entries"] if e["body"].get("type") == "goal"]
    assert [entry["kind"] for entry in goal] == ["event"]


async def test_last_event_id_resumes_with_exactly_the_missed_versions(
    api_url: str, engine: AsyncEngine
) -> None:
    match = await MatchWriter.create(engine, MATCH)
    await match.change()
    async with sse(api_url, f"/v1/matches/{MATCH}/stream") as stream:
        await stream.next()
        await match.change()
        seen = (await stream.until_version(2))[-1]
    assert seen.id == "2"

    for _ in range(3):
        await match.change(entries=2)
    async with sse(api_url, f"/v1/matches/{MATCH}/stream", headers={"Last-Event-ID": "2"}) as stream:
        resumed = await stream.next()
        assert resumed.id == str(match.version) == "8"
        assert resumed.body["previous"] == 2
        assert [entry["seq"] for entry in resumed.body["entries"]] == [3, 4, 5, 6, 7, 8]

        await match.change()
        after = await stream.until_version(9)
    assert_no_gap(after, 9, 9)


async def test_resuming_at_the_current_version_sends_the_value_with_no_entries(
    api_url: str, engine: AsyncEngine
) -> None:
    match = await MatchWriter.create(engine, MATCH)
    await match.change()
    async with sse(api_url, f"/v1/matches/{MATCH}/stream", headers={"Last-Event-ID": "1"}) as stream:
        first = await stream.next()
    assert (first.id, first.body["previous"], first.body["entries"]) == ("1", 1, [])


async def test_unknown_match_is_a_json_404(api_url: str, app: FastAPI) -> None:
    async with httpx.AsyncClient(base_url=api_url) as client:
        response = await client.get("/v1/matches/424242/stream")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "match_not_found"
    live: LiveRuntime = app.state.live
    assert live.hub.subscribers == 0
    assert live.limits.open == 0


async def test_a_bad_last_event_id_is_a_validation_error(api_url: str, engine: AsyncEngine) -> None:
    await MatchWriter.create(engine, MATCH)
    async with httpx.AsyncClient(base_url=api_url) as client:
        response = await client.get(f"/v1/matches/{MATCH}/stream", headers={"Last-Event-ID": "soon"})
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "validation_error"


async def test_a_quiet_stream_gets_keep_alive_comments(api_url: str, engine: AsyncEngine) -> None:
    """The tests' keep-alive interval is 0.3 s: a quiet stream shows comment lines."""
    await MatchWriter.create(engine, MATCH)
    async with sse(api_url, f"/v1/matches/{MATCH}/stream") as stream:
        await stream.next()

        async def kept_alive() -> bool:
            return stream.comments >= 2

        await eventually(kept_alive)


async def test_a_closed_stream_releases_its_subscription(
    api_url: str, app: FastAPI, engine: AsyncEngine
) -> None:
    await MatchWriter.create(engine, MATCH)
    live: LiveRuntime = app.state.live
    async with sse(api_url, f"/v1/matches/{MATCH}/stream") as stream:
        await stream.next()
        assert live.hub.subscribers == 1

    async def released() -> bool:
        return live.hub.subscribers == 0 and live.limits.open == 0

    await eventually(released)


async def test_a_client_that_stops_reading_is_dropped_and_the_others_keep_up(
    live_settings: Settings, engine: AsyncEngine
) -> None:
    """A raw socket with a tiny receive buffer that never reads: its queue (4 changes here) fills
    and it is dropped, its connection cut and its slot freed (before the fix its response stayed
    stuck in a send, holding the connection, until the client closed), while a reading client
    gets every version."""
    match = await MatchWriter.create(engine, MATCH)
    app = create_app(live_settings.model_copy(update={"live_client_queue": 4}))
    async with serve(app) as api_url:
        await _stall_one_and_read_one(api_url, app.state.live, match)


async def _stall_one_and_read_one(api_url: str, live: LiveRuntime, match: MatchWriter) -> None:
    port = int(api_url.rsplit(":", 1)[1])
    stalled = socket.socket()
    stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
    stalled.setblocking(False)
    loop = asyncio.get_running_loop()
    try:
        await loop.sock_connect(stalled, ("127.0.0.1", port))
        request = f"GET /v1/matches/{MATCH}/stream HTTP/1.1\r\nHost: test\r\n\r\n"
        await loop.sock_sendall(stalled, request.encode())
        async with sse(api_url, f"/v1/matches/{MATCH}/stream") as reading:
            await reading.next()
            await eventually(lambda: _equals(live.hub.subscribers, 2))
            # Big changes (many entries, each with a padded body) fill the socket buffers quickly;
            # how many it takes depends on the kernel's buffers and on how the hub coalesces.
            for _ in range(400):
                await match.change(entries=20, padding=2000)
                if live.hub.subscribers == 1:
                    break
            events = await reading.until_version(match.version, within=60)
            assert live.hub.subscribers == 1, "the stalled client was never dropped"
            # Its socket is still open and unread: the server ends the connection, freeing its slot,
            # and lets go of the socket itself (reset, not left waiting to flush to a non-reader).
            await eventually(lambda: _equals(live.limits.open, 1))
            await eventually(lambda: server_let_go(port, stalled))
    finally:
        stalled.close()
    assert_no_gap(events, 1, match.version)


async def _equals(actual: int, expected: int) -> bool:
    return actual == expected


async def test_a_cached_value_older_than_an_announced_change_is_not_served(
    api_url: str, app: FastAPI, engine: AsyncEngine, redis_url: str
) -> None:
    """Redis still holds version 1 while version 2 has been committed and announced: the first
    value comes from Postgres, or the client would sit at 1 until the next change."""
    match = await MatchWriter.create(engine, MATCH)
    await match.change()
    redis = aioredis.Redis.from_url(redis_url)
    try:
        cached = await refresh(engine, redis, MATCH)
    finally:
        await redis.aclose()
    assert cached is not None and cached.version == 1
    await match.change()
    live: LiveRuntime = app.state.live
    await eventually(lambda: _equals(live.hub.announced(MATCH), 2))

    async with sse(api_url, f"/v1/matches/{MATCH}/stream") as stream:
        first = await stream.next()
    assert first.body["version"] == 2
