"""Live-stream fixtures: this test's database and Redis, and the API served over real HTTP.

The keep-alive is short so a quiet stream shows its comments quickly; the outbox safety read stays
at its production 5 s, so a change arriving sooner than that came through NOTIFY (or the relay).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta

import pytest
from fastapi import FastAPI

from api.app import create_app
from scoreline.settings import Settings
from tests.support.http import serve


@pytest.fixture
def live_settings(database_url: str, redis_url: str) -> Settings:
    return Settings(
        database_url=database_url,
        redis_url=redis_url,
        log_format="json",
        live_keepalive_interval=timedelta(seconds=0.3),
    )


@pytest.fixture
def app(live_settings: Settings) -> FastAPI:
    return create_app(live_settings)


@pytest.fixture
async def api_url(app: FastAPI) -> AsyncIterator[str]:
    async with serve(app) as url:
        yield url
