"""Writing the outbox: the one way a committed change is announced.

Every writer of a match's log (the provider ingest, the desk command commit) calls `announce` in the
same transaction as the entries: a `domain_event` row, which readers take in `(xid, id)` order
(`scoreline.outbox.reader`), and a `pg_notify` on `CHANNEL`, which only wakes them.
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from scoreline.db.tables import domain_event

CHANNEL = "scoreline_changes"
"""The NOTIFY channel of `domain_event`; the outbox listener and the feed builder LISTEN on it."""
MATCH_CHANGED = "match.changed"


async def announce(
    conn: AsyncConnection, fixture_id: int, version: int, payload: dict[str, Any], trace_id: str | None
) -> None:
    """The outbox row for a match that moved to `version`, and the wake-up, in the caller's transaction."""
    await conn.execute(
        domain_event.insert().values(
            fixture_id=fixture_id, seq=version, kind=MATCH_CHANGED, payload=payload, trace_id=trace_id
        )
    )
    await conn.execute(
        text("SELECT pg_notify(:channel, :payload)"),
        {"channel": CHANNEL, "payload": json.dumps({"fixture_id": fixture_id, "version": version})},
    )
