"""Outbox fixtures: this test's database, an engine on it and a raw asyncpg DSN."""

from __future__ import annotations

import pytest

from scoreline.db.urls import asyncpg_dsn


@pytest.fixture
def dsn(database_url: str) -> str:
    return asyncpg_dsn(database_url)
