"""What a batch of outbox rows means for documents: which ones to rebuild, and since when.

A row names a fixture; it touches that match's document and the fixture list of its kick-off day.
The age comes from Postgres' own clock (`created_at` is when the writing transaction began), so the
builder's "never hold a change more than N seconds" counts from the change, not from the moment a
row held back behind an older open transaction finally became readable.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from scoreline.db.tables import domain_event, fixture
from scoreline.feeds.keys import DocKey, FixturesDoc, MatchDoc
from scoreline.outbox.reader import Cursor, OutboxEvent


@dataclass(frozen=True, slots=True)
class Change:
    at: Cursor
    docs: tuple[DocKey, ...]
    age: float
    """Seconds since the change's transaction began, by the database clock (0 if unknown)."""
    trace_id: str | None
    """The trace of the request or poll that made the change: the version showing it names it."""


async def changes_of(conn: AsyncConnection, events: Sequence[OutboxEvent]) -> list[Change]:
    """One `Change` per event, in the events' order."""
    if not events:
        return []
    age = func.extract("epoch", func.clock_timestamp() - domain_event.c.created_at)
    rows = await conn.execute(
        select(domain_event.c.id, age.label("age"), fixture.c.starting_at)
        .select_from(domain_event.join(fixture, fixture.c.id == domain_event.c.fixture_id))
        .where(domain_event.c.id.in_([event.id for event in events]))
    )
    facts = {row.id: (max(float(row.age), 0.0), row.starting_at) for row in rows}
    changes = []
    for event in events:
        age_seconds, kickoff = facts.get(event.id, (0.0, None))
        docs: tuple[DocKey, ...] = (MatchDoc(event.fixture_id),)
        if kickoff is not None:
            docs += (FixturesDoc(kickoff.astimezone(UTC).date()),)
        changes.append(Change(at=event.cursor, docs=docs, age=age_seconds, trace_id=event.trace_id))
    return changes
