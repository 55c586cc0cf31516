"""The console's Webhooks panel in a real browser: a paused endpoint with its lag, resumed from it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta

import pytest
from playwright.async_api import Browser, expect
from sqlalchemy.ext.asyncio import AsyncEngine

from api.app import create_app
from scoreline.accounts.store import create_operator
from scoreline.feeds.partners import create_partner
from scoreline.settings import Settings
from tests.readmodel.rows import MatchLog
from tests.support.http import serve
from tests.web.browser import ConsoleScreen
from tests.webhooks import delivery_rows

MATCH = 83_000_001
HOOK = "https://hooks.acme.example/scores"


@pytest.fixture
async def api_url(database_url: str, redis_url: str) -> AsyncIterator[str]:
    """The API serving the console (no worker: the panel reads and resumes endpoints only)."""
    async with serve(create_app(Settings(database_url=database_url, redis_url=redis_url))) as url:
        yield url


async def test_the_panel_shows_a_paused_endpoint_with_its_lag_and_resumes_it(
    engine: AsyncEngine, api_url: str, browser: Browser
) -> None:
    """Paused after failures, owed two changes ten minutes old: the row says so, and Resume makes it active."""
    await create_partner(engine, "acme", [8])
    await MatchLog.create(engine, MATCH)
    endpoint_id = await delivery_rows.endpoint(engine, "acme", HOOK, paused_reason="failing for 24 h")
    await delivery_rows.messages(
        engine, endpoint_id, MATCH, [1, 2], delivered=False, committed_ago=timedelta(minutes=10)
    )
    await delivery_rows.attempt(engine, endpoint_id, MATCH, 1, status=503)
    _, token = await create_operator(engine, "ops")

    console = await ConsoleScreen.open(browser)
    try:
        await console.sign_in(api_url, token)
        row = console.page.locator(f"#webhooks tr[data-endpoint='{endpoint_id}']")
        await expect(row.locator(".partner")).to_have_text("acme")
        await expect(row.locator(".url")).to_have_text(HOOK)
        await expect(row.locator(".state")).to_have_text("paused: failing for 24 h")
        await expect(row.locator(".lag")).to_have_text("10 min")
        await expect(row.locator(".owed")).to_have_text("2")
        await expect(row.locator(".failure")).to_contain_text("HTTP 503")
        await console.screenshot("console-webhooks")

        await row.get_by_role("button", name=f"Resume {HOOK}").click()
        await expect(row.locator(".state")).to_have_text("active")
        await expect(row.get_by_role("button")).to_have_count(0)
        await expect(row.locator(".note")).to_have_text("Resumed: sending from the first undelivered change.")
        await console.page.reload()
        await expect(
            console.page.locator(f"#webhooks tr[data-endpoint='{endpoint_id}'] .state")
        ).to_have_text("active")
        assert console.errors == []
    finally:
        await console.close()
