"""Live-stream fixtures: this test's database and Redis, and the API served over real HTTP.

The keep-alive is short so a quiet stream shows its comments quickly; the outbox safety read stays
at its production 5 s, so a change arriving sooner than that came through NOTIFY (or the relay).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta

import pytest
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncEngine

from api.app import create_app
from scoreline.db.engine import create_engine
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
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    engine = create_engine(database_url, pool_size=4)
    try:
        yield engine
    finally:
        await engine.dispose()


@pytest.fixture
def app(live_settings: Settings) -> FastAPI:
    return create_app(live_settings)


@pytest.fixture
async def api_url(app: FastAPI) -> AsyncIterator[str]:
    async with serve(app) as url:
        yield url
