"""The builder's gauges (`scoreline_feed_staleness_seconds`, its outbox lag, who leads), on real rows.

They used to be set only at the end of a finished cycle: a builder that lost the lead while a
change waited kept reporting that age for good, and one stuck mid-cycle kept its last value.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

import redis.asyncio as aioredis
from sqlalchemy.ext.asyncio import AsyncEngine

from scoreline.feeds.builder import FeedBuilder
from tests.feeds.changes import MATCH, score
from tests.feeds.conftest import running_builder
from tests.readmodel.rows import MatchLog
from tests.support.waiting import eventually


async def _is_set(event: asyncio.Event) -> bool:
    return event.is_set()


async def test_a_waiting_change_ages_until_published_and_a_standby_reports_nothing(
    engine: AsyncEngine, redis: aioredis.Redis, database_url: str
) -> None:
    log = await MatchLog.create(engine, MATCH)
    gather = {"gather": timedelta(seconds=2), "max_hold": timedelta(seconds=4)}
    async with running_builder(engine, redis, database_url, **gather) as leader:
        await eventually(lambda: _is_set(leader.leading))
        assert leader.gauges().leading and leader.gauges().staleness == 0
        await score(log, 1, 0)

        async def waiting() -> float | None:
            staleness = leader.gauges().staleness
            return staleness if staleness > 0 else None

        first = await eventually(waiting)
        await asyncio.sleep(0.5)
        assert leader.gauges().staleness > first  # a held change keeps ageing

        async def published() -> bool:
            return leader.gauges().staleness == 0

        await eventually(published)
        standby = FeedBuilder(engine, redis, database_url, sweep_interval=None)
        standby.start()
        try:
            await asyncio.sleep(0.5)
            gauges = standby.gauges()
            assert (gauges.leading, gauges.staleness, gauges.lag) == (False, 0.0, 0.0)
        finally:
            await standby.stop()
    assert not leader.gauges().leading  # stopped: it leads no more and reports nothing
