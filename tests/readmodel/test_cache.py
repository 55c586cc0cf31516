"""The Redis hot copy: served while current, never moved backwards, never needed for an answer."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from datetime import timedelta

import httpx
import pytest
import redis.asyncio as aioredis
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncEngine
from structlog.testing import capture_logs

from api.app import create_app
from devkit.devstack.ports import free_port
from scoreline.db.tables import match_event, scoreboard
from scoreline.readmodel.cache import (
    CACHE_TTL,
    events_key,
    match_key,
    read_events,
    read_match,
    rebuild,
    refresh,
    store_events_if_newer,
    store_match_if_newer,
)
from scoreline.readmodel.refresher import ReadCopyRefresher
from scoreline.readmodel.views import EventPage
from scoreline.settings import Settings
from tests.readmodel.rows import MatchLog
from tests.support.http import serve

FIXTURE = 81000001


async def _tamper(engine: AsyncEngine, *, home: int, player_name: str) -> None:
    """Change Postgres behind the cache's back: same version, different content."""
    async with engine.begin() as conn:
        await conn.execute(
            update(scoreboard).where(scoreboard.c.fixture_id == FIXTURE).values(home_score=home)
        )
        await conn.execute(
            update(match_event)
            .where(match_event.c.fixture_id == FIXTURE)
            .values(body=match_event.c.body + {"player_name": player_name})
        )


async def test_api_serves_from_redis_after_refresh(
    api: httpx.AsyncClient, engine: AsyncEngine, redis: aioredis.Redis, match: MatchLog
) -> None:
    """After `refresh` the match and default events come from Redis until the next refresh moves them."""
    await match.event(1, "goal", 12, player=(7, "Saka"))
    await match.board("live_first_half", 1, 0, minute=12)
    refreshed = await refresh(engine, redis, FIXTURE)
    assert refreshed is not None and refreshed.version == 1
    await api.get(f"/v1/matches/{FIXTURE}")  # a process reads a match it never heard of from Postgres
    await _tamper(engine, home=5, player_name="Tampered")

    cached_match = (await api.get(f"/v1/matches/{FIXTURE}")).json()
    cached_events = (await api.get(f"/v1/matches/{FIXTURE}/events")).json()
    # A cursor or another limit always reads Postgres, which shows the change.
    fresh_events = (await api.get(f"/v1/matches/{FIXTURE}/events?limit=50")).json()

    assert cached_match["score"] == {"home": 1, "away": 0}
    assert cached_events["events"][0]["player"]["name"] == "Saka"
    assert fresh_events["events"][0]["player"]["name"] == "Tampered"

    await match.event(2, "goal", 30, side="away")
    await match.board("live_first_half", 5, 1, minute=30)
    await refresh(engine, redis, FIXTURE)

    moved = (await api.get(f"/v1/matches/{FIXTURE}")).json()
    events = (await api.get(f"/v1/matches/{FIXTURE}/events")).json()["events"]
    assert (moved["version"], moved["score"]) == (2, {"home": 5, "away": 1})
    assert [(e["provider_event_id"], e["player"] and e["player"]["name"]) for e in events] == [
        (1, "Tampered"),
        (2, None),
    ]


async def test_cached_events_of_another_version_are_not_served(
    api: httpx.AsyncClient, engine: AsyncEngine, redis: aioredis.Redis, match: MatchLog
) -> None:
    """When the cached events page lags the cached match, events are read from Postgres."""
    await match.event(1, "goal", 12, player=(7, "Saka"))
    await match.board("live_first_half", 1, 0, minute=12)
    view = await refresh(engine, redis, FIXTURE)
    assert view is not None
    await _tamper(engine, home=1, player_name="From Postgres")
    newer = view.model_copy(update={"version": view.version + 1})
    assert await store_match_if_newer(redis, newer)

    events = (await api.get(f"/v1/matches/{FIXTURE}/events")).json()["events"]

    assert events[0]["player"]["name"] == "From Postgres"


async def test_clock_moves_the_cache_without_a_new_version(
    engine: AsyncEngine, redis: aioredis.Redis, match: MatchLog
) -> None:
    """The minute changes with no log entry; a later refresh at the same version still stores it."""
    await match.state_entry("live_first_half")
    await match.board("live_first_half", 0, 0, minute=10)
    await refresh(engine, redis, FIXTURE)
    await match.board("live_first_half", 0, 0, minute=11)
    await refresh(engine, redis, FIXTURE)

    cached = await read_match(redis, FIXTURE)

    assert cached is not None
    assert (cached.version, cached.minute) == (1, 11)


async def test_an_older_view_never_replaces_a_newer_one(
    engine: AsyncEngine, redis: aioredis.Redis, match: MatchLog
) -> None:
    """Compare-and-set on (version, updated_at): older loses, equal is a no-op, newer wins."""
    await match.state_entry("live_first_half")
    await match.board("live_first_half", 0, 0, minute=1)
    view = await refresh(engine, redis, FIXTURE)
    assert view is not None
    v5 = view.model_copy(update={"version": 5, "minute": 50})
    v4_later = view.model_copy(update={"version": 4, "updated_at": view.updated_at + timedelta(hours=1)})
    v5_earlier = v5.model_copy(update={"minute": 49, "updated_at": view.updated_at - timedelta(seconds=1)})

    assert await store_match_if_newer(redis, v5)
    assert not await store_match_if_newer(redis, v4_later)
    assert not await store_match_if_newer(redis, v5_earlier)
    assert not await store_match_if_newer(redis, v5)
    assert await read_match(redis, FIXTURE) == v5

    # The refresh that follows reads version 1 from Postgres: it must not undo version 5 either.
    await refresh(engine, redis, FIXTURE)
    assert await read_match(redis, FIXTURE) == v5

    page = EventPage(events=[], next_before=None)
    assert await store_events_if_newer(redis, FIXTURE, 5, page)
    assert not await store_events_if_newer(redis, FIXTURE, 4, page.model_copy(update={"next_before": "x"}))
    assert not await store_events_if_newer(redis, FIXTURE, 5, page.model_copy(update={"next_before": "y"}))
    cached = await read_events(redis, FIXTURE)
    assert cached is not None
    assert (cached.version, cached.page) == (5, page)


async def test_racing_writers_leave_the_highest_version(
    engine: AsyncEngine, redis: aioredis.Redis, match: MatchLog
) -> None:
    """Forty writers racing in random order: the cache ends at the highest version, whatever the order."""
    await match.state_entry("live_first_half")
    await match.board("live_first_half", 0, 0)
    view = await refresh(engine, redis, FIXTURE)
    assert view is not None
    versions = list(range(1, 41))
    random.Random(3).shuffle(versions)

    await asyncio.gather(
        *(store_match_if_newer(redis, view.model_copy(update={"version": v})) for v in versions)
    )

    cached = await read_match(redis, FIXTURE)
    assert cached is not None and cached.version == 40


async def test_cache_entries_expire(engine: AsyncEngine, redis: aioredis.Redis, match: MatchLog) -> None:
    """Both keys carry the TTL, so matches nobody refreshes drop out of Redis."""
    await refresh(engine, redis, FIXTURE)

    for key in (match_key(FIXTURE), events_key(FIXTURE)):
        ttl = await redis.ttl(key)
        assert CACHE_TTL.total_seconds() - 60 < ttl <= CACHE_TTL.total_seconds()


async def test_damaged_entry_is_a_miss(
    api: httpx.AsyncClient, redis: aioredis.Redis, match: MatchLog
) -> None:
    """A cache entry that does not parse is logged and skipped; the API answers from Postgres."""
    await redis.hset(match_key(FIXTURE), mapping={"version": 9, "stamp": 0, "body": "{not json"})
    await redis.hset(events_key(FIXTURE), mapping={"version": "nine", "body": "[]"})

    with capture_logs() as logs:
        assert await read_match(redis, FIXTURE) is None
        assert await read_events(redis, FIXTURE) is None
    response = await api.get(f"/v1/matches/{FIXTURE}")

    assert [entry["event"] for entry in logs] == ["cache.read_failed", "cache.read_failed"]
    assert response.status_code == 200
    assert response.json()["version"] == 0


@pytest.fixture
def dead_redis_settings(read_settings: Settings) -> Settings:
    return read_settings.model_copy(update={"redis_url": f"redis://127.0.0.1:{free_port()}/0"})


@pytest.fixture
async def api_without_redis(dead_redis_settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    async with serve(create_app(dead_redis_settings)) as url, httpx.AsyncClient(base_url=url) as client:
        yield client


async def test_reads_answer_from_postgres_when_redis_is_down(
    api_without_redis: httpx.AsyncClient, match: MatchLog
) -> None:
    """Redis unreachable: match, events and list still answer 200 from Postgres."""
    await match.event(1, "goal", 12, player=(7, "Saka"))
    await match.board("live_first_half", 1, 0, minute=12)

    with capture_logs() as logs:
        one = await api_without_redis.get(f"/v1/matches/{FIXTURE}")
        events = await api_without_redis.get(f"/v1/matches/{FIXTURE}/events")
        listed = await api_without_redis.get("/v1/matches?state=live")
        missing = await api_without_redis.get("/v1/matches/424242")

    assert (one.status_code, one.json()["score"]) == (200, {"home": 1, "away": 0})
    assert (events.status_code, len(events.json()["events"])) == (200, 1)
    assert [m["fixture"]["id"] for m in listed.json()["matches"]] == [FIXTURE]
    assert missing.status_code == 404
    assert {entry["event"] for entry in logs} == {"cache.read_failed"}


async def test_refresh_survives_redis_down(
    engine: AsyncEngine, dead_redis_settings: Settings, match: MatchLog
) -> None:
    """`refresh` with Redis unreachable logs a warning and still returns the view: the ingest never fails on it."""
    await match.state_entry("live_first_half")
    await match.board("live_first_half", 0, 0)
    dead = aioredis.Redis.from_url(dead_redis_settings.require_redis_url())
    try:
        with capture_logs() as logs:
            view = await refresh(engine, dead, FIXTURE)
    finally:
        await dead.aclose()

    assert view is not None and view.version == 1
    assert [(entry["event"], entry["log_level"]) for entry in logs] == [("cache.refresh_failed", "warning")]


async def test_refresh_of_unknown_fixture_caches_nothing(engine: AsyncEngine, redis: aioredis.Redis) -> None:
    """Nothing to load, nothing to store."""
    assert await refresh(engine, redis, 424242) is None
    assert await redis.exists(match_key(424242), events_key(424242)) == 0


async def test_rebuild_brings_the_cache_back_to_postgres(
    engine: AsyncEngine, redis: aioredis.Redis, match: MatchLog
) -> None:
    """`rebuild` replaces a cached version higher than Postgres holds, which `refresh` never would."""
    await match.event(1, "goal", 12)
    await match.board("live_first_half", 1, 0)
    view = await refresh(engine, redis, FIXTURE)
    assert view is not None
    await store_match_if_newer(redis, view.model_copy(update={"version": 9}))
    await store_events_if_newer(redis, FIXTURE, 9, EventPage(events=[], next_before=None))

    rebuilt = await rebuild(engine, redis, FIXTURE)

    assert rebuilt == view
    assert await read_match(redis, FIXTURE) == view
    cached = await read_events(redis, FIXTURE)
    assert cached is not None
    assert (cached.version, [e.provider_event_id for e in cached.page.events]) == (1, [1])


async def test_rebuild_of_unknown_fixture_drops_its_keys(redis: aioredis.Redis, engine: AsyncEngine) -> None:
    """A fixture Postgres no longer has leaves nothing behind in Redis."""
    await redis.hset(match_key(424242), mapping={"version": 1, "stamp": 0, "body": "{}"})

    assert await rebuild(engine, redis, 424242) is None
    assert await redis.exists(match_key(424242), events_key(424242)) == 0


async def test_closing_the_refresher_runs_the_waiting_refreshes(
    engine: AsyncEngine, redis: aioredis.Redis, match: MatchLog
) -> None:
    """A refresh still waiting for company when the worker stops runs before it exits.

    Shutdown used to cancel it: the fans' copy stayed up to a second of desk commits behind, and a
    process started afterwards (which has heard of no newer version) kept serving it.
    """
    await match.state_entry("live_first_half")
    await match.board("live_first_half", 1, 0, minute=12)
    refresher = ReadCopyRefresher(engine, redis)
    refresher.refresh_soon(FIXTURE)
    await refresher.aclose()

    cached = await read_match(redis, FIXTURE)
    assert cached is not None and cached.version == match.seq
