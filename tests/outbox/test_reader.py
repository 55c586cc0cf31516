"""The outbox reader against real Postgres: commit-safe order, and no late commit ever skipped."""

from __future__ import annotations

import asyncpg
from sqlalchemy.ext.asyncio import AsyncEngine

from scoreline.outbox.reader import Batch, Cursor, OutboxEvent, current_end, read_after
from tests.outbox.writer import MatchWriter
from tests.support.waiting import eventually

INSERT = (
    "INSERT INTO domain_event (fixture_id, seq, kind, payload) VALUES ($1, $2, 'match.changed', '{}') "
    "RETURNING id, xid::text"
)


async def _read(engine: AsyncEngine, cursor: Cursor, limit: int = 100) -> Batch:
    async with engine.connect() as conn:
        return await read_after(conn, cursor, limit)


async def _settled(engine: AsyncEngine, cursor: Cursor, count: int, limit: int = 100) -> list[OutboxEvent]:
    """Read batches after `cursor` until `count` events came (other tests on the same server may
    hold the horizon back for a moment: the rows are late then, never lost)."""
    events: list[OutboxEvent] = []

    async def more() -> bool:
        nonlocal cursor
        batch = await _read(engine, cursor, limit)
        assert len(batch.events) <= limit
        events.extend(batch.events)
        if batch.events:
            cursor = batch.events[-1].cursor
        return len(events) >= count

    await eventually(more)
    return events


async def test_a_late_commit_is_read_after_it_commits_and_in_xid_order(engine: AsyncEngine, dsn: str) -> None:
    """A writes first and commits last; B commits first. Nothing is read past A while it is open,
    then both come, A first: an id cursor would have moved past A's id and lost it."""
    await MatchWriter.create(engine, 1)
    first, second = await asyncpg.connect(dsn), await asyncpg.connect(dsn)
    try:
        async with engine.connect() as conn:
            start = await current_end(conn)
        late = first.transaction()
        await late.start()
        a_id, a_xid = await first.fetchrow(INSERT, 1, 1)
        async with second.transaction():
            b_id, b_xid = await second.fetchrow(INSERT, 1, 2)
        assert (int(a_xid), a_id) < (int(b_xid), b_id)

        while_open = await _read(engine, start)
        assert while_open.events == []
        assert while_open.held, "B is committed but must wait behind A"

        await late.commit()
        after = await _settled(engine, start, 2)
    finally:
        await first.close()
        await second.close()
    assert [(e.id, e.xid, e.seq) for e in after] == [(a_id, int(a_xid), 1), (b_id, int(b_xid), 2)]


async def test_a_transaction_that_took_its_xid_early_but_its_id_late_comes_first(
    engine: AsyncEngine, dsn: str
) -> None:
    """Order is the writers' xid, not the row id: the earlier transaction's row precedes."""
    await MatchWriter.create(engine, 1)
    first, second = await asyncpg.connect(dsn), await asyncpg.connect(dsn)
    try:
        async with engine.connect() as conn:
            start = await current_end(conn)
        early = first.transaction()
        await early.start()
        await first.execute("SELECT pg_current_xact_id()")
        async with second.transaction():
            b_id, _ = await second.fetchrow(INSERT, 1, 2)
        a_id, _ = await first.fetchrow(INSERT, 1, 1)
        await early.commit()
    finally:
        await first.close()
        await second.close()
    assert a_id > b_id
    assert [e.id for e in await _settled(engine, start, 2)] == [a_id, b_id]


async def test_batches_are_bounded_and_resume_after_the_cursor(engine: AsyncEngine) -> None:
    """Reading in batches of 2 after each batch's last cursor yields every row exactly once."""
    match = await MatchWriter.create(engine, 1)
    async with engine.connect() as conn:
        cursor = await current_end(conn)
    for _ in range(5):
        await match.change()
    events = await _settled(engine, cursor, 5, limit=2)
    assert [event.seq for event in events] == [1, 2, 3, 4, 5]
    assert (await _read(engine, events[-1].cursor)).events == []


async def test_a_reader_that_starts_at_the_end_sees_no_history(engine: AsyncEngine) -> None:
    match = await MatchWriter.create(engine, 1)
    async with engine.connect() as conn:
        start = await current_end(conn)
    await match.change()
    await _settled(engine, start, 1)
    async with engine.connect() as conn:
        end = await current_end(conn)
    assert (await _read(engine, end)).events == []
    await match.change(goal="home")
    events = await _settled(engine, end, 1)
    assert [(e.fixture_id, e.seq, e.kind) for e in events] == [(1, 2, "match.changed")]
    assert events[0].payload["score"] == {"home": 1, "away": 0}
