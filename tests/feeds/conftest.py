"""Feed fixtures: this test's database and Redis, partners, a builder, the API over real HTTP.

The feed API and builder never touch Temporal, so nothing here starts it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import timedelta

import httpx
import pytest
import redis.asyncio as aioredis
from sqlalchemy.ext.asyncio import AsyncEngine

from api.app import create_app
from scoreline.feeds.builder import FeedBuilder
from scoreline.feeds.partners import create_partner
from scoreline.settings import Settings
from tests.feeds.changes import PREMIER_LEAGUE
from tests.support.http import serve


@pytest.fixture
def feed_settings(database_url: str, redis_url: str) -> Settings:
    return Settings(database_url=database_url, redis_url=redis_url, log_format="json")


@dataclass(frozen=True)
class Keys:
    """API keys of two partners: one granted the Premier League, one granted another competition."""

    premier: str
    other: str


@pytest.fixture
async def keys(engine: AsyncEngine) -> Keys:
    _, premier = await create_partner(engine, "premier-partner", [PREMIER_LEAGUE])
    _, other = await create_partner(engine, "other-partner", [PREMIER_LEAGUE + 1])
    return Keys(premier=premier, other=other)


@asynccontextmanager
async def serving(settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    async with serve(create_app(settings)) as url, httpx.AsyncClient(base_url=url) as client:
        yield client


@pytest.fixture
async def api(feed_settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    async with serving(feed_settings) as client:
        yield client


@asynccontextmanager
async def running_builder(
    engine: AsyncEngine, redis: aioredis.Redis, database_url: str, **options: timedelta | None
) -> AsyncIterator[FeedBuilder]:
    """A started builder that holds the lead (no sweep unless asked: tests name their documents)."""
    options.setdefault("sweep_interval", None)
    builder = FeedBuilder(engine, redis, database_url, **options)  # type: ignore[arg-type]
    builder.start()
    try:
        yield builder
    finally:
        await builder.stop()
