"""The hot copy in Redis: the latest match view and its recent events, written only when newer.

Keys (both hashes, both expiring after `CACHE_TTL` so a match nobody refreshes any more drops out):

- `match:{id}` — `version`, `stamp` (the view's `updated_at` in microseconds), `body` (MatchView JSON).
- `match:{id}:events` — `version`, `stamp` (always 0), `body` (the default EventPage JSON).

Writes go through one Lua compare-and-set, so they are atomic on the server: a write lands only if
its (version, stamp) is greater than the stored one. A late or retried writer can therefore never put
an older view back. The stamp matters for the match view only: the clock (`minute`) and fixture facts
move without a new log entry, so the version alone would freeze them until the next event.

`refresh` (after each ingest commit) only ever moves the cache forwards; `rebuild` (replay, repair)
drops it first, so it can also bring it back down to what Postgres holds.

Redis is never the source of truth. Reads, `refresh` and `rebuild` log and swallow every Redis failure (and a
damaged entry); a read then reports a miss and the caller reads Postgres.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import redis.asyncio as aioredis
from pydantic import ValidationError
from redis.exceptions import RedisError
from sqlalchemy.ext.asyncio import AsyncEngine

from scoreline.logging import get_logger
from scoreline.readmodel.queries import load_events, load_match
from scoreline.readmodel.views import EventPage, MatchView

log = get_logger(__name__)

CACHE_TTL = timedelta(hours=6)
"""Longer than any match, so a live match never expires between two refreshes."""
READ_TIMEOUT = 0.5
"""Seconds; a stalled Redis costs a read this much before it falls back to Postgres."""
WRITE_TIMEOUT = 2.0
"""Seconds; bounds how long a stalled Redis can hold up the ingest that calls `refresh`."""

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

# KEYS[1] = key; ARGV = version, stamp, body, ttl seconds. Returns 1 if written, 0 if not newer.
_STORE_IF_NEWER = """
local stored = redis.call('HMGET', KEYS[1], 'version', 'stamp')
if stored[1] then
  local version, incoming = tonumber(stored[1]), tonumber(ARGV[1])
  if version > incoming then return 0 end
  if version == incoming and tonumber(stored[2] or '0') >= tonumber(ARGV[2]) then return 0 end
end
redis.call('HSET', KEYS[1], 'version', ARGV[1], 'stamp', ARGV[2], 'body', ARGV[3])
redis.call('EXPIRE', KEYS[1], ARGV[4])
return 1
"""


@dataclass(frozen=True, slots=True)
class CachedEvents:
    """The cached default events page and the match version it was built at."""

    version: int
    page: EventPage


def match_key(fixture_id: int) -> str:
    return f"match:{fixture_id}"


def events_key(fixture_id: int) -> str:
    return f"match:{fixture_id}:events"


async def store_match_if_newer(redis: aioredis.Redis, view: MatchView) -> bool:
    """Store `view` unless the cached one is as new or newer; True if it was written.

    Raises:
        RedisError: Redis failed; callers that must not fail use `refresh`.
    """
    stamp = (view.updated_at - _EPOCH) // timedelta(microseconds=1)
    return await _store_if_newer(
        redis, match_key(view.fixture.id), view.version, stamp, view.model_dump_json()
    )


async def store_events_if_newer(
    redis: aioredis.Redis, fixture_id: int, version: int, page: EventPage
) -> bool:
    """Store the default events `page` built at `version` unless the cached one is as new; True if written.

    Raises:
        RedisError: Redis failed.
    """
    return await _store_if_newer(redis, events_key(fixture_id), version, 0, page.model_dump_json())


async def read_match(redis: aioredis.Redis, fixture_id: int) -> MatchView | None:
    """The cached view, or None on a miss, a Redis failure or a damaged entry."""
    key = match_key(fixture_id)
    try:
        async with asyncio.timeout(READ_TIMEOUT):
            body = await redis.hget(key, "body")
        return None if body is None else MatchView.model_validate_json(body)
    except (RedisError, TimeoutError, OSError, ValidationError) as error:
        _warn("cache.read_failed", key, error)
        return None


async def read_events(redis: aioredis.Redis, fixture_id: int) -> CachedEvents | None:
    """The cached default events page with its version, or None (miss, failure, damaged entry)."""
    key = events_key(fixture_id)
    try:
        async with asyncio.timeout(READ_TIMEOUT):
            version, body = await redis.hmget(key, ["version", "body"])
        if version is None or body is None:
            return None
        return CachedEvents(version=int(version), page=EventPage.model_validate_json(body))
    except (RedisError, TimeoutError, OSError, ValueError) as error:
        # ValueError covers pydantic's ValidationError and a version that is not a number.
        _warn("cache.read_failed", key, error)
        return None


async def refresh(engine: AsyncEngine, redis: aioredis.Redis, fixture_id: int) -> MatchView | None:
    """Reload a match and its default events page from Postgres and cache both if newer.

    Both are read in one REPEATABLE READ snapshot, so the cached page is exactly the one of the
    cached version. Called by the ingest after each commit. A Redis failure is logged and swallowed
    (the cache just stays behind until the next refresh); a Postgres failure raises, because then
    the caller's retry is what helps.

    Returns:
        The view as loaded, or None if the fixture does not exist (nothing is cached then).
    """
    return await _reload(engine, redis, fixture_id, drop_first=False)


async def refresh_view(engine: AsyncEngine, redis: aioredis.Redis, fixture_id: int) -> MatchView | None:
    """Reload only the match view (one statement) and cache it if newer.

    For a change that cannot touch the events page: a desk command logs no provider event, and
    the page lists provider events only. Failures as in `refresh`.
    """
    async with engine.connect() as conn:
        autocommit = await conn.execution_options(isolation_level="AUTOCOMMIT")
        view = await load_match(autocommit, fixture_id)
    if view is None:
        return None
    try:
        async with asyncio.timeout(WRITE_TIMEOUT):
            await store_match_if_newer(redis, view)
    except (RedisError, TimeoutError, OSError) as error:
        _warn("cache.refresh_failed", match_key(fixture_id), error)
    return view


async def rebuild(engine: AsyncEngine, redis: aioredis.Redis, fixture_id: int) -> MatchView | None:
    """Drop what Redis holds for a match, then cache it afresh from Postgres (replay, repair).

    `refresh` would keep a cached version higher than Postgres now has (say, after a replay rebuilt
    the log); this one starts over. The store after the drop is still compare-and-set, so an ingest
    refreshing at the same moment with a newer version keeps its write. Failures as in `refresh`.
    """
    return await _reload(engine, redis, fixture_id, drop_first=True)


async def _reload(
    engine: AsyncEngine, redis: aioredis.Redis, fixture_id: int, *, drop_first: bool
) -> MatchView | None:
    async with engine.connect() as conn:
        snapshot = await conn.execution_options(isolation_level="REPEATABLE READ", postgresql_readonly=True)
        async with snapshot.begin():
            view = await load_match(snapshot, fixture_id)
            page = None if view is None else await load_events(snapshot, fixture_id)
    try:
        async with asyncio.timeout(WRITE_TIMEOUT):
            if drop_first:
                await redis.delete(match_key(fixture_id), events_key(fixture_id))
            if view is not None and page is not None:
                await store_events_if_newer(redis, fixture_id, view.version, page)
                await store_match_if_newer(redis, view)
    except (RedisError, TimeoutError, OSError) as error:
        _warn("cache.refresh_failed", match_key(fixture_id), error)
    return view


async def _store_if_newer(redis: aioredis.Redis, key: str, version: int, stamp: int, body: str) -> bool:
    script = redis.register_script(_STORE_IF_NEWER)
    ttl = int(CACHE_TTL.total_seconds())
    written = await script(keys=[key], args=[version, stamp, body, ttl])
    return bool(written)


def _warn(event: str, key: str, error: BaseException) -> None:
    log.warning(event, key=key, error=f"{type(error).__name__}: {error}")
