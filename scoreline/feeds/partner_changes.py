"""The canonical partner change: one log entry of one match, as a webhook and the change cursor carry it.

Every commit to a match's log writes one `domain_event` row (`scoreline.outbox.writer`) whose
payload names the entries it wrote (`from_seq` .. `version`) and the match's state and score after
it. `changes_after` reads those rows in the outbox order that never skips a late commit (`(xid, id)`,
only below the snapshot xmin, as `scoreline.outbox.reader` explains) and expands each into its
entries, so a partner sees every entry once, in commit order across matches and in seq order within
one. A webhook and the cursor build the same `PartnerChange` from the same rows, so a partner that
uses both sees identical objects.

`committed_at` is the outbox row's `created_at`: Postgres keeps no commit time (unless
`track_commit_timestamp` is on), and every writer announces as the last step of a short transaction,
so it is the moment the committing transaction began, a few milliseconds before its commit.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from scoreline.feeds.change_cursor import START, ChangeCursor

MAX_LIMIT = 1000
"""Changes one read returns at most: a page, a webhook batch."""

_COMMITS = text(
    """
    SELECT e.id, e.xid::text AS xid, e.fixture_id, e.seq AS version,
           COALESCE((e.payload->>'from_seq')::bigint, e.seq) AS first_seq,
           e.payload->>'state' AS state, e.payload->'score' AS score, e.created_at,
           e.created_at > clock_timestamp() - make_interval(secs => :delay) AS too_young
    FROM domain_event e JOIN fixture f ON f.id = e.fixture_id
    WHERE e.xid < pg_snapshot_xmin(pg_current_snapshot())
      AND (e.xid, e.id) >= (CAST(CAST(:xid AS text) AS xid8), :id)
      AND e.seq IS NOT NULL
      AND COALESCE((f.competition->>'id')::bigint, f.league_id) = ANY(CAST(:competitions AS bigint[]))
    ORDER BY e.xid, e.id
    LIMIT :rows
    """
)
# xid8 has no driver type: it travels as text, as in `scoreline.outbox.reader`.
_ENTRIES = text(
    """
    SELECT t.fixture_id, t.seq, t.kind, t.origin, t.minute, t.extra_minute, t.target_seq, t.body
    FROM timeline_item t
    JOIN unnest(CAST(:fixtures AS bigint[]), CAST(:lows AS bigint[]), CAST(:highs AS bigint[]))
         AS r(fixture_id, low, high)
      ON t.fixture_id = r.fixture_id AND t.seq BETWEEN r.low AND r.high
    """
)
_OLDEST = text("SELECT xid::text AS xid, id FROM domain_event ORDER BY xid, id LIMIT 1")
_KEPT = text(
    "SELECT EXISTS (SELECT 1 FROM domain_event WHERE id = :id AND xid = CAST(CAST(:xid AS text) AS xid8))"
)


class Score(BaseModel):
    model_config = ConfigDict(frozen=True)

    home: int
    away: int


class PartnerChange(BaseModel):
    """One log entry of a match, with the match as the commit that wrote it left it.

    Attributes:
        seq: The entry's seq in the match's log (1, 2, 3 … per match, no gaps).
        version: The match's version after the commit that wrote the entry (>= `seq`; equal for
            the last entry of a commit).
        kind: The log's own kind: `event`, `amendment`, `retraction`, `state`, `score`, `command`.
        target_seq: The entry an amendment, retraction or undo refers to.
        body: The entry as the log stores it.
        state, score: The match after the commit (None if the writer announced none).
        position: Where this change is in the stream: a consumer that stores it resumes right
            after this change. Not part of the JSON a partner sees.
    """

    model_config = ConfigDict(frozen=True)

    fixture_id: int
    seq: int
    version: int
    committed_at: datetime
    kind: str
    origin: str
    minute: int | None
    extra_minute: int | None
    target_seq: int | None
    body: dict[str, Any]
    state: str | None
    score: Score | None
    position: ChangeCursor = Field(exclude=True)


@dataclass(frozen=True, slots=True)
class ChangePage:
    """What one read found: changes in commit order, and the cursor after the last one (the
    cursor read from, when there was nothing)."""

    changes: list[PartnerChange]
    cursor: ChangeCursor


async def changes_after(
    conn: AsyncConnection,
    cursor: ChangeCursor,
    competitions: Collection[int],
    limit: int,
    *,
    delay: timedelta = timedelta(0),
) -> ChangePage:
    """The changes after `cursor` of the fixtures of `competitions`, at most `limit` of them.

    With `delay`, only changes committed at least that long ago, by the database clock: the read
    stops at the first younger commit, so a later, older-looking commit is never shown before it
    and the cursor never passes a change not shown yet.
    """
    if not 0 < limit <= MAX_LIMIT:
        raise ValueError(f"limit must be 1 to {MAX_LIMIT}")
    if not competitions:
        return ChangePage([], cursor)
    # One row more than the limit: the cursor's own row may have no entries left.
    rows = (
        await conn.execute(
            _COMMITS,
            {
                "xid": str(cursor.xid),
                "id": cursor.id,
                "competitions": sorted(competitions),
                "delay": delay.total_seconds(),
                "rows": limit + 1,
            },
        )
    ).all()
    commits = []
    for row in rows:
        if row.too_young:
            break
        commits.append(row)
    entries = await _entries_of(conn, commits, cursor)
    changes: list[PartnerChange] = []
    for row in commits:
        for entry in entries.get(row.id, ()):
            if len(changes) == limit:
                return ChangePage(changes, changes[-1].position)
            changes.append(_change(row, entry, int(row.xid)))
    return ChangePage(changes, changes[-1].position if changes else cursor)


async def oldest_cursor(conn: AsyncConnection) -> ChangeCursor:
    """The oldest cursor still valid: before the oldest commit kept (`START` if none is)."""
    row = (await conn.execute(_OLDEST)).first()
    return START if row is None else ChangeCursor(int(row.xid), row.id, 0)


async def is_kept(conn: AsyncConnection, cursor: ChangeCursor) -> bool:
    """Whether reading after `cursor` can miss nothing that retention deleted.

    A cursor points at the commit it was issued inside of; while that outbox row is kept, so is
    everything after it (retention deletes old rows that every durable consumer has passed).
    Once the row is gone, changes after it may be gone too: the partner must start again from
    `oldest_cursor` and knows it may have missed some.
    """
    if cursor.is_start:
        return True
    return bool((await conn.execute(_KEPT, {"id": cursor.id, "xid": str(cursor.xid)})).scalar_one())


async def _entries_of(
    conn: AsyncConnection, commits: Sequence[Any], cursor: ChangeCursor
) -> dict[int, list[Any]]:
    """Each commit's entries by outbox row id, in seq order; the cursor's row from after its seq."""
    if not commits:
        return {}
    lows = [
        max(row.first_seq, cursor.seq + 1)
        if (int(row.xid), row.id) == (cursor.xid, cursor.id)
        else row.first_seq
        for row in commits
    ]
    found = await conn.execute(
        _ENTRIES,
        {
            "fixtures": [row.fixture_id for row in commits],
            "lows": lows,
            "highs": [row.version for row in commits],
        },
    )
    by_seq = {(entry.fixture_id, entry.seq): entry for entry in found}
    return {
        row.id: [
            by_seq[row.fixture_id, seq]
            for seq in range(low, row.version + 1)
            if (row.fixture_id, seq) in by_seq
        ]
        for row, low in zip(commits, lows, strict=True)
    }


def _change(commit: Any, entry: Any, xid: int) -> PartnerChange:
    return PartnerChange(
        fixture_id=commit.fixture_id,
        seq=entry.seq,
        version=commit.version,
        committed_at=commit.created_at,
        kind=entry.kind,
        origin=entry.origin,
        minute=entry.minute,
        extra_minute=entry.extra_minute,
        target_seq=entry.target_seq,
        body=entry.body,
        state=commit.state,
        score=None if commit.score is None else Score.model_validate(commit.score),
        position=ChangeCursor(xid, commit.id, entry.seq),
    )
