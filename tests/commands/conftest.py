from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from temporalio.client import Client

from scoreline.settings import Settings
from tests.commands.harness import Road, road_settings, running_api, spread_fixture_ids
from tests.support.worker import running_worker


@pytest.fixture
async def road(settings: Settings, database_url: str, temporal_client: Client) -> AsyncIterator[Road]:
    """API + worker on this test's database and task queue."""
    await spread_fixture_ids(database_url)
    tuned = road_settings(settings)
    async with running_worker(temporal_client, tuned), running_api(tuned, database_url) as road:
        yield road
