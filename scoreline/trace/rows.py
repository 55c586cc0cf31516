"""A trace's rows, read from Postgres in one snapshot so they agree with each other.

Five tables carry trace ids: `command` (a desk's command and its answer), `timeline_item` (the log
entries it made), `domain_event` (the outbox row that announced them), `push_attempt` (every APNs
request it caused) and `published_document` (the feed versions whose rebuild gathered it; a version
lists several traces). None of these columns is indexed, so each look-up scans its table: fine for
a support look-up now and then, worth an index before it is run often on a big database.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC
from typing import Any

from pydantic_core import to_jsonable_python
from sqlalchemy import Row, Text, cast, select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from scoreline.db.tables import command, domain_event, published_document, push_attempt, timeline_item
from scoreline.trace.models import Source, TraceItem

_Row = Row[*tuple[Any, ...]]


async def rows_of(engine: AsyncEngine, trace_id: str) -> list[TraceItem]:
    """Every row that carries `trace_id`, table by table, each table in the order it was written."""
    items: list[TraceItem] = []
    async with engine.connect() as conn:
        snapshot = await conn.execution_options(isolation_level="REPEATABLE READ", postgresql_readonly=True)
        async with snapshot.begin():
            for query in _QUERIES:
                items += await query(snapshot, trace_id)
    return items


async def _commands(conn: AsyncConnection, trace_id: str) -> list[TraceItem]:
    rows = await conn.execute(
        select(
            command.c.command_id,
            command.c.fixture_id,
            command.c.sender,
            command.c.code,
            command.c.outcome,
            command.c.seq,
            command.c.saw,
            command.c.sent_at,
            command.c.input,
            command.c.answer,
            command.c.created_at,
        )
        .where(command.c.trace_id == trace_id)
        .order_by(command.c.created_at, command.c.command_id)
    )
    return [
        _item("command", row, f"command {row.code} {row.outcome}" + _seq(row.seq) + f" ({row.sender})")
        for row in rows
    ]


async def _entries(conn: AsyncConnection, trace_id: str) -> list[TraceItem]:
    rows = await conn.execute(
        select(
            timeline_item.c.fixture_id,
            timeline_item.c.seq,
            timeline_item.c.kind,
            timeline_item.c.origin,
            timeline_item.c.minute,
            timeline_item.c.extra_minute,
            timeline_item.c.target_seq,
            timeline_item.c.command_id,
            timeline_item.c.match_event_id,
            timeline_item.c.body,
            timeline_item.c.created_at,
        )
        .where(timeline_item.c.trace_id == trace_id)
        .order_by(timeline_item.c.created_at, timeline_item.c.fixture_id, timeline_item.c.seq)
    )
    return [
        _item("entry", row, f"entry {row.kind} ({row.origin}) fixture {row.fixture_id}" + _seq(row.seq))
        for row in rows
    ]


async def _outbox(conn: AsyncConnection, trace_id: str) -> list[TraceItem]:
    rows = await conn.execute(
        select(
            domain_event.c.id,
            cast(domain_event.c.xid, Text).label("xid"),
            domain_event.c.fixture_id,
            domain_event.c.seq,
            domain_event.c.kind,
            domain_event.c.payload,
            domain_event.c.created_at,
        )
        .where(domain_event.c.trace_id == trace_id)
        .order_by(domain_event.c.xid, domain_event.c.id)
    )
    return [
        _item("outbox", row, f"outbox {row.kind} fixture {row.fixture_id}" + _version(row.seq))
        for row in rows
    ]


async def _pushes(conn: AsyncConnection, trace_id: str) -> list[TraceItem]:
    rows = await conn.execute(
        select(
            push_attempt.c.id,
            push_attempt.c.fixture_id,
            push_attempt.c.effect,
            push_attempt.c.status,
            push_attempt.c.reason,
            push_attempt.c.event_key,
            push_attempt.c.device_id,
            push_attempt.c.live_activity_id,
            push_attempt.c.token_kind,
            push_attempt.c.attempt,
            push_attempt.c.priority,
            push_attempt.c.payload_bytes,
            push_attempt.c.apns_id,
            push_attempt.c.latency_ms,
            push_attempt.c.created_at,
        )
        .where(push_attempt.c.trace_id == trace_id)
        .order_by(push_attempt.c.created_at, push_attempt.c.id)
    )
    return [_item("push", row, f"push {row.effect} {_push_outcome(row)}") for row in rows]


async def _feeds(conn: AsyncConnection, trace_id: str) -> list[TraceItem]:
    rows = await conn.execute(
        select(
            published_document.c.doc_key,
            published_document.c.version,
            published_document.c.etag,
            published_document.c.content_hash,
            published_document.c.competition_id,
            published_document.c.trace_ids,
            published_document.c.created_at,
        )
        .where(published_document.c.trace_ids.any(trace_id))
        .order_by(published_document.c.created_at, published_document.c.doc_key, published_document.c.version)
    )
    return [_item("feed", row, f"feed {row.doc_key}" + _version(row.version)) for row in rows]


_QUERIES: tuple[Callable[[AsyncConnection, str], Awaitable[list[TraceItem]]], ...] = (
    _commands,
    _entries,
    _outbox,
    _pushes,
    _feeds,
)


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
