"""What the API asks of the read model: Redis first, Postgres whenever Redis cannot answer.

A cached value is served as it is, unless the caller knows a newer version was committed (the API's
outbox listener hears of every commit, at the latest by its 5 s safety read): then, like on a miss,
a Redis failure or a damaged entry, Postgres answers. So a fan never gets a copy more than a
moment behind Postgres. The cached events page is used only when it was built at the version of the cached match, so a client
that reads a match and then its events never sees the two from different versions of the cache.
"""

from __future__ import annotations

from collections.abc import Collection

import redis.asyncio as aioredis
from sqlalchemy.ext.asyncio import AsyncEngine

from scoreline.readmodel.cache import read_events, read_match
from scoreline.readmodel.ordering import EventCursor
from scoreline.readmodel.queries import (
    DEFAULT_EVENTS_LIMIT,
    fixture_exists,
    list_matches,
    load_events,
    load_match,
)
from scoreline.readmodel.views import EventPage, MatchList, MatchView


async def get_match(
    engine: AsyncEngine, redis: aioredis.Redis, fixture_id: int, not_older_than: int = 0
) -> MatchView | None:
    """The match view, from the cache if it holds one at least at version `not_older_than`; None if
    the fixture does not exist."""
    cached = await read_match(redis, fixture_id)
    if cached is not None and cached.version >= not_older_than:
        return cached
    async with engine.connect() as conn:
        return await load_match(conn, fixture_id)


async def get_matches(engine: AsyncEngine, states: Collection[str] | None, limit: int) -> MatchList:
    """Matches in `states` by kick-off, from Postgres: a list spans matches no single key covers."""
    async with engine.connect() as conn:
        return MatchList(matches=await list_matches(conn, states, limit))


async def get_events(
    engine: AsyncEngine,
    redis: aioredis.Redis,
    fixture_id: int,
    limit: int = DEFAULT_EVENTS_LIMIT,
    before: EventCursor | None = None,
    not_older_than: int = 0,
) -> EventPage | None:
    """A page of events in match-time order; None if the fixture does not exist.

    Only the default page (no cursor, default limit) is cached: it is what every live screen asks
    for, while older pages are read once and are cheap keyset reads.
    """
    if before is None and limit == DEFAULT_EVENTS_LIMIT:
        cached = await _cached_default_page(redis, fixture_id, not_older_than)
        if cached is not None:
            return cached
    async with engine.connect() as conn:
        page = await load_events(conn, fixture_id, limit, before)
        # Events exist only for a known fixture, so the existence check is needed only when empty.
        if not page.events and not await fixture_exists(conn, fixture_id):
            return None
        return page


async def _cached_default_page(
    redis: aioredis.Redis, fixture_id: int, not_older_than: int
) -> EventPage | None:
    match = await read_match(redis, fixture_id)
    if match is None or match.version < not_older_than:
        return None
    events = await read_events(redis, fixture_id)
    if events is None or events.version != match.version:
        return None
    return events.page
