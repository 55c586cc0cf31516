"""The API process's long-lived connections, opened in the lifespan and shared by every request."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import redis.asyncio as aioredis
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.client import Client

from api.metrics import ApiMetrics
from scoreline.settings import Settings
from scoreline.temporal.client import connect_from
from scoreline.temporal.match_runs import MatchRuns


@dataclass
class Resources:
    settings: Settings
    engine: AsyncEngine
    redis: aioredis.Redis
    commands_engine: AsyncEngine
    """The desk command route's own small pool, without a pre-ping: its one read per command is a
    single round trip, and a connection Postgres dropped fails that command as `try_again` (the
    desk resends) instead of costing every command three more round trips."""
    metrics: ApiMetrics
    _temporal: Client | None = field(default=None, init=False)
    _temporal_lock: asyncio.Lock = field(default_factory=asyncio.Lock, init=False)

    async def temporal(self) -> Client:
        """Connect on first use, so the API starts (and reports not-ready) while Temporal is down."""
        if self._temporal is None:
            async with self._temporal_lock:
                if self._temporal is None:
                    self._temporal = await connect_from(self.settings)
        return self._temporal

    async def match_runs(self) -> MatchRuns:
        """Starts or reaches `match-{id}` runs the one way there is (connects Temporal if needed)."""
        return MatchRuns.from_settings(await self.temporal(), self.engine, self.settings)
