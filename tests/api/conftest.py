from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from scoreline.settings import Settings
from tests.commands.harness import Road, running_api


@pytest.fixture
async def api(settings: Settings, database_url: str) -> AsyncIterator[Road]:
    """The API served on a real port with an operator token; no worker (these routes need none)."""
    async with running_api(settings, database_url) as road:
        yield road
