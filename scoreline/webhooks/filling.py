"""Filling: what each endpoint is owed, written from the outbox by one durable consumer.

The `webhooks` consumer reads partner changes (`scoreline.feeds.partner_changes`: one per log
entry, in commit order) of every competition some active partner with an endpoint is granted, and
writes one `webhook_message` per change for each endpoint whose partner is granted that match's
competition and that existed when the change committed. The insert is `ON CONFLICT DO NOTHING` and
commits with the move of the consumer's cursor in `feed_cursor`, so a crash re-reads at most what
was not committed, and a re-read writes nothing twice.

The durable cursor is an outbox position `(xid, id)` (`scoreline.feeds.cursor`), so it only ever
stands after a whole commit: a page that ends inside a commit's entries keeps its exact place in
memory, and the durable cursor stays after the last whole commit (a restart re-reads that one
commit's entries, harmlessly). When a read finds fewer than a page, every matching change below
the horizon taken before it has been read, so the cursor moves to that horizon even if the
competitions were quiet: it never holds back outbox retention for matches nobody is owed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Final

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from scoreline.feeds.change_cursor import ChangeCursor
from scoreline.feeds.cursor import load_cursor, save_cursor
from scoreline.feeds.partner_changes import MAX_LIMIT, PartnerChange, changes_after
from scoreline.outbox.reader import Cursor, current_end, rows_held_back

CONSUMER: Final = "webhooks"
WHOLE_COMMIT: Final = 2**62
"""A seq past every entry: `ChangeCursor(xid, id, WHOLE_COMMIT)` is after all of row `(xid, id)`."""
EVENT_TYPE: Final = "match.change"
"""The body's `type` (Standard Webhooks' recommended envelope field): a partner can route on it."""

_COMPETITIONS = text(
    """
    SELECT coalesce(array_agg(DISTINCT c), '{}') FROM partner p
    CROSS JOIN LATERAL unnest(p.competitions) AS c
    WHERE p.active AND EXISTS (SELECT 1 FROM webhook_endpoint e WHERE e.partner_id = p.id)
    """
)
_OWE = text(
    """
    INSERT INTO webhook_message (endpoint_id, fixture_id, seq, body, committed_at, next_attempt_at)
    SELECT e.id, c.fixture_id, c.seq, CAST(c.body AS jsonb), c.committed_at, now()
    FROM unnest(CAST(:fixture_ids AS bigint[]), CAST(:seqs AS bigint[]), CAST(:bodies AS text[]),
                CAST(:committed AS timestamptz[])) AS c(fixture_id, seq, body, committed_at)
    JOIN fixture f ON f.id = c.fixture_id
    JOIN partner p ON p.active
                  AND COALESCE((f.competition->>'id')::bigint, f.league_id) = ANY(p.competitions)
    JOIN webhook_endpoint e ON e.partner_id = p.id AND e.created_at <= c.committed_at
    ON CONFLICT DO NOTHING
    RETURNING 1
    """
)


@dataclass(frozen=True, slots=True)
class Filled:
    position: ChangeCursor
    """Where the next read starts (exact, possibly inside a commit)."""
    durable: Cursor
    """What was saved in `feed_cursor`."""
    changes: int
    owed: int
    """Messages written (new rows only)."""
    full: bool
    """The page was full: read again at once."""
    held: bool = False
    """Committed rows wait behind an older open transaction: read again soon, as their NOTIFY has
    already come (and no other may come for a while)."""


def body_of(change: PartnerChange) -> str:
    """The JSON POSTed for a change: the partner change as the change cursor shows it, with the
    event `type` in front."""
    return json.dumps({"type": EVENT_TYPE, **change.model_dump(mode="json")}, separators=(",", ":"))


async def start_position(conn: AsyncConnection) -> tuple[ChangeCursor, Cursor]:
    durable = await load_cursor(conn, CONSUMER)
    return ChangeCursor(durable.xid, durable.id, WHOLE_COMMIT if durable.xid else 0), durable


async def fill(conn: AsyncConnection, position: ChangeCursor, durable: Cursor) -> Filled:
    """One page: owe its changes and move the durable cursor, in the caller's transaction."""
    horizon = await current_end(conn)
    competitions = (await conn.execute(_COMPETITIONS)).scalar_one()
    page = await changes_after(conn, position, competitions, MAX_LIMIT)
    changes = page.changes
    owed = 0
    if changes:
        rows = await conn.execute(
            _OWE,
            {
                "fixture_ids": [change.fixture_id for change in changes],
                "seqs": [change.seq for change in changes],
                "bodies": [body_of(change) for change in changes],
                "committed": [change.committed_at for change in changes],
            },
        )
        owed = len(rows.all())
    full = len(changes) == MAX_LIMIT
    whole = [change.position for change in changes if change.seq >= change.version]
    moved = durable
    if whole:
        moved = max(moved, Cursor(whole[-1].xid, whole[-1].id))
    next_position = page.cursor
    held = False
    if not full:
        held = await rows_held_back(conn)
        moved = max(moved, horizon)
        next_position = max(next_position, ChangeCursor(horizon.xid, horizon.id, WHOLE_COMMIT))
    if moved != durable:
        await save_cursor(conn, CONSUMER, moved)
    return Filled(
        position=next_position, durable=moved, changes=len(changes), owed=owed, full=full, held=held
    )
