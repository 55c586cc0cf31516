"""Outbox fixtures: this test's database, an engine on it and a raw asyncpg DSN."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from scoreline.db.engine import create_engine
from scoreline.db.urls import asyncpg_dsn


@pytest.fixture
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    engine = create_engine(database_url, pool_size=4)
    try:
        yield engine
    finally:
        await engine.dispose()


@pytest.fixture
def dsn(database_url: str) -> str:
    return asyncpg_dsn(database_url)
