"""Retention's Postgres side: what may be deleted from each table, one short batch at a time.

Every batch is one transaction that locks at most `limit` rows (`… LIMIT n FOR UPDATE SKIP
LOCKED`, so rows another transaction holds are left for the next run rather than waited for) and
deletes them by id or ctid; the activity sleeps between batches. No statement ever scans or
locks a whole table, so ingest, commands and pushes keep their pace while a backlog drains
(`bench/retention.py`). Each rule reads an index: `migrations/versions/0005_retention.py`'s, or
`la_push`'s primary key.

What is kept, and why:

- `domain_event` (the outbox): a row younger than its age, or one a durable consumer (a
  `feed_cursor` row; `feeds` must have one) has not passed in `(xid, id)` order. A lagging or
  stopped feed builder therefore never loses a row it has not read.
- `push_attempt`, `command`: younger than the age. A command row is what answers a resent key, so
  its age is the retry window; the log entry it made stays (it carries the key, no foreign key).
- `la_push` (the pushes a match published): every row of a match that is not over, or that changed
  (fixture, scoreboard or a push) within the age. Before a match's rows go its Live Activity
  mailboxes are closed (ended, wanting and owing nothing, lease dropped), so no drainer or token
  report ever reaches for a deleted push; its fixture gets `pushes_purged_at` in the transaction of
  its last batch, and publishing refuses that fixture from then on: a replayed publish would alert
  every phone again.
- `published_document`: the latest version of every document, always (partners read it), and
  every version replaced less than the age ago.
- `webhook_attempt` (the delivery log partners read): younger than the age. There is no index on
  its `created_at`, so a batch takes the `limit` oldest attempts by id (the primary key, in
  insertion order) and deletes those of them past the age: a batch never reads more than `limit`
  rows, and a young attempt among the oldest ids ends the run early rather than being deleted.
- `webhook_message`: every message still owed (the delivery engine's work), and every message
  delivered less than the age (the outbox's) ago. It has no index on `delivered_at` either: a
  batch stops at `limit` old rows, but a run that finds fewer reads the whole table once (the one
  statement here that scans; it locks only what it deletes). Deleting a delivered message
  changes nothing for the engine, whose position is its `feed_cursor` row; a redelivery from a
  seq whose message is gone is refused (`scoreline.webhooks.deliveries.redeliver`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine
from temporalio import activity

from domain.retention import PurgeInput, PurgeResult, RetentionTable
from domain.states import OVER_STATES
from scoreline.devices.mailbox import PUSH_LOCK_CLASS
from scoreline.logging import get_logger

log = get_logger(__name__)

OUTBOX_CONSUMERS: tuple[str, ...] = ("feeds", "webhooks")
"""Durable outbox consumers every deployment runs (the `scoreline feeds` process's feed builder and
webhook filler). Until each has a `feed_cursor` row nothing is deleted: a consumer without one reads
the outbox from the start."""

_CUTOFF = "now() - make_interval(secs => :age)"

_CURSORS = text("SELECT consumer, last_xid::text AS xid, last_event_id FROM feed_cursor")
# xid8 has no driver type: it travels as text, as in `scoreline.outbox.reader`.
_OUTBOX = text(
    f"""DELETE FROM domain_event WHERE id = ANY(ARRAY(
        SELECT id FROM domain_event
        WHERE created_at < {_CUTOFF}
          AND (xid, id) <= (CAST(CAST(:xid AS text) AS xid8), :id)
        LIMIT :limit FOR UPDATE SKIP LOCKED))"""
)
_PUSH_ATTEMPT = text(
    f"""DELETE FROM push_attempt WHERE id = ANY(ARRAY(
        SELECT id FROM push_attempt WHERE created_at < {_CUTOFF}
        LIMIT :limit FOR UPDATE SKIP LOCKED))"""
)
_COMMAND = text(
    f"""DELETE FROM command WHERE command_id = ANY(ARRAY(
        SELECT command_id FROM command WHERE created_at < {_CUTOFF}
        LIMIT :limit FOR UPDATE SKIP LOCKED))"""
)
_DOCUMENT = text(
    f"""DELETE FROM published_document WHERE ctid = ANY(ARRAY(
        SELECT d.ctid FROM published_document d
        WHERE d.created_at < {_CUTOFF}
          AND EXISTS (
            SELECT 1 FROM published_document newer
            WHERE newer.doc_key = d.doc_key AND newer.version > d.version
              AND newer.created_at < {_CUTOFF})
        LIMIT :limit FOR UPDATE OF d SKIP LOCKED))"""
)
# Attempts are written once and never updated, so briefly locking young ones in the head is harmless.
_WEBHOOK_ATTEMPT = text(
    f"""WITH head AS (
        SELECT id, created_at FROM webhook_attempt ORDER BY id LIMIT :limit FOR UPDATE SKIP LOCKED)
    DELETE FROM webhook_attempt WHERE id IN (SELECT id FROM head WHERE created_at < {_CUTOFF})"""
)
_WEBHOOK_MESSAGE = text(
    f"""DELETE FROM webhook_message WHERE ctid = ANY(ARRAY(
        SELECT ctid FROM webhook_message WHERE delivered_at < {_CUTOFF}
        LIMIT :limit FOR UPDATE SKIP LOCKED))"""
)
_QUIET = f"""f.updated_at < {_CUTOFF} AND f.state = ANY(CAST(:over AS text[]))
    AND NOT EXISTS (SELECT 1 FROM scoreboard s WHERE s.fixture_id = f.id AND s.updated_at >= {_CUTOFF})
    AND NOT EXISTS (SELECT 1 FROM la_push p WHERE p.fixture_id = f.id AND p.created_at >= {_CUTOFF})"""
"""A match over, and unchanged (fixture, scoreboard, no push published) for the age."""
_OVER_FIXTURES = text(
    f"""SELECT f.id FROM fixture f WHERE f.pushes_purged_at IS NULL AND {_QUIET}
    ORDER BY f.id LIMIT :limit
    FOR NO KEY UPDATE OF f SKIP LOCKED"""
)
_LOCK_PUSHES = text(
    "SELECT pg_advisory_xact_lock(:class, hashint8(id)) FROM unnest(CAST(:ids AS bigint[])) AS t(id)"
)
_STILL_QUIET = text(f"SELECT f.id FROM fixture f WHERE f.id = ANY(CAST(:ids AS bigint[])) AND {_QUIET}")
_OPEN = """(la.status <> 'ended' OR la.want_stamp IS NOT NULL OR la.alert_stamp IS NOT NULL
    OR la.next_try_at IS NOT NULL)"""
"""A mailbox that may still be sent to, or names a push."""
_CLOSE_MAILBOXES = text(
    f"""UPDATE live_activity SET status = 'ended', ended_at = COALESCE(ended_at, now()),
        want_stamp = NULL, alert_stamp = NULL, next_try_at = NULL, lease_owner = NULL,
        lease_until = NULL, updated_at = now()
    WHERE id = ANY(ARRAY(
        SELECT la.id FROM live_activity la WHERE la.fixture_id = ANY(CAST(:ids AS bigint[])) AND {_OPEN}
        LIMIT :limit FOR UPDATE SKIP LOCKED))"""
)
_PUSHES = text(
    f"""DELETE FROM la_push WHERE ctid = ANY(ARRAY(
        SELECT p.ctid FROM la_push p WHERE p.fixture_id = ANY(CAST(:ids AS bigint[]))
          AND NOT EXISTS (SELECT 1 FROM live_activity la WHERE la.fixture_id = p.fixture_id AND {_OPEN})
        LIMIT :limit FOR UPDATE SKIP LOCKED))"""
)
_MARK_PURGED = text(
    f"""UPDATE fixture f SET pushes_purged_at = now()
    WHERE f.id = ANY(CAST(:ids AS bigint[]))
      AND NOT EXISTS (SELECT 1 FROM la_push p WHERE p.fixture_id = f.id)
      AND NOT EXISTS (SELECT 1 FROM live_activity la WHERE la.fixture_id = f.id AND {_OPEN})"""
)
_SIMPLE = {
    RetentionTable.PUSH_ATTEMPT: _PUSH_ATTEMPT,
    RetentionTable.COMMAND: _COMMAND,
    RetentionTable.DOCUMENT: _DOCUMENT,
    RetentionTable.WEBHOOK_ATTEMPT: _WEBHOOK_ATTEMPT,
    RetentionTable.WEBHOOK_MESSAGE: _WEBHOOK_MESSAGE,
}


@dataclass(frozen=True)
class Batch:
    """What one transaction deleted."""

    deleted: int
    full: bool
    """As much as the limit allowed: there may be more (a short batch means none was left)."""
    fixtures_purged: int = 0


class RetentionActivities:
    """The engine, injected once per worker; `consumers` are the outbox consumers that must exist."""

    def __init__(self, engine: AsyncEngine, consumers: Sequence[str] = OUTBOX_CONSUMERS) -> None:
        self._engine = engine
        self._consumers = frozenset(consumers)

    @activity.defn(name="purge_old_rows")
    async def purge_old_rows(self, purge: PurgeInput) -> PurgeResult:
        """Batches of `purge.table` until one comes back short or the budget is spent.

        Heartbeats the running totals after every batch, so a retry carries on counting.
        """
        details = activity.info().heartbeat_details
        deleted, batches, fixtures = (int(value) for value in details) if details else (0, 0, 0)
        deadline = time.monotonic() + purge.budget_seconds
        while True:
            batch = await self.delete_batch(purge.table, purge.age_seconds, purge.batch)
            deleted += batch.deleted
            batches += 1
            fixtures += batch.fixtures_purged
            activity.heartbeat(deleted, batches, fixtures)
            if not batch.full or time.monotonic() >= deadline:
                break
            await asyncio.sleep(purge.pause_seconds)
        log.info(
            "retention.purged",
            table=purge.table.value,
            deleted=deleted,
            batches=batches,
            fixtures_purged=fixtures,
            done=not batch.full,
        )
        return PurgeResult(deleted=deleted, batches=batches, fixtures_purged=fixtures, done=not batch.full)

    async def delete_batch(self, table: RetentionTable, age_seconds: float, limit: int) -> Batch:
        """One transaction: at most `limit` rows of `table` older than `age_seconds` that may go."""
        params = {"age": age_seconds, "limit": limit}
        async with self._engine.begin() as conn:
            if table is RetentionTable.OUTBOX:
                return await self._outbox(conn, params)
            if table is RetentionTable.LA_PUSH:
                return await _la_push(conn, params)
            deleted = (await conn.execute(_SIMPLE[table], params)).rowcount
        return Batch(deleted, full=deleted >= limit)

    async def _outbox(self, conn: AsyncConnection, params: dict[str, float | int]) -> Batch:
        cursors = (await conn.execute(_CURSORS)).all()
        if not cursors or not self._consumers <= {str(row.consumer) for row in cursors}:
            return Batch(0, full=False)
        xid, event_id = min((int(row.xid), int(row.last_event_id)) for row in cursors)
        deleted = (await conn.execute(_OUTBOX, {**params, "xid": str(xid), "id": event_id})).rowcount
        return Batch(deleted, full=deleted >= params["limit"])


async def _la_push(conn: AsyncConnection, params: dict[str, float | int]) -> Batch:
    """Close up to `limit` open mailboxes of matches over and quiet for the age, then delete up to
    `limit` pushes of those with none open; a match left with neither is marked purged.

    The fixture rows are locked (`FOR NO KEY UPDATE`: `la_push` and mailbox inserts, which only
    take a key-share lock, are not blocked) so two runs never work on one match, and so is each
    match's push lock, as a publish, follow or token report takes it: the match is checked again
    under it, so a push published meanwhile keeps it, and none is published while its rows go.
    """
    limit = params["limit"]
    over = sorted(state.value for state in OVER_STATES)
    found = list((await conn.execute(_OVER_FIXTURES, {**params, "over": over})).scalars())
    if not found:
        return Batch(0, full=False)
    await conn.execute(_LOCK_PUSHES, {"class": PUSH_LOCK_CLASS, "ids": found})
    ids = list((await conn.execute(_STILL_QUIET, {**params, "over": over, "ids": found})).scalars())
    closed = (await conn.execute(_CLOSE_MAILBOXES, {"ids": ids, "limit": limit})).rowcount
    deleted = (await conn.execute(_PUSHES, {"ids": ids, "limit": limit})).rowcount
    purged = (await conn.execute(_MARK_PURGED, {"ids": ids})).rowcount
    full = deleted >= limit or closed >= limit or len(found) >= limit
    return Batch(deleted, full=full, fixtures_purged=purged)
