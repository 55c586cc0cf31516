"""The builder's durable place in the outbox: one `feed_cursor` row per consumer."""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from scoreline.outbox.reader import Cursor

START = Cursor(0, 0)
"""Before every row: a consumer with no row yet reads the whole outbox (rebuilds are idempotent)."""

_LOAD = text("SELECT last_xid::text AS xid, last_event_id FROM feed_cursor WHERE consumer = :consumer")
# xid8 has no driver type: it travels as text, as in `scoreline.outbox.reader`.
_SAVE = text(
    """
    INSERT INTO feed_cursor (consumer, last_xid, last_event_id)
    VALUES (:consumer, CAST(CAST(:xid AS text) AS xid8), :id)
    ON CONFLICT (consumer) DO UPDATE
    SET last_xid = excluded.last_xid, last_event_id = excluded.last_event_id, updated_at = now()
    """
)


async def load_cursor(conn: AsyncConnection, consumer: str) -> Cursor:
    row = (await conn.execute(_LOAD, {"consumer": consumer})).first()
    return START if row is None else Cursor(int(row.xid), int(row.last_event_id))


async def save_cursor(conn: AsyncConnection, consumer: str, cursor: Cursor) -> None:
    """Commit `cursor` for `consumer` (the caller's transaction)."""
    await conn.execute(_SAVE, {"consumer": consumer, "xid": str(cursor.xid), "id": cursor.id})
