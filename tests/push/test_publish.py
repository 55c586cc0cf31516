"""Publishing moves mailboxes as docs/live-activities.md says, on real Postgres (no APNs needed)."""

from __future__ import annotations

import asyncpg
from sqlalchemy.ext.asyncio import AsyncEngine

from activities.push.publish import publish
from domain.moments import KeyMoment
from domain.pushes import LiveState, PushInput
from scoreline.devices import store
from tests.push import seed

ROUTINE_INTERVAL = 60.0


def _push(kind: str, key: str, at: int, version: int, **extra: object) -> PushInput:
    return PushInput.model_validate(
        {
            "fixture_id": seed.FIXTURE_ID,
            "event_key": key,
            "kind": kind,
            "priority": 10,
            "state": LiveState(home=0, away=0, state="live_first_half", version=version),
            "timestamp": at,
            **extra,
        }
    )


async def _mailboxes(db: asyncpg.Connection) -> list[asyncpg.Record]:
    rows: list[asyncpg.Record] = await db.fetch(
        """SELECT device_id, generation, status, want_stamp, want_end, alert_stamp,
                  next_try_at IS NOT NULL AS due
        FROM live_activity WHERE fixture_id = $1 ORDER BY device_id, generation""",
        seed.FIXTURE_ID,
    )
    return rows


async def test_a_start_fills_every_followers_mailbox_once(
    engine: AsyncEngine, db: asyncpg.Connection
) -> None:
    """Kick-off gives each follower one mailbox wanting the start; publishing it again adds nothing."""
    await seed.fixture(db)
    await seed.followers(db, 3)
    kickoff = _push("start", "kickoff", 1_000, 1, alert=True)
    first = await publish(engine, kickoff, ROUTINE_INTERVAL)
    again = await publish(engine, kickoff, ROUTINE_INTERVAL)
    assert (first.stamp, first.mailboxes) == (1_000, 3)
    assert (again.stamp, again.mailboxes) == (1_000, 0)
    assert {(row["want_stamp"], row["status"], row["due"]) for row in await _mailboxes(db)} == {
        (1_000, "pending", True)
    }


async def test_stamps_grow_whatever_clock_publishes(engine: AsyncEngine, db: asyncpg.Connection) -> None:
    """A push asked for an earlier second than the last one published (a new run's clock) is
    stamped after it, so no phone is ever sent a lower timestamp."""
    await seed.fixture(db)
    await seed.followers(db, 2)
    await publish(engine, _push("start", "kickoff", 5_000, 1, alert=True), ROUTINE_INTERVAL)
    late_clock = await publish(engine, _push("update", "v2", 4_000, 2), ROUTINE_INTERVAL)
    assert late_clock.stamp == 5_001
    assert {row["want_stamp"] for row in await _mailboxes(db)} == {5_001}


async def test_an_alert_rides_until_a_newer_one_replaces_it(
    engine: AsyncEngine, db: asyncpg.Connection
) -> None:
    """An update with an alert sets the owed alert; a routine update after it keeps it; a newer
    alert replaces it (the phone will show the newer state anyway)."""
    await seed.fixture(db)
    await seed.running_activities(db, 2)
    goal = KeyMoment(kind="goal", side="home")
    first = await publish(engine, _push("update", "v2", 100, 2, alert=True, moment=goal), ROUTINE_INTERVAL)
    routine = await publish(engine, _push("update", "v3", 101, 3, priority=5, routine=True), ROUTINE_INTERVAL)
    rows = await _mailboxes(db)
    assert {(row["want_stamp"], row["alert_stamp"]) for row in rows} == {(routine.stamp, first.stamp)}
    second = await publish(engine, _push("update", "v4", 102, 4, alert=True, moment=goal), ROUTINE_INTERVAL)
    assert {row["alert_stamp"] for row in await _mailboxes(db)} == {second.stamp}


async def test_an_end_sticks_and_closes_starts_that_never_went(
    engine: AsyncEngine, db: asyncpg.Connection
) -> None:
    """The end is wanted by every running mailbox and no later update moves it; a start that was
    never sent is closed without sending (the phone never showed it)."""
    await seed.fixture(db)
    await seed.running_activities(db, 2)
    await seed.followers(db, 1)
    await publish(engine, _push("start", "kickoff", 10, 1, alert=True), ROUTINE_INTERVAL)
    end = await publish(engine, _push("end", "full_time", 20, 9, alert=True), ROUTINE_INTERVAL)
    await publish(engine, _push("update", "v10", 30, 10), ROUTINE_INTERVAL)
    rows = await _mailboxes(db)
    running = [row for row in rows if row["status"] == "active"]
    closed = [row for row in rows if row["status"] == "ended"]
    assert {(row["want_stamp"], row["want_end"], row["alert_stamp"], row["due"]) for row in running} == {
        (end.stamp, True, end.stamp, True)
    }
    assert [(row["want_end"], row["due"]) for row in closed] == [(True, False)]


async def test_a_correction_published_after_the_end_starts_nothing(
    engine: AsyncEngine, db: asyncpg.Connection
) -> None:
    """An update published after the final whistle (a desk's correction) made the match look
    running again: a follow then push-started an activity that no end would ever close."""
    await seed.fixture(db)
    await seed.followers(db, 1)
    await publish(engine, _push("start", "kickoff", 10, 1, alert=True), ROUTINE_INTERVAL)
    end = await publish(engine, _push("end", "full_time", 20, 9, alert=True), ROUTINE_INTERVAL)
    await publish(engine, _push("update", "v10", 30, 10), ROUTINE_INTERVAL)
    device = await db.fetchval(
        """INSERT INTO device (install_id, platform, environment, token_hash, push_to_start_token)
        VALUES ('late-follower', 'ios', 'sandbox', 'unused', $1) RETURNING id""",
        seed.apns_token(),
    )

    assert await store.follow(engine, device, seed.FIXTURE_ID)
    assert await db.fetchval("SELECT count(*) FROM live_activity WHERE device_id = $1", device) == 0
    await store.report_activity_token(engine, device, seed.FIXTURE_ID, seed.apns_token())
    wanted = await db.fetchrow("SELECT want_stamp, want_end FROM live_activity WHERE device_id = $1", device)
    assert (wanted["want_stamp"], wanted["want_end"]) == (end.stamp, True)
