"""What a live screen is sent: the match value at a version, and the log entries that led to it.

A value is read from Postgres in one REPEATABLE READ snapshot (the view and its entries agree), once
per change by the hub, whatever the number of clients. Entries are `timeline_item` rows selected by
seq: the log's seq is the match's version, so "the entries since version v" is a range scan on the
`(fixture_id, seq)` unique index. A value names the traces of the changes it delivers, so the hub's
one delivery line per change (`live.delivered`) is found by `scoreline trace`.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from functools import cached_property
from typing import Any

from pydantic import BaseModel, ConfigDict
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from scoreline.db.tables import timeline_item
from scoreline.readmodel.queries import load_match
from scoreline.readmodel.views import MatchView


class EntryView(BaseModel):
    """One log entry: an event, an amendment or retraction (with the seq it targets), a state or
    score change, or a desk command. `body` is the entry as the log stores it."""

    model_config = ConfigDict(frozen=True)

    seq: int
    kind: str
    origin: str
    minute: int | None
    extra_minute: int | None
    target_seq: int | None
    body: dict[str, Any]
    created_at: datetime
    trace_id: str | None = None
    """The trace of the request or provider poll that logged it: one search finds its whole path."""


class LiveValue(BaseModel):
    """A match at `version`, and the entries after `previous` up to it.

    `previous` is None for a plain current value (nothing to follow on from: a new client, or one
    whose Last-Event-ID this match never had); otherwise `entries` are exactly the seqs in
    (`previous`, `version`], so a client that holds `previous` can apply them without a gap.
    """

    model_config = ConfigDict(frozen=True)

    fixture_id: int
    version: int
    previous: int | None
    match: MatchView
    entries: list[EntryView]
    trace_ids: tuple[str, ...] = ()
    """The traces of the changes this value delivers: of the outbox rows that made the hub load it,
    then of its entries (a commit that landed before the load is delivered here, and its own row is
    then dropped as not newer). Empty for a value a client asked for itself."""

    def following(self, previous: int, entries: list[EntryView]) -> LiveValue:
        """The same value with other entries, as a new object (not `model_copy`, which would carry
        over an already serialised `wire`)."""
        return LiveValue(
            fixture_id=self.fixture_id,
            version=self.version,
            previous=previous,
            match=self.match,
            entries=entries,
            trace_ids=self.trace_ids,
        )

    @cached_property
    def wire(self) -> str:
        """The JSON sent to clients, serialised once however many connections send it."""
        return self.model_dump_json()


async def load_value(
    engine: AsyncEngine, fixture_id: int, after: int | None, *, traces: Sequence[str] = ()
) -> LiveValue | None:
    """The current value with the entries after version `after` (none if `after` is None).

    An `after` beyond the current version is not one of this match's versions: the value then
    comes without entries (`previous` None), so the client starts over from it. `traces` are the
    trace ids of the outbox rows the value answers; it carries them and those of its entries.

    Returns:
        None if the fixture does not exist.
    """
    async with engine.connect() as conn:
        snapshot = await conn.execution_options(isolation_level="REPEATABLE READ", postgresql_readonly=True)
        async with snapshot.begin():
            view = await load_match(snapshot, fixture_id)
            if view is None:
                return None
            if after is None or after > view.version:
                return current_value(view, traces)
            entries = await load_entries(snapshot, fixture_id, after, view.version)
    return LiveValue(
        fixture_id=fixture_id,
        version=view.version,
        previous=after,
        match=view,
        entries=entries,
        trace_ids=_traces_of(traces, entries),
    )


def current_value(view: MatchView, traces: Sequence[str] = ()) -> LiveValue:
    """A value with no history: what a client that holds nothing of this match is sent first."""
    return LiveValue(
        fixture_id=view.fixture.id,
        version=view.version,
        previous=None,
        match=view,
        entries=[],
        trace_ids=tuple(traces),
    )


def _traces_of(traces: Sequence[str], entries: list[EntryView]) -> tuple[str, ...]:
    """`traces`, then the entries' traces not among them, each once, in that order."""
    ordered = dict.fromkeys(traces)
    ordered.update(dict.fromkeys(entry.trace_id for entry in entries if entry.trace_id is not None))
    return tuple(ordered)


async def load_entries(conn: AsyncConnection, fixture_id: int, after: int, upto: int) -> list[EntryView]:
    """Log entries with `after < seq <= upto`, by seq."""
    if upto <= after:
        return []
    rows = await conn.execute(
        select(
            timeline_item.c.seq,
            timeline_item.c.kind,
            timeline_item.c.origin,
            timeline_item.c.minute,
            timeline_item.c.extra_minute,
            timeline_item.c.target_seq,
            timeline_item.c.body,
            timeline_item.c.created_at,
            timeline_item.c.trace_id,
        )
        .where(
            timeline_item.c.fixture_id == fixture_id,
            timeline_item.c.seq > after,
            timeline_item.c.seq <= upto,
        )
        .order_by(timeline_item.c.seq)
    )
    return [EntryView.model_validate(row._asdict()) for row in rows]
