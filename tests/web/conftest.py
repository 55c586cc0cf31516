from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from playwright.async_api import Browser, async_playwright

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
