"""Writing the outbox: the one way a committed change is announced.

Every writer of a match's log announces its change in the same transaction as the entries: a
`domain_event` row, which readers take in `(xid, id)` order (`scoreline.outbox.reader`), and a
`pg_notify` on `CHANNEL`, which only wakes them. Both are written by one SQL function,
`scoreline_announce` (migration 0007): the provider ingest calls it through `announce`, the desk
command commit from inside its own SQL function.
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

CHANNEL = "scoreline_changes"
"""The NOTIFY channel `scoreline_announce` signals; the outbox listener and the feed builder LISTEN on it."""

_ANNOUNCE = text("SELECT scoreline_announce(:fixture_id, :version, CAST(:payload AS jsonb), :trace_id)")


async def announce(
    conn: AsyncConnection, fixture_id: int, version: int, payload: dict[str, Any], trace_id: str | None
) -> None:
    """The outbox row for a match that moved to `version`, and the wake-up, in the caller's transaction."""
    await conn.execute(
        _ANNOUNCE,
        {"fixture_id": fixture_id, "version": version, "payload": json.dumps(payload), "trace_id": trace_id},
    )
