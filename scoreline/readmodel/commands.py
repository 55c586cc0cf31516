"""The `command` table's read side: what a key was answered, for the API.

The API answers a resend from here at once (no workflow involved). The commit decides a key it has
seen before (duplicate, or `key_reused`) inside its own SQL function, under the fixture lock
(`scoreline_commit_command`, migration 0007).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from domain.commands import CommandAnswer
from scoreline.db.tables import command


@dataclass(frozen=True)
class StoredCommand:
    """A key's first answer, as the `command` table holds it."""

    fixture_id: int
    payload_hash: str
    answer: CommandAnswer


async def stored_command(conn: AsyncConnection, key: str) -> StoredCommand | None:
    """The first answer to `key`, if the table holds it."""
    row = (
        await conn.execute(
            select(command.c.fixture_id, command.c.payload_hash, command.c.answer).where(
                command.c.command_id == key
            )
        )
    ).first()
    if row is None:
        return None
    return StoredCommand(
        fixture_id=row.fixture_id,
        payload_hash=row.payload_hash,
        answer=CommandAnswer.model_validate(row.answer),
    )


async def lookup(engine: AsyncEngine, key: str) -> StoredCommand | None:
    """The stored first answer of `key`: one statement, no transaction around it (one round trip)."""
    async with engine.connect() as conn:
        autocommit = await conn.execution_options(isolation_level="AUTOCOMMIT")
        return await stored_command(autocommit, key)
