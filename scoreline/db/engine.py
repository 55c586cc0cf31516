"""The async SQLAlchemy engine, one per process, created at start-up and handed down."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from scoreline.db.urls import sqlalchemy_url


def create_engine(
    database_url: str, *, pool_size: int = 10, pre_ping: bool = True, pool_timeout: float = 30.0
) -> AsyncEngine:
    """An asyncpg-backed engine.

    `pre_ping` checks each connection before use, so a request after a Postgres restart does not
    fail; it costs round trips on every checkout. The worker turns it off: every database call
    there runs in a retried activity (or a loop that retries), and the first failure after a
    restart invalidates the whole pool, so the retry gets a fresh connection. `pool_timeout` is
    how long a checkout waits for a busy pool before it fails (the API answers that 503).
    """
    return create_async_engine(
        sqlalchemy_url(database_url),
        pool_size=pool_size,
        max_overflow=pool_size,
        pool_pre_ping=pre_ping,
        pool_timeout=pool_timeout,
    )
