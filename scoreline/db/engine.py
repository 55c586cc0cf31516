"""The async SQLAlchemy engine, one per process, created at start-up and handed down."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from scoreline.db.urls import sqlalchemy_url


def create_engine(database_url: str, *, pool_size: int = 10) -> AsyncEngine:
    """An asyncpg-backed engine; `pool_pre_ping` survives a Postgres restart under `scoreline dev`."""
    return create_async_engine(
        sqlalchemy_url(database_url),
        pool_size=pool_size,
        max_overflow=pool_size,
        pool_pre_ping=True,
    )
