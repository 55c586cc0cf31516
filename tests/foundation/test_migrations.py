"""The schema: migrations go up, down and up again, match the code's tables, and hold the keys."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import Connection
from sqlalchemy.ext.asyncio import create_async_engine

from scoreline.db import migrate
from scoreline.db.tables import metadata
from scoreline.db.urls import asyncpg_dsn, sqlalchemy_url

TABLES = {
    "fixture",
    "match_event",
    "timeline_item",
    "scoreboard",
    "command",
    "la_push",
    "domain_event",
    "device",
    "follow",
    "live_activity",
    "published_document",
    "partner",
    "desk",
    "operator",
    "feed_cursor",
    "push_attempt",
    "webhook_endpoint",
    "webhook_message",
    "webhook_attempt",
}


async def _tables(database_url: str) -> set[str]:
    connection = await asyncpg.connect(asyncpg_dsn(database_url))
    try:
        rows = await connection.fetch("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
    finally:
        await connection.close()
    return {row["tablename"] for row in rows} - {"alembic_version"}


async def test_upgrade_downgrade_upgrade_on_an_empty_database(empty_database_url: str) -> None:
    """Every migration applies to nothing, reverses cleanly, and applies again."""
    await asyncio.to_thread(migrate.upgrade, empty_database_url)
    assert await _tables(empty_database_url) == TABLES
    await asyncio.to_thread(migrate.downgrade, empty_database_url, "base")
    assert await _tables(empty_database_url) == set()
    await asyncio.to_thread(migrate.upgrade, empty_database_url)
    assert await _tables(empty_database_url) == TABLES


async def test_migrated_schema_matches_the_code(database_url: str) -> None:
    """Alembic finds no difference between the migrations and `scoreline.db.tables`."""

    def differences(connection: Connection) -> list[object]:
        context = MigrationContext.configure(connection, opts={"compare_server_default": True})
        return list(compare_metadata(context, metadata))

    engine = create_async_engine(sqlalchemy_url(database_url))
    try:
        async with engine.connect() as connection:
            diff = await connection.run_sync(differences)
    finally:
        await engine.dispose()
    assert diff == []


@pytest.fixture
async def db(database_url: str) -> asyncpg.Connection:
    connection = await asyncpg.connect(asyncpg_dsn(database_url))
    await connection.execute(
        "INSERT INTO fixture (id, name) VALUES (81000001, 'Riverside FC vs Harbour United')"
    )
    yield connection
    await connection.close()


async def test_match_event_is_unique_per_stream_and_provider_id(db: asyncpg.Connection) -> None:
    """The same provider event twice is one row; the same id in the other stream is another."""
    insert = """
        INSERT INTO match_event (fixture_id, stream, provider_event_id, type, body, body_hash, source)
        VALUES (81000001, $1, 500001, 'goal', '{}', 'h', 'live')
        ON CONFLICT (fixture_id, stream, provider_event_id) DO NOTHING
        RETURNING id
    """
    assert await db.fetchval(insert, "events") is not None
    assert await db.fetchval(insert, "events") is None
    assert await db.fetchval(insert, "timeline") is not None


async def test_timeline_seq_is_unique_per_fixture(db: asyncpg.Connection) -> None:
    """Two entries can never claim the same place in one match's log."""
    insert = "INSERT INTO timeline_item (fixture_id, seq, kind, origin, body) VALUES (81000001, 1, 'event', 'provider', '{}')"
    await db.execute(insert)
    with pytest.raises(asyncpg.UniqueViolationError):
        await db.execute(insert)


async def test_a_push_is_published_once(db: asyncpg.Connection) -> None:
    """A match's push (fixture, event key, event) has one row: a replayed publish finds it."""
    publish = """
        INSERT INTO la_push (fixture_id, stamp, event_key, event, generation, priority, routine,
            content_state, attributes, stale_date, dismissal_date)
        VALUES (81000001, $1, 'v42', 'update', 1, 10, false, '{}', '{}', 0, 0)
        ON CONFLICT (fixture_id, event_key, event) DO NOTHING RETURNING stamp
    """
    assert await db.fetchval(publish, 100) == 100
    assert await db.fetchval(publish, 101) is None


async def test_outbox_rows_carry_their_transaction_id(db: asyncpg.Connection) -> None:
    """domain_event.xid defaults to the writing transaction's xid8, the late-commit-safe cursor."""
    async with db.transaction():
        xid = await db.fetchval("SELECT pg_current_xact_id()::text")
        stored = await db.fetchval(
            "INSERT INTO domain_event (fixture_id, kind, payload) VALUES (81000001, 'test', '{}') RETURNING xid::text"
        )
    assert stored == xid
    assert (
        await db.fetchval(
            "SELECT data_type FROM information_schema.columns WHERE table_name='domain_event' AND column_name='xid'"
        )
        == "xid8"
    )


async def test_command_key_is_the_primary_key(db: asyncpg.Connection) -> None:
    """A command key is stored once; a second insert with the same key is a conflict."""
    insert = """
        INSERT INTO command (command_id, fixture_id, sender, code, input, payload_hash, outcome, answer)
        VALUES ('k-1', 81000001, 'desk-1', 'match.commentary', '{}', 'h', 'accepted', '{}')
    """
    await db.execute(insert)
    with pytest.raises(asyncpg.UniqueViolationError):
        await db.execute(insert)


async def test_check_constraints_refuse_unknown_values(db: asyncpg.Connection) -> None:
    """Enumerated columns refuse a value outside their list instead of storing junk."""
    with pytest.raises(asyncpg.CheckViolationError):
        await db.execute(
            "INSERT INTO match_event (fixture_id, stream, provider_event_id, type, body, body_hash, source)"
            " VALUES (81000001, 'comments', 1, 'goal', '{}', 'h', 'live')"
        )
