"""Two API processes on one database and Redis, one whose Redis is gone, and one started after
the newest commit.

Each app instance here is a whole API process's worth of machinery (its own engine, LISTEN
connection, hub and relay), served on its own port.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

import httpx
import pytest
import redis.asyncio as aioredis
from sqlalchemy.ext.asyncio import AsyncEngine

from api.app import create_app
from api.live import runtime
from api.live.runtime import LiveRuntime
from devkit.devstack.ports import free_port
from scoreline.readmodel.cache import read_match
from scoreline.readmodel.queries import load_match
from scoreline.readmodel.refresher import ReadCopyRefresher
from scoreline.settings import Settings
from tests.outbox.writer import MatchWriter
from tests.streams.clients import sse, websocket
from tests.support.http import serve

MATCH = 81000001


def _versions_and_seqs(bodies: Sequence[Mapping[str, Any]]) -> tuple[list[int], list[int]]:
    """The versions of a client's messages, and the seqs of their entries, in arrival order."""
    return [body["version"] for body in bodies], [e["seq"] for body in bodies for e in body["entries"]]


async def test_a_client_on_either_process_sees_every_change_once(
    live_settings: Settings, engine: AsyncEngine
) -> None:
    """Both processes hear the change (LISTEN) and relay it (Redis): each client gets it once."""
    match = await MatchWriter.create(engine, MATCH)
    one, two = create_app(live_settings), create_app(live_settings)
    async with (
        serve(one) as url_one,
        serve(two) as url_two,
        sse(url_one, f"/v1/matches/{MATCH}/stream") as on_one,
        sse(url_two, f"/v1/matches/{MATCH}/stream") as on_two,
    ):
        await on_one.next()
        await on_two.next()
        for _ in range(8):
            await match.change(entries=2)
        seen_one = [event.body for event in await on_one.until_version(match.version)]
        seen_two = [event.body for event in await on_two.until_version(match.version)]
        # Anything sent twice would be here by now, right behind the last version.
        await asyncio.sleep(0.5)
        assert on_one.events.empty() and on_two.events.empty()
    for seen in (seen_one, seen_two):
        versions, seqs = _versions_and_seqs(seen)
        assert versions == sorted(set(versions))
        assert seqs == list(range(1, match.version + 1))


async def test_a_process_that_cannot_listen_gets_the_change_through_redis(
    live_settings: Settings, engine: AsyncEngine
) -> None:
    """Process two's outbox listener is stopped: its SSE and WebSocket clients still get every
    change, relayed through Redis by process one (which has a follower, so it loads them)."""
    match = await MatchWriter.create(engine, MATCH)
    one, two = create_app(live_settings), create_app(live_settings)
    channel = f"match:{MATCH}"
    async with (
        serve(one) as url_one,
        serve(two) as url_two,
        sse(url_one, f"/v1/matches/{MATCH}/stream") as on_one,
        sse(url_two, f"/v1/matches/{MATCH}/stream") as on_two,
        websocket(url_two) as socket_two,
    ):
        two_live: LiveRuntime = two.state.live
        await two_live.listener.stop()
        assert two_live.relay is not None
        await asyncio.wait_for(two_live.relay.subscribed.wait(), 15)
        await on_one.next()
        await on_two.next()
        await socket_two.subscribe(channel)
        await socket_two.next()

        for _ in range(5):
            await match.change()
        sse_two = [event.body for event in await on_two.until_version(match.version)]
        ws_two = await socket_two.values_until(channel, match.version)
        await on_one.until_version(match.version)
    assert _versions_and_seqs(sse_two)[1] == [1, 2, 3, 4, 5]
    assert _versions_and_seqs(ws_two)[1] == [1, 2, 3, 4, 5]


async def test_with_redis_down_streams_work_from_postgres(
    live_settings: Settings, engine: AsyncEngine
) -> None:
    """Nobody listens on the Redis port: the first value comes from Postgres, changes from the
    outbox listener, and the client sees no error."""
    match = await MatchWriter.create(engine, MATCH)
    await match.change()
    down = live_settings.model_copy(update={"redis_url": f"redis://127.0.0.1:{free_port()}/0"})
    channel = f"match:{MATCH}"
    async with (
        serve(create_app(down)) as url,
        sse(url, f"/v1/matches/{MATCH}/stream") as stream,
        websocket(url) as socket,
    ):
        first = await stream.next()
        assert first.body["version"] == 1
        await socket.subscribe(channel, "scores")
        assert (await socket.next())["version"] == 1
        assert (await socket.next())["type"] == "score"
        await match.change(goal="home")
        await match.change()
        events = await stream.until_version(3)
        values = await socket.values_until(channel, 2)
        score = await socket.next()
    assert [entry["seq"] for event in events for entry in event.body["entries"]] == [2, 3]
    assert values[0]["match"]["score"] == {"home": 1, "away": 0}
    assert (score["type"], score["score"]) == ("score", {"home": 1, "away": 0})


@pytest.mark.parametrize("opened_first", ["websocket", "sse"])
async def test_a_process_started_after_the_newest_commit_shows_it_first(
    live_settings: Settings, engine: AsyncEngine, redis: aioredis.Redis, opened_first: str
) -> None:
    """A process started after the newest commit served a stale cached match as a reconnecting
    screen's first value."""
    await _cache_left_behind(engine, redis)

    app = create_app(live_settings)
    async with serve(app) as url:
        live: LiveRuntime = app.state.live
        assert live.hub.announced(MATCH) == 0, "the new process heard of the commit"
        # The second screen opened in the same process must not get the cached copy either.
        screens = [_first_on_socket, _first_on_stream]
        for first_value in screens if opened_first == "websocket" else screens[::-1]:
            shown = await first_value(url)
            assert (shown["version"], shown["match"]["score"]) == (2, {"home": 1, "away": 0})


async def _first_on_socket(url: str) -> dict[str, Any]:
    channel = f"match:{MATCH}"
    async with websocket(url) as socket:
        assert await socket.subscribe(channel) == [{"type": "subscribed", "channels": [channel]}]
        return await socket.next()


async def _first_on_stream(url: str) -> dict[str, Any]:
    async with sse(url, f"/v1/matches/{MATCH}/stream") as stream:
        body: dict[str, Any] = (await stream.next()).body
        return body


async def test_a_fans_read_from_a_process_started_after_the_newest_commit_shows_it(
    live_settings: Settings, engine: AsyncEngine, redis: aioredis.Redis
) -> None:
    """A fan's GET of a match from a process started after the newest commit read a stale cache."""
    await _cache_left_behind(engine, redis)

    async with serve(create_app(live_settings)) as url, httpx.AsyncClient(base_url=url) as http:
        shown = (await http.get(f"/v1/matches/{MATCH}")).json()
    assert (shown["version"], shown["score"]) == (2, {"home": 1, "away": 0})


async def _cache_left_behind(engine: AsyncEngine, redis: aioredis.Redis) -> None:
    """Version 1 cached; version 2 (a home goal) committed, but its refresh never ran (worker
    paused, Redis down)."""
    match = await MatchWriter.create(engine, MATCH)
    await match.change()
    refresher = ReadCopyRefresher(engine, redis)
    refresher.refresh_soon(MATCH)
    await refresher.aclose()
    await match.change(goal="home")
    cached = await read_match(redis, MATCH)
    assert cached is not None and cached.version == 1


async def test_a_reconnect_storm_on_a_fresh_process_reads_postgres_once(
    live_settings: Settings, engine: AsyncEngine, redis: aioredis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every screen reconnecting to a fresh process read the match from Postgres at once."""
    await _cache_left_behind(engine, redis)
    reads: list[int] = []

    async def counted(conn: Any, fixture_id: int) -> Any:
        reads.append(fixture_id)
        await asyncio.sleep(0.2)  # the read is still in flight when the others arrive
        return await load_match(conn, fixture_id)

    monkeypatch.setattr(runtime, "load_match", counted)
    async with serve(create_app(live_settings)) as url, httpx.AsyncClient(base_url=url) as http:
        shown = await asyncio.gather(*(http.get(f"/v1/matches/{MATCH}") for _ in range(50)))
    assert {(page.json()["version"], page.status_code) for page in shown} == {(2, 200)}
    assert reads == [MATCH]
