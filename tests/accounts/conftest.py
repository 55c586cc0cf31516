"""Accounts fixtures: this test's database, a provider fixture to give desks, the API over real HTTP.

The routes here never touch Temporal, so the settings leave it out and these tests do not start it.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from scoreline.db.tables import fixture

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
