"""The builder as a durable outbox consumer: real Postgres and Redis, real commits and NOTIFYs."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import redis.asyncio as aioredis
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from activities.ingest.store import IngestStore
from activities.provider.normaliser import normalise_fixture
from devkit.devstack.ports import free_port
from scoreline.db.urls import asyncpg_dsn
from scoreline.feeds.builder import FeedBuilder
from scoreline.feeds.store import read_published
from tests.feeds.changes import MATCH, score, versions
from tests.feeds.conftest import running_builder
from tests.readmodel.rows import MatchLog
from tests.support.waiting import eventually

RECORDINGS = Path(__file__).resolve().parents[2] / "recordings"


async def _latest_body(engine: AsyncEngine, doc_key: str) -> dict[str, Any] | None:
    found = await versions(engine, doc_key)
    return found[-1]["body"] if found else None


async def _home_score_is(engine: AsyncEngine, fixture_id: int, home: int) -> bool:
    body = await _latest_body(engine, f"match/{fixture_id}")
    return body is not None and body["scoreboard"]["score"]["home"] == home


async def _cursor(engine: AsyncEngine) -> tuple[int, int] | None:
    async with engine.connect() as conn:
        row = (
            await conn.execute(text("SELECT last_xid::text AS xid, last_event_id FROM feed_cursor"))
        ).first()
    return None if row is None else (int(row.xid), int(row.last_event_id))


async def _last_outbox_row(engine: AsyncEngine) -> tuple[int, int]:
    async with engine.connect() as conn:
        row = (
            await conn.execute(
                text("SELECT xid::text AS xid, id FROM domain_event ORDER BY xid DESC, id DESC LIMIT 1")
            )
        ).one()
    return int(row.xid), int(row.id)


async def test_a_replayed_match_ends_as_the_ingest_left_it(
    engine: AsyncEngine, redis: aioredis.Redis, database_url: str
) -> None:
    """The real ingest, line by line: the match document and its day's list follow it to full time."""
    lines = (RECORDINGS / "football-basic.jsonl").read_text().splitlines()[1:]
    snapshots = [normalise_fixture(json.loads(line)["fixture"]) for line in lines if '"fixture"' in line]
    expected = json.loads((RECORDINGS / "football-basic.expected.json").read_text())[str(MATCH)]
    store = IngestStore(engine)
    async with running_builder(engine, redis, database_url):
        for snapshot in snapshots:
            await store.ingest(snapshot, "live")

        async def finished() -> dict[str, Any] | None:
            body = await _latest_body(engine, f"match/{MATCH}")
            done = body is not None and body["scoreboard"]["state"] == "finished"
            return body if done else None

        body = await eventually(finished, within=15)

        async def day_finished() -> dict[str, Any] | None:
            # The day's list is its own document: published in the same pass or the next one.
            day = await _latest_body(engine, "fixtures/2026-03-14")
            states = [entry["state"] for entry in day["fixtures"]] if day else []
            return day if states == ["finished"] else None

        day = await eventually(day_finished, within=15)
    assert body["scoreboard"]["score"] == expected["score"]
    assert body["competition_id"] == snapshots[0].league_id
    live = sorted([e["stream"], e["provider_event_id"]] for e in body["events"] if not e["retracted"])
    assert live == sorted(expected["events"])
    assert [(entry["fixture"]["id"], entry["state"]) for entry in day["fixtures"]] == [(MATCH, "finished")]
    cached = await read_published(redis, f"match/{MATCH}")
    assert cached is not None
    assert json.loads(cached.body) == body


async def test_the_cursor_survives_a_restart(
    engine: AsyncEngine, redis: aioredis.Redis, database_url: str
) -> None:
    """A new builder starts where the last one stopped: it rebuilds what changed since, not history."""
    first = await MatchLog.create(engine, MATCH)
    second = await MatchLog.create(engine, MATCH + 1)
    async with running_builder(engine, redis, database_url):
        await score(first, 1, 0)
        await eventually(lambda: _home_score_is(engine, MATCH, 1))
        await eventually(lambda: _cursor_at_end(engine))

    # While no builder runs: the first match changes with no outbox row (so only a re-read of old
    # rows would publish it), the second with one.
    await first.board("live_first_half", 5, 0)
    await score(second, 2, 0)
    async with running_builder(engine, redis, database_url):
        await eventually(lambda: _home_score_is(engine, MATCH + 1, 2))
        await eventually(lambda: _cursor_at_end(engine))
    assert [v["version"] for v in await versions(engine, f"match/{MATCH}")] == [1]
    assert await _home_score_is(engine, MATCH, 1)


async def _cursor_at_end(engine: AsyncEngine) -> bool:
    return await _cursor(engine) == await _last_outbox_row(engine)


async def test_a_late_commit_is_not_skipped(
    engine: AsyncEngine, redis: aioredis.Redis, database_url: str
) -> None:
    """A transaction that took its outbox id first but commits last is still read, then the cursor passes both.

    While it is open, even the later, committed row waits (it is above the snapshot's xmin).
    """
    await MatchLog.create(engine, MATCH)
    quick_match = await MatchLog.create(engine, MATCH + 1)
    slow = await asyncpg.connect(asyncpg_dsn(database_url))
    try:
        async with running_builder(engine, redis, database_url):
            transaction = slow.transaction()
            await transaction.start()
            await slow.execute(
                "INSERT INTO domain_event (fixture_id, kind, payload) VALUES ($1, 'match.changed', '{}')",
                MATCH,
            )
            await slow.execute(
                "INSERT INTO scoreboard (fixture_id, version, state, body, home_score) VALUES ($1, 1, 'live_first_half', '{}', 3)",
                MATCH,
            )
            await score(quick_match, 1, 0)  # a later transaction, committed at once
            await asyncio.sleep(1.5)
            assert await versions(engine, f"match/{MATCH + 1}") == []  # held back behind the open one
            await transaction.commit()
            await eventually(lambda: _home_score_is(engine, MATCH, 3))
            await eventually(lambda: _home_score_is(engine, MATCH + 1, 1))
            await eventually(lambda: _cursor_at_end(engine))
    finally:
        await slow.close()


async def test_a_burst_of_changes_becomes_one_version(
    engine: AsyncEngine, redis: aioredis.Redis, database_url: str
) -> None:
    log = await MatchLog.create(engine, MATCH)
    async with running_builder(engine, redis, database_url):
        await score(log, 1, 0)
        await eventually(lambda: _home_score_is(engine, MATCH, 1))
        await score(log, 2, 0)
        await score(log, 2, 1)
        await eventually(lambda: _home_score_is(engine, MATCH, 2))
        # A later change, built after anything the burst could still have made.
        await score(log, 3, 1)
        await eventually(lambda: _home_score_is(engine, MATCH, 3))
    saved = await versions(engine, f"match/{MATCH}")
    assert [v["body"]["scoreboard"]["score"] for v in saved] == [
        {"home": 1, "away": 0},
        {"home": 2, "away": 1},
        {"home": 3, "away": 1},
    ]


async def test_no_change_is_held_more_than_three_seconds(
    engine: AsyncEngine, redis: aioredis.Redis, database_url: str
) -> None:
    """Changes every 0.3 s keep extending the gather window; the 3 s limit still publishes each in time.

    Measured on the database clock: from the change's transaction to the transaction that saved the
    first version showing it.
    """
    log = await MatchLog.create(engine, MATCH)
    changes = 16
    async with running_builder(engine, redis, database_url):
        for goal in range(1, changes + 1):
            await score(log, goal, 0)
            await asyncio.sleep(0.3)
        await eventually(lambda: _home_score_is(engine, MATCH, changes))
    async with engine.connect() as conn:
        changed_at = list(
            (await conn.execute(text("SELECT created_at FROM domain_event ORDER BY id"))).scalars()
        )
    saved = await versions(engine, f"match/{MATCH}")
    for goal, moment in enumerate(changed_at, start=1):
        shown = next(v for v in saved if v["body"]["scoreboard"]["score"]["home"] >= goal)
        assert shown["created_at"] - moment <= timedelta(seconds=3), (goal, shown["created_at"] - moment)
    assert len(saved) < changes / 2  # gathered


async def test_one_builder_leads_and_a_standby_takes_over(
    engine: AsyncEngine, redis: aioredis.Redis, database_url: str
) -> None:
    log = await MatchLog.create(engine, MATCH)
    async with running_builder(engine, redis, database_url) as leader:
        await eventually(lambda: _is_set(leader.leading))
        standby = FeedBuilder(engine, redis, database_url, sweep_interval=None)
        standby.start()
        try:
            await asyncio.sleep(0.5)
            assert not standby.leading.is_set()
            await leader.stop()
            await eventually(lambda: _is_set(standby.leading), within=15)
            await score(log, 1, 0)
            await eventually(lambda: _home_score_is(engine, MATCH, 1))
        finally:
            await standby.stop()


async def _is_set(event: asyncio.Event) -> bool:
    return event.is_set()


async def test_with_redis_down_documents_are_still_published_in_postgres(
    engine: AsyncEngine, database_url: str
) -> None:
    broken = aioredis.Redis.from_url(f"redis://127.0.0.1:{free_port()}/0")
    log = await MatchLog.create(engine, MATCH)
    try:
        async with running_builder(engine, broken, database_url):
            await score(log, 1, 0)
            await eventually(lambda: _home_score_is(engine, MATCH, 1))
            await score(log, 2, 0)
            await eventually(lambda: _home_score_is(engine, MATCH, 2))
    finally:
        await broken.aclose()


async def test_the_sweep_publishes_todays_fixture_list_and_unlogged_matches(
    engine: AsyncEngine, redis: aioredis.Redis, database_url: str
) -> None:
    """A fixture the sync just added has no outbox row; the sweep still gives it its documents."""
    kickoff = datetime.now(UTC).replace(microsecond=0)
    await MatchLog.create(engine, MATCH, kickoff=kickoff)
    async with running_builder(engine, redis, database_url, sweep_interval=timedelta(seconds=60)):
        day = await eventually(lambda: _latest_body(engine, f"fixtures/{kickoff.date().isoformat()}"))
        match = await eventually(lambda: _latest_body(engine, f"match/{MATCH}"))
    assert [entry["fixture"]["id"] for entry in day["fixtures"]] == [MATCH]
    assert match["scoreboard"]["state"] == "scheduled"
