"""Changes the way a committed ingest leaves them: content first, then the outbox row and NOTIFY.

`MatchLog` (the read-model tests' row builder) writes the content; `announce` adds what every writer
of a match's log commits with it, a `domain_event` row and `pg_notify('scoreline_changes')`.
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from scoreline.db.tables import domain_event, published_document
from tests.readmodel.rows import MatchLog

PREMIER_LEAGUE = 8
"""The competition `MatchLog.create` gives a fixture unless told otherwise (`rows.COMPETITION`)."""
MATCH = 81000001


async def announce_in(conn: AsyncConnection, fixture_id: int) -> None:
    """The outbox row and the wake-up, in the caller's transaction."""
    await conn.execute(
        domain_event.insert().values(
            fixture_id=fixture_id, kind="match.changed", payload={"fixture_id": fixture_id}
        )
    )
    await conn.execute(
        text("SELECT pg_notify('scoreline_changes', :payload)"),
        {"payload": json.dumps({"fixture_id": fixture_id})},
    )


async def announce(engine: AsyncEngine, fixture_id: int) -> None:
    async with engine.begin() as conn:
        await announce_in(conn, fixture_id)


async def score(log: MatchLog, home: int, away: int, state: str = "live_first_half") -> None:
    """A log entry and the scoreboard it leads to, then the outbox row: one material change."""
    await log.state_entry(state)
    await log.board(state, home, away, minute=10)
    await announce(log.engine, log.fixture_id)


async def versions(engine: AsyncEngine, doc_key: str) -> list[dict[str, Any]]:
    """Every saved version of a document, oldest first, with its body and when it was saved."""
    async with engine.connect() as conn:
        rows = await conn.execute(
            select(
                published_document.c.version,
                published_document.c.etag,
                published_document.c.body,
                published_document.c.created_at,
            )
            .where(published_document.c.doc_key == doc_key)
            .order_by(published_document.c.version)
        )
        return [dict(row._mapping) for row in rows]
