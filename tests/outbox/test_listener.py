"""The outbox listener: woken by NOTIFY, coalescing, safety reads, reconnects, one cursor per consumer."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from datetime import timedelta

import asyncpg
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from scoreline.outbox.listener import APPLICATION_NAME, OutboxListener
from scoreline.outbox.reader import OutboxEvent
from tests.outbox.writer import MatchWriter
from tests.support.waiting import eventually


class Collected:
    """A consumer that keeps what it is given; `gate` (when cleared) holds it inside a delivery."""

    def __init__(self) -> None:
        self.seqs: list[int | None] = []
        self.calls = 0
        self.gate = asyncio.Event()
        self.gate.set()
        self.entered = asyncio.Event()
        self.failures = 0

    async def __call__(self, events: Sequence[OutboxEvent]) -> None:
        self.calls += 1
        self.entered.set()
        await self.gate.wait()
        if self.failures:
            self.failures -= 1
            raise RuntimeError("consumer hiccup")
        self.seqs += [event.seq for event in events]

    async def has(self, count: int) -> bool:
        return len(self.seqs) >= count


@asynccontextmanager
async def running(dsn: str, engine: AsyncEngine, safety: float = 60.0) -> AsyncIterator[OutboxListener]:
    listener = OutboxListener(dsn, engine, safety_interval=timedelta(seconds=safety))
    listener.start()
    try:
        await asyncio.wait_for(listener.listening.wait(), 10)
        yield listener
    finally:
        await listener.stop()


async def test_notify_wakes_the_reader(dsn: str, engine: AsyncEngine) -> None:
    """With the safety read an hour away, only the NOTIFY can bring the change."""
    match = await MatchWriter.create(engine, 1)
    consumer = Collected()
    async with running(dsn, engine, safety=3600) as listener:
        await listener.subscribe(consumer, name="test")
        await match.change()
        await eventually(lambda: consumer.has(1))
    assert consumer.seqs == [1]


async def test_many_notifications_cost_one_read(dsn: str, engine: AsyncEngine) -> None:
    """Fifty commits while a read is busy are picked up by the next read cycle, not fifty."""
    match = await MatchWriter.create(engine, 1)
    consumer = Collected()
    async with running(dsn, engine, safety=3600) as listener:
        await listener.subscribe(consumer, name="test")
        consumer.gate.clear()
        await match.change()
        await asyncio.wait_for(consumer.entered.wait(), 10)
        reads, rereads = listener.reads, listener.rereads
        for _ in range(50):
            await match.change()
        consumer.gate.set()
        await eventually(lambda: consumer.has(51))
        # The blocked cycle, one more for the fifty, and at most one for a last NOTIFY that reached
        # the socket after that began. Retries while another transaction on the server held rows
        # back are counted apart (they depend on what else runs there).
        assert (listener.reads - reads) - (listener.rereads - rereads) <= 3
    assert consumer.seqs == list(range(1, 52))


async def test_the_safety_read_finds_a_change_nobody_announced(dsn: str, engine: AsyncEngine) -> None:
    match = await MatchWriter.create(engine, 1)
    consumer = Collected()
    async with running(dsn, engine, safety=0.3) as listener:
        await listener.subscribe(consumer, name="test")
        async with engine.begin() as conn:
            await conn.execute(
                text(
                    "INSERT INTO domain_event (fixture_id, seq, kind, payload) "
                    "VALUES (:f, 1, 'match.changed', '{}')"
                ),
                {"f": match.fixture_id},
            )
        await eventually(lambda: consumer.has(1))


async def test_each_consumer_has_its_own_cursor_and_a_new_one_starts_at_the_end(
    dsn: str, engine: AsyncEngine
) -> None:
    match = await MatchWriter.create(engine, 1)
    early, late = Collected(), Collected()
    async with running(dsn, engine) as listener:
        await listener.subscribe(early, name="early")
        await match.change()
        await eventually(lambda: early.has(1))
        await listener.subscribe(late, name="late")
        await match.change()
        await eventually(lambda: late.has(1))
        await eventually(lambda: early.has(2))
    assert early.seqs == [1, 2]
    assert late.seqs == [2]


async def test_a_failing_consumer_gets_its_rows_again_and_does_not_hold_up_others(
    dsn: str, engine: AsyncEngine
) -> None:
    match = await MatchWriter.create(engine, 1)
    flaky, steady = Collected(), Collected()
    flaky.failures = 2
    async with running(dsn, engine) as listener:
        await listener.subscribe(flaky, name="flaky")
        await listener.subscribe(steady, name="steady")
        await match.change()
        await match.change()
        await eventually(lambda: steady.has(2))
        await eventually(lambda: flaky.has(2))
    assert steady.seqs == [1, 2]
    assert flaky.seqs == [1, 2]
    assert flaky.calls >= 3


async def test_the_listen_connection_is_reopened_after_postgres_drops_it(
    dsn: str, engine: AsyncEngine
) -> None:
    """The LISTEN backend is killed: the listener reconnects, catches up, and NOTIFY works again."""
    match = await MatchWriter.create(engine, 1)
    consumer = Collected()
    admin = await asyncpg.connect(dsn)
    try:
        async with running(dsn, engine, safety=3600) as listener:
            await listener.subscribe(consumer, name="test")
            find = "SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()"
            old = await admin.fetchval(find, APPLICATION_NAME)
            assert await admin.fetchval("SELECT pg_terminate_backend($1)", old)
            # Committed while no one listens: the read after reconnecting finds it.
            await match.change()

            async def reconnected() -> bool:
                pid = await admin.fetchval(find, APPLICATION_NAME)
                return pid is not None and pid != old and listener.listening.is_set()

            await eventually(reconnected, within=20)
            await eventually(lambda: consumer.has(1))
            await match.change()
            await eventually(lambda: consumer.has(2))
    finally:
        await admin.close()
    assert consumer.seqs == [1, 2]
