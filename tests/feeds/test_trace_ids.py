"""Feed versions name the changes they show: the trace ids of the outbox rows gathered into them."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import redis.asyncio as aioredis
from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncEngine

from activities.ingest.store import IngestStore
from activities.provider.normaliser import normalise_fixture
from domain.snapshot import Snapshot
from scoreline.db.tables import domain_event, published_document
from scoreline.tracing import new_trace_id
from tests.feeds.changes import MATCH
from tests.feeds.conftest import running_builder
from tests.support.waiting import eventually

RECORDINGS = Path(__file__).resolve().parents[2] / "recordings"
DOC = f"match/{MATCH}"


def _snapshots() -> list[Snapshot]:
    lines = (RECORDINGS / "football-basic.jsonl").read_text().splitlines()[1:]
    return [normalise_fixture(json.loads(line)["fixture"]) for line in lines if '"fixture"' in line]


class TracedIngest:
    """The recording's snapshots through the real ingest, each under a trace id of its own."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._store = IngestStore(engine)
        self._left = iter(_snapshots())

    async def next_change(self) -> str:
        """Ingest snapshots until one logs something; the trace id it was logged with."""
        for snapshot in self._left:
            trace_id = new_trace_id()
            summary = await self._store.ingest(snapshot, "live", trace_id=trace_id)
            if summary.version > summary.previous_version:
                return trace_id
        raise AssertionError("the recording has no further change")


async def _versions(engine: AsyncEngine) -> dict[int, list[str]]:
    """The match document's versions and the traces each lists."""
    async with engine.connect() as conn:
        rows = await conn.execute(
            select(published_document.c.version, published_document.c.trace_ids)
            .where(published_document.c.doc_key == DOC)
            .order_by(published_document.c.version)
        )
        return {row.version: list(row.trace_ids) for row in rows}


async def _outbox_traces(engine: AsyncEngine) -> list[str | None]:
    async with engine.connect() as conn:
        rows = await conn.execute(select(domain_event.c.trace_id).order_by(domain_event.c.id))
        return [row.trace_id for row in rows]


async def test_a_version_lists_the_traces_of_the_changes_it_shows(
    engine: AsyncEngine, redis: aioredis.Redis, database_url: str
) -> None:
    """The first change is one version with its trace; two changes gathered into one rebuild are
    one version listing both, in the order they were read; an outbox row that changes nothing in
    the document makes no version, so no version names its trace."""
    ingest = TracedIngest(engine)
    gathering = {"gather": timedelta(seconds=2), "max_hold": timedelta(seconds=8)}
    async with running_builder(engine, redis, database_url, **gathering) as builder:
        await builder.leading.wait()
        first = await ingest.next_change()
        assert await eventually(lambda: _versions(engine), within=15) == {1: [first]}

        second = await ingest.next_change()
        third = await ingest.next_change()
        assert await _outbox_traces(engine) == [first, second, third]

        async def two_versions() -> dict[int, list[str]] | None:
            found = await _versions(engine)
            return found if len(found) == 2 else None

        assert await eventually(two_versions, within=20) == {1: [first], 2: [second, third]}

        await announce(engine, MATCH, new_trace_id())
        await eventually(lambda: _settled(engine), within=20)
    assert await _versions(engine) == {1: [first], 2: [second, third]}


async def announce(engine: AsyncEngine, fixture_id: int, trace_id: str) -> None:
    """An outbox row and its wake-up under `trace_id`, with no change to the match behind it."""
    async with engine.begin() as conn:
        await conn.execute(
            domain_event.insert().values(
                fixture_id=fixture_id,
                kind="match.changed",
                payload={"fixture_id": fixture_id},
                trace_id=trace_id,
            )
        )
        await conn.execute(text("SELECT pg_notify('scoreline_changes', '{}')"))


async def _settled(engine: AsyncEngine) -> bool:
    """The builder's durable cursor has passed the last outbox row: every document it touched is rebuilt."""
    async with engine.connect() as conn:
        cursor = (await conn.execute(text("SELECT last_event_id FROM feed_cursor"))).scalar()
        last = (await conn.execute(text("SELECT max(id) FROM domain_event"))).scalar()
    return cursor is not None and cursor == last
