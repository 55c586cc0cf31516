"""Accounts fixtures: this test's database, a provider fixture to give desks, the API over real HTTP.

The routes here never touch Temporal, so the settings leave it out and these tests do not start it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from api.app import create_app
from scoreline.db.tables import fixture
from scoreline.settings import Settings
from tests.support.http import serve

PROVIDER_FIXTURE = 81000001
OTHER_PROVIDER_FIXTURE = 81000002


@pytest.fixture
async def provider_fixtures(engine: AsyncEngine) -> tuple[int, int]:
    """Two provider fixtures (no squads), the way the ingest leaves them."""
    async with engine.begin() as conn:
        for fixture_id, name in (
            (PROVIDER_FIXTURE, "Arsenal vs Chelsea"),
            (OTHER_PROVIDER_FIXTURE, "Leeds vs Hull"),
        ):
            await conn.execute(
                fixture.insert().values(
                    id=fixture_id,
                    sport="football",
                    name=name,
                    starting_at=datetime(2026, 3, 14, 15, tzinfo=UTC),
                    home_team={"id": 19, "name": name.split(" vs ")[0], "short_code": None, "image": None},
                    away_team={"id": 18, "name": name.split(" vs ")[1], "short_code": None, "image": None},
                )
            )
    return PROVIDER_FIXTURE, OTHER_PROVIDER_FIXTURE


@pytest.fixture
async def api(database_url: str, redis_url: str) -> AsyncIterator[httpx.AsyncClient]:
    settings = Settings(database_url=database_url, redis_url=redis_url, log_format="json")
    async with serve(create_app(settings)) as url, httpx.AsyncClient(base_url=url) as client:
        yield client
