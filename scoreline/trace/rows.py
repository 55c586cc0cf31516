"""A trace's rows, read from Postgres in one snapshot so they agree with each other.

Five tables carry trace ids: `command` (a desk's command and its answer), `timeline_item` (the log
entries it made), `domain_event` (the outbox row that announced them), `push_attempt` (every APNs
request it caused) and `published_document` (the feed versions whose rebuild gathered it; a version
lists several traces). None of these columns is indexed, so each look-up scans its table: fine for
a support look-up now and then, worth an index before it is run often on a big database.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC
from typing import Any

from pydantic_core import to_jsonable_python
from sqlalchemy import Row, Table, Text, cast, select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from scoreline.db.tables import command, domain_event, published_document, push_attempt, timeline_item
from scoreline.trace.models import Source, TraceItem

_Row = Row[*tuple[Any, ...]]


@dataclass(frozen=True)
class _Read:
    """What differs between the tables a trace is read from, so that one query serves all five.

    Attributes:
        columns: The detail shown, space-separated, in this order; `created_at` is always read last.
        order: The columns that give the order the rows were written in.
        what: The row in one line for people.
        as_text: Columns read as text, being of a type SQLAlchemy has none for (`xid8`).
        lists_traces: The table lists several traces a row (`trace_ids`) rather than one (`trace_id`).
    """

    source: Source
    table: Table
    columns: str
    order: str
    what: Callable[[_Row], str]
    as_text: str = ""
    lists_traces: bool = False


_READS = (
    _Read(
        "command",
        command,
        "command_id fixture_id sender code outcome seq saw sent_at input answer",
        order="created_at command_id",
        what=lambda row: f"command {row.code} {row.outcome}" + _seq(row.seq) + f" ({row.sender})",
    ),
    _Read(
        "entry",
        timeline_item,
        "fixture_id seq kind origin minute extra_minute target_seq command_id match_event_id body",
        order="created_at fixture_id seq",
        what=lambda row: f"entry {row.kind} ({row.origin}) fixture {row.fixture_id}" + _seq(row.seq),
    ),
    _Read(
        "outbox",
        domain_event,
        "id xid fixture_id seq kind payload",
        order="xid id",
        what=lambda row: f"outbox {row.kind} fixture {row.fixture_id}" + _version(row.seq),
        as_text="xid",
    ),
    _Read(
        "push",
        push_attempt,
        "id fixture_id effect status reason event_key device_id live_activity_id token_kind attempt priority"
        " payload_bytes apns_id latency_ms",
        order="created_at id",
        what=lambda row: f"push {row.effect} {_push_outcome(row)}",
    ),
    _Read(
        "feed",
        published_document,
        "doc_key version etag content_hash competition_id trace_ids",
        order="created_at doc_key version",
        what=lambda row: f"feed {row.doc_key}" + _version(row.version),
        lists_traces=True,
    ),
)
"""The five tables, in the order a trace's rows are listed."""


async def rows_of(engine: AsyncEngine, trace_id: str) -> list[TraceItem]:
    """Every row that carries `trace_id`, table by table, each table in the order it was written."""
    items: list[TraceItem] = []
    async with engine.connect() as conn:
        snapshot = await conn.execution_options(isolation_level="REPEATABLE READ", postgresql_readonly=True)
        async with snapshot.begin():
            for read in _READS:
                items += await _rows(snapshot, read, trace_id)
    return items


async def _rows(conn: AsyncConnection, read: _Read, trace_id: str) -> list[TraceItem]:
    """The rows of `read`'s table that carry `trace_id`, as items."""
    c = read.table.c
    columns = [
        cast(c[name], Text).label(name) if name in read.as_text.split() else c[name]
        for name in read.columns.split()
    ]
    carries = c.trace_ids.any(trace_id) if read.lists_traces else c.trace_id == trace_id
    rows = await conn.execute(
        select(*columns, c.created_at).where(carries).order_by(*(c[name] for name in read.order.split()))
    )
    return [_item(read.source, row, read.what(row)) for row in rows]


def _item(source: Source, row: _Row, what: str) -> TraceItem:
    """The row as an item: `created_at` is its instant, every other column its detail (as JSON values)."""
    detail = row._asdict()
    at = detail.pop("created_at")
    return TraceItem(at=at.astimezone(UTC), source=source, what=what, detail=to_jsonable_python(detail))


def _seq(seq: int | None) -> str:
    return "" if seq is None else f" seq {seq}"


def _version(version: int | None) -> str:
    return "" if version is None else f" v{version}"


def _push_outcome(row: _Row) -> str:
    """APNs' status (and reason), or why no answer came."""
    if row.status is None:
        return f"no answer: {row.reason}" if row.reason else "no answer"
    return f"{row.status} {row.reason}" if row.reason else str(row.status)
