"""The fixture sync's writes against real Postgres: one statement, only changed rows, never a live match.

The listing is the one the sync itself reads: `SportMonksClient.fixtures_between(today, today + 1)`
from the provider simulator replaying football-three-matches (three fixtures, all not started at
replay time 0). A fixture is "live" once its own ingest has written its scoreboard.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import asyncpg
import pytest

from activities.ingest.store import IngestStore
from domain.snapshot import Snapshot
from scoreline.db.urls import asyncpg_dsn
from scoreline.settings import Settings
from tests.match.harness import fast_settings
from tests.support.provider import running_provider
from tests.support.worker import worker_dependencies

pytestmark = pytest.mark.timeout(60)

LIVE = 81000001
FIXTURES = (81000001, 81000002, 81000003)
STALE_NAME = "a name the provider no longer uses"
LOCK_PATIENCE = 5.0
"""Seconds the sync may take with a row lock held elsewhere; it needs milliseconds, the lock is held
until the end of the test."""


@dataclass
class Day:
    """The day's listing as the sync sees it, the store it writes through, and a plain connection."""

    listing: list[Snapshot]
    store: IngestStore
    db: asyncpg.Connection
    database_url: str

    def listed(self, fixture_id: int) -> Snapshot:
        return next(snapshot for snapshot in self.listing if snapshot.fixture_id == fixture_id)

    async def make_live(self, fixture_id: int) -> None:
        """The match's own ingest runs once: its fixture row and its scoreboard exist."""
        await self.store.ingest(self.listed(fixture_id), "live")
        assert (
            await self.db.fetchval("SELECT count(*) FROM scoreboard WHERE fixture_id = $1", fixture_id) == 1
        )

    async def xmins(self) -> dict[int, str]:
        """Each fixture row's `xmin`: the transaction that last wrote it."""
        rows = await self.db.fetch("SELECT id, xmin::text AS xmin FROM fixture ORDER BY id")
        return {row["id"]: row["xmin"] for row in rows}

    async def names(self) -> dict[int, str]:
        rows = await self.db.fetch("SELECT id, name FROM fixture ORDER BY id")
        return {row["id"]: row["name"] for row in rows}

    async def set_name(self, fixture_id: int, name: str) -> None:
        await self.db.execute("UPDATE fixture SET name = $1 WHERE id = $2", name, fixture_id)


@pytest.fixture
async def day(settings: Settings, database_url: str) -> AsyncIterator[Day]:
    async with running_provider(["football-three-matches"], t=0.0) as provider:
        config = fast_settings(settings, provider.url)
        async with worker_dependencies(config) as deps:
            today = datetime.now(UTC).date()
            listing = await deps.provider.fixtures_between(today, today + timedelta(days=1))
            assert sorted(snapshot.fixture_id for snapshot in listing) == list(FIXTURES)
            db = await asyncpg.connect(asyncpg_dsn(database_url))
            try:
                yield Day(
                    listing=listing, store=IngestStore(deps.pools.ingest), db=db, database_url=database_url
                )
            finally:
                await db.close()


async def test_a_live_fixtures_row_lock_does_not_stall_the_sync(day: Day) -> None:
    """While another transaction holds a live fixture's row lock (a live ingest or desk commit in
    progress), the sync of the day's listing completes at once and writes the other fixtures. On the
    main of 2026-12-01 this failed: the sync upserted every listed row, the live one included, and
    waited for the lock."""
    await day.make_live(LIVE)
    holder = await asyncpg.connect(asyncpg_dsn(day.database_url))
    try:
        async with holder.transaction():
            await holder.execute("SELECT id FROM fixture WHERE id = $1 FOR UPDATE", LIVE)
            try:
                await asyncio.wait_for(day.store.upsert_fixtures(day.listing), LOCK_PATIENCE)
            except TimeoutError:
                pytest.fail(f"the sync waited {LOCK_PATIENCE}s for the live fixture's row lock")
            names = await day.names()
    finally:
        await holder.close()
    assert names == {snapshot.fixture_id: snapshot.name for snapshot in day.listing}


async def test_an_unchanged_listing_writes_no_row_and_a_changed_fact_is_written(day: Day) -> None:
    """The same listing synced twice: the second sync writes no row (every `xmin` stays); a stored
    name gone stale, and a kickoff the provider moved, are each written, and only those rows. On the
    main of 2026-12-01 this failed: every sync rewrote every listed row."""
    first_written = await day.store.upsert_fixtures(day.listing)
    first = await day.xmins()
    assert sorted(first) == list(FIXTURES)

    written = await day.store.upsert_fixtures(day.listing)
    assert await day.xmins() == first, "an unchanged listing rewrote fixture rows"
    assert (first_written, written) == (len(FIXTURES), 0)

    stale, moved = FIXTURES[1], FIXTURES[2]
    await day.set_name(stale, STALE_NAME)
    before = await day.xmins()
    written = await day.store.upsert_fixtures(day.listing)
    after = await day.xmins()
    assert (await day.names())[stale] == day.listed(stale).name
    assert after[stale] != before[stale]
    assert _others(after, stale) == _others(before, stale), "rows that did not change were rewritten"
    assert written == 1

    kickoff = day.listed(moved).kickoff
    assert kickoff is not None
    later = kickoff + timedelta(minutes=30)
    relisted = [
        snapshot.model_copy(update={"kickoff": later}) if snapshot.fixture_id == moved else snapshot
        for snapshot in day.listing
    ]
    written = await day.store.upsert_fixtures(relisted)
    moved_after = await day.xmins()
    assert await day.db.fetchval("SELECT starting_at FROM fixture WHERE id = $1", moved) == later
    assert _others(moved_after, moved) == _others(after, moved), "rows that did not change were rewritten"
    assert written == 1


def _others(xmins: dict[int, str], fixture_id: int) -> dict[int, str]:
    return {key: value for key, value in xmins.items() if key != fixture_id}


async def test_the_sync_never_writes_a_fixture_with_a_scoreboard_but_its_ingest_refreshes_it(
    day: Day,
) -> None:
    """A live fixture whose stored name is stale: the sync leaves its row untouched (same `xmin`,
    same name) while it writes the others; the match's own ingest then refreshes the name. On the
    main of 2026-12-01 this failed: the sync rewrote the live fixture's row (and took its lock)."""
    await day.make_live(LIVE)
    await day.set_name(LIVE, STALE_NAME)
    before = await day.xmins()

    await day.store.upsert_fixtures(day.listing)
    after = await day.xmins()
    assert after[LIVE] == before[LIVE], "the sync wrote a fixture that has a scoreboard"
    assert (await day.names())[LIVE] == STALE_NAME
    assert sorted(after) == list(FIXTURES)

    await day.store.ingest(day.listed(LIVE), "live")
    assert (await day.names())[LIVE] == day.listed(LIVE).name
