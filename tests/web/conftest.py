from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from playwright.async_api import Browser, async_playwright
from temporalio.client import Client

from scoreline.settings import Settings
from tests.commands.harness import Road, road_settings, running_api, spread_fixture_ids
from tests.support.worker import running_worker
from tests.web.browser import CHROMIUM


@pytest.fixture(scope="session")
async def browser() -> AsyncIterator[Browser]:
    """One headless Debian Chromium for the session; each test opens its own contexts."""
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: run `make browser-tools` (or set SCORELINE_CHROMIUM)")
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(executable_path=str(CHROMIUM))
        try:
            yield launched
        finally:
            await launched.close()


@pytest.fixture
async def road(settings: Settings, database_url: str, temporal_client: Client) -> AsyncIterator[Road]:
    """API (serving the web apps) + worker on this test's database and task queue."""
    await spread_fixture_ids(database_url)
    tuned = road_settings(settings)
    async with running_worker(temporal_client, tuned), running_api(tuned, database_url) as road:
        yield road
