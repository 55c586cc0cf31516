"""Read-model fixtures: this test's database and Redis, an API served over real HTTP.

The API reads never touch Temporal, so these settings leave it out and the tests do not start it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from api.app import create_app
from scoreline.settings import Settings
from tests.readmodel.rows import MatchLog
from tests.support.http import serve


@pytest.fixture
def read_settings(database_url: str, redis_url: str) -> Settings:
    return Settings(database_url=database_url, redis_url=redis_url, log_format="json")


@pytest.fixture
async def api(read_settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    async with serve(create_app(read_settings)) as url, httpx.AsyncClient(base_url=url) as client:
        yield client


@pytest.fixture
async def match(engine: AsyncEngine) -> MatchLog:
    """Fixture 81000001, Arsenal vs Chelsea, with no log yet."""
    return await MatchLog.create(engine, 81000001)
