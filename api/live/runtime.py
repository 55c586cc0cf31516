"""The live machinery of one API process, started and stopped by the app's lifespan.

One outbox listener (one LISTEN connection) feeds one hub; the relay, when enabled, shares the
hub's changes with the other processes; the limits cap the live connections the process serves.
Routes reach all of it, and the read model handles they need for first values, through `LiveDep`.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Annotated

import redis.asyncio as aioredis
from fastapi import Depends
from sqlalchemy.ext.asyncio import AsyncEngine
from starlette.requests import HTTPConnection

from api.live.changes import LiveValue, current_value, load_value
from api.live.hub import LiveHub
from api.live.limits import ConnectionLimits
from api.live.relay import RedisRelay, relay_channel
from scoreline.db.urls import asyncpg_dsn
from scoreline.outbox.listener import OutboxListener
from scoreline.readmodel.queries import MAX_MATCHES_LIMIT, load_match
from scoreline.readmodel.reads import get_match, get_matches
from scoreline.readmodel.states import LIVE_STATES
from scoreline.readmodel.views import MatchView
from scoreline.settings import Settings

RELAY_CONNECTIONS = 4
"""The relay's subscription, its publisher, and room for a reconnect overlapping either."""


@dataclass
class LiveRuntime:
    settings: Settings
    engine: AsyncEngine
    redis: aioredis.Redis
    hub: LiveHub
    listener: OutboxListener
    relay: RedisRelay | None
    limits: ConnectionLimits
    _first_reads: dict[int, asyncio.Task[MatchView | None]] = field(default_factory=dict, init=False)
    """The Postgres read in flight for a match the hub has not heard of: a reconnect storm waits on it."""

    @classmethod
    async def start(cls, settings: Settings, engine: AsyncEngine, redis: aioredis.Redis) -> LiveRuntime:
        """Subscribe the hub at the outbox's current end, then start listening (and relaying).

        Does not fail when Postgres or Redis is down: both are retried in the background.
        """
        hub = LiveHub(engine, settings.live_client_queue)
        listener = OutboxListener(
            asyncpg_dsn(settings.require_database_url()),
            engine,
            safety_interval=settings.outbox_safety_interval,
            batch_size=settings.outbox_batch,
        )
        await listener.subscribe(hub.on_outbox, name="live-hub")
        listener.start()
        relay = None
        if settings.live_redis_fanout:
            # Its own small client: the subscription holds a connection for good, and a read
            # burst that empties the shared pool must not hold up relaying.
            relay = RedisRelay(
                aioredis.Redis.from_url(settings.require_redis_url(), max_connections=RELAY_CONNECTIONS),
                hub.deliver,
                relay_channel(settings.require_database_url()),
            )
            hub.publish = relay.publish
            relay.start()
        limits = ConnectionLimits(settings.live_max_connections, settings.live_max_connections_per_client)
        return cls(settings, engine, redis, hub, listener, relay, limits)

    async def stop(self) -> None:
        if self.relay is not None:
            await self.relay.stop()
        await self.listener.stop()

    @property
    def keepalive(self) -> float:
        return self.settings.live_keepalive_interval.total_seconds()

    async def first_value(self, fixture_id: int, last_event_id: int | None) -> LiveValue | None:
        """What a match stream starts with; None if there is no such match.

        A new client gets the current value (`current_view`). A client resuming after
        `last_event_id` gets it from Postgres with the entries it missed, in one snapshot: the cache
        could be behind the version the client already has.
        """
        if last_event_id is not None:
            return await load_value(self.engine, fixture_id, last_event_id)
        view = await self.current_view(fixture_id)
        return None if view is None else current_value(view)

    async def current_view(self, fixture_id: int) -> MatchView | None:
        """The match a new screen starts with; None if there is no such match.

        Invariant: it is never older than a version this process has heard of for the match, so a
        screen that reconnects here never goes back. The Redis copy is served only when it is at
        least the hub's newest version of the match (`LiveHub.announced`); else Postgres answers.
        The copy can be behind: it is refreshed after a commit, and that refresh can fail (worker
        paused, Redis down). The hub hears only of changes committed after the process started,
        so a match it has not heard of yet is read from Postgres, and the version read becomes its
        floor: one Postgres read per match per process (screens arriving meanwhile wait on it),
        after which Redis serves once it is as new.
        """
        if not self.hub.knows(fixture_id):
            read = self._first_reads.get(fixture_id)
            if read is None:
                read = asyncio.create_task(self._read_floor(fixture_id))
                self._first_reads[fixture_id] = read
                read.add_done_callback(lambda _: self._first_reads.pop(fixture_id, None))
            return await asyncio.shield(read)
        return await get_match(self.engine, self.redis, fixture_id, self.hub.announced(fixture_id))

    async def _read_floor(self, fixture_id: int) -> MatchView | None:
        async with self.engine.connect() as conn:
            view = await load_match(conn, fixture_id)
        if view is not None:
            self.hub.heard(fixture_id, view.version)
        return view

    async def live_values(self) -> list[LiveValue]:
        """The current value of every live match, by kick-off."""
        listed = await get_matches(self.engine, LIVE_STATES, MAX_MATCHES_LIMIT)
        return [current_value(view) for view in listed.matches]


def _live(connection: HTTPConnection) -> LiveRuntime:
    live: LiveRuntime = connection.app.state.live
    return live


LiveDep = Annotated[LiveRuntime, Depends(_live)]
