"""Alembic environment: async engine on asyncpg, URL from Scoreline's settings, our naming convention."""

from __future__ import annotations

import asyncio

from alembic import context
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import create_async_engine

from scoreline.db.tables import metadata
from scoreline.db.urls import sqlalchemy_url
from scoreline.settings import load_settings


def _database_url() -> str:
    configured = context.config.get_main_option("sqlalchemy.url")
    return configured or load_settings().require_database_url()


def _run(connection: Connection) -> None:
    context.configure(connection=connection, target_metadata=metadata, compare_server_default=True)
    with context.begin_transaction():
        context.run_migrations()


async def _run_online() -> None:
    engine = create_async_engine(sqlalchemy_url(_database_url()))
    async with engine.connect() as connection:
        await connection.run_sync(_run)
    await engine.dispose()


if context.is_offline_mode():
    context.configure(url=str(sqlalchemy_url(_database_url())), target_metadata=metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()
else:
    asyncio.run(_run_online())
