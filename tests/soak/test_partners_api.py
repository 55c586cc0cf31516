"""The soak's partners against a real API and feed builder, while the matches move."""

from __future__ import annotations

import asyncio
import random
from datetime import timedelta
from pathlib import Path

import redis.asyncio as aioredis
from sqlalchemy.ext.asyncio import AsyncEngine

from api.app import create_app
from devkit.soak.model import SoakFixtures, SoakTargets
from devkit.soak.partners import PartnerPart
from scoreline.db.tables import fixture
from scoreline.feeds.builder import FeedBuilder
from scoreline.settings import Settings
from tests.outbox.writer import MatchWriter
from tests.support.http import serve

MATCHES = {81000001: 8, 81000002: 564}
"""Each match's competition (its league): partners are granted seeded subsets of them."""


async def _create(engine: AsyncEngine, fixture_id: int, league_id: int) -> MatchWriter:
    match = await MatchWriter.create(engine, fixture_id)
    async with engine.begin() as conn:
        await conn.execute(fixture.update().where(fixture.c.id == fixture_id).values(league_id=league_id))
    return match


async def test_partners_follow_every_document_to_its_final_version(
    database_url: str, redis_url: str, engine: AsyncEngine, redis: aioredis.Redis
) -> None:
    """Partners poll while the builder publishes new versions: they revalidate (304s), never go
    back, and the check finds each document at the version Postgres saved last."""
    matches = [await _create(engine, fixture_id, league) for fixture_id, league in MATCHES.items()]
    settings = Settings(database_url=database_url, redis_url=redis_url, log_format="json")
    builder = FeedBuilder(engine, redis, database_url, sweep_interval=timedelta(seconds=1))
    builder.start()
    try:
        async with serve(create_app(settings)) as url:
            targets = SoakTargets((url,), "", "", database_url, Path("unused"))
            part = PartnerPart(targets, SoakFixtures(tuple(MATCHES), ()), random.Random(3), partners=3)
            stop = asyncio.Event()
            running = asyncio.create_task(part.run(stop))
            for _ in range(4):
                await asyncio.sleep(1.5)
                for match in matches:
                    await match.change(goal="home")
            await asyncio.sleep(5)
            stop.set()
            await running
            result = await part.check()
    finally:
        await builder.stop()
    assert result.violations == ()
    assert result.figures["partners"] == 3
    assert result.figures["not_modified"] > 0
    assert result.checked >= 3
