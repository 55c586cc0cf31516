"""Reading the `domain_event` outbox in an order that never skips a late commit.

Rows are read in `(xid, id)` order, after a cursor `(xid, id)`, and only below the reading
statement's snapshot xmin: `xid < pg_snapshot_xmin(pg_current_snapshot())`.

Why an `id` or `created_at` cursor is not enough: transaction A takes id 10, transaction B takes
id 11, B commits first. A reader that saw 11 and moved its cursor past it never sees 10 when A
commits a moment later. Ordering by the writer's transaction id has the same problem on its own
(A's xid is also lower than B's).

Why the xmin rule closes the gap: the snapshot's xmin is the oldest transaction still running when
the statement started, so every transaction with an xid below it has finished — committed or rolled
back — and nothing will ever appear below it again. The reader only moves its cursor through that
settled region. A transaction that commits late has an xid at or above the xmin of every read that
ran while it was open, so none of those reads could have passed it; the first read after it commits
(and after every older transaction finished) finds it above the cursor. xid8 is 64 bits and never
wraps, and a later statement's xmin is never lower than an earlier one's, so the order is total and
the cursor only moves forwards.

The price is latency, never loss: one long transaction anywhere on the server holds every reader
back until it ends (`Batch.held` says so, so the caller can look again soon rather than wait for
the next notification).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

_BELOW_HORIZON = text(
    """
    SELECT id, xid::text AS xid, fixture_id, seq, kind, payload, trace_id,
           GREATEST(EXTRACT(epoch FROM clock_timestamp() - created_at), 0)::float8 AS age
    FROM domain_event
    WHERE xid < pg_snapshot_xmin(pg_current_snapshot())
      AND (xid, id) > (CAST(CAST(:xid AS text) AS xid8), :id)
    ORDER BY xid, id
    LIMIT :limit
    """
)
_HELD_BACK = text(
    "SELECT EXISTS (SELECT 1 FROM domain_event WHERE xid >= pg_snapshot_xmin(pg_current_snapshot()))"
)
_HORIZON = text("SELECT pg_snapshot_xmin(pg_current_snapshot())::text")


@dataclass(frozen=True, order=True, slots=True)
class Cursor:
    """A position in `(xid, id)` order; a read returns the rows strictly after it."""

    xid: int
    id: int


class OutboxEvent(BaseModel):
    """One committed `domain_event` row."""

    model_config = ConfigDict(frozen=True)

    id: int
    xid: int
    fixture_id: int
    seq: int | None
    kind: str
    payload: dict[str, Any]
    trace_id: str | None
    age: float = 0.0
    """Seconds since its transaction began, by the database clock, when it was read: a consumer's lag."""

    @property
    def cursor(self) -> Cursor:
        return Cursor(self.xid, self.id)


@dataclass(frozen=True, slots=True)
class Batch:
    """What one read found.

    Attributes:
        events: Settled rows after the cursor, in `(xid, id)` order, at most the limit asked for.
        held: Committed rows exist that are not settled yet (an older transaction is still open);
            they will be readable once it ends, which may be before any further notification.
    """

    events: list[OutboxEvent]
    held: bool


async def read_after(conn: AsyncConnection, cursor: Cursor, limit: int) -> Batch:
    """The settled rows after `cursor`, at most `limit` of them.

    `held` is only looked up when the batch is not full: a full batch means "read again" anyway.
    """
    rows = await conn.execute(_BELOW_HORIZON, {"xid": str(cursor.xid), "id": cursor.id, "limit": limit})
    events = [
        OutboxEvent(
            id=row.id,
            xid=int(row.xid),
            fixture_id=row.fixture_id,
            seq=row.seq,
            kind=row.kind,
            payload=row.payload,
            trace_id=row.trace_id,
            age=row.age,
        )
        for row in rows
    ]
    held = len(events) < limit and await rows_held_back(conn)
    return Batch(events=events, held=held)


async def rows_held_back(conn: AsyncConnection) -> bool:
    """Whether committed outbox rows wait behind an older open transaction: a reader that read
    everything below the horizon should look again soon rather than wait for a NOTIFY."""
    return bool((await conn.execute(_HELD_BACK)).scalar_one())


async def current_end(conn: AsyncConnection) -> Cursor:
    """Where a consumer that wants no history starts: just below the unsettled region.

    Every row after this cursor belongs to a transaction that was still open (or not yet begun)
    when it was taken, or committed behind one that was. Such a row may already be reflected in
    the current values a fresh consumer loads, so it can arrive once more: consumers drop what
    is not newer than what they hold (by version), and nothing is ever missed.
    """
    horizon = int((await conn.execute(_HORIZON)).scalar_one())
    return Cursor(horizon, 0)
