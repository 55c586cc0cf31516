"""Once retention purged a match's pushes, nothing is published or sent for it again (APNs simulator)."""

from __future__ import annotations

import asyncpg
from sqlalchemy.ext.asyncio import AsyncEngine

from activities.push.apns import ApnsClient
from activities.push.drain import DrainConfig, Drainer
from activities.push.publish import publish
from activities.retention import RetentionActivities
from domain.moments import KeyMoment
from domain.pushes import LiveState, Published, PushInput
from domain.retention import RetentionTable
from scoreline.devices.store import report_activity_token
from tests.push import seed
from tests.push.simulator import PushSim
from tests.retention.rows import AGES, older_than

ROUTINE_INTERVAL = 60.0
GOAL = PushInput(
    fixture_id=seed.FIXTURE_ID,
    event_key="v7",
    kind="update",
    priority=10,
    alert=True,
    state=LiveState(home=1, away=0, state="live_second_half", minute=88, version=7),
    moment=KeyMoment(kind="goal", side="home", minute=88),
    timestamp=1_790_000_000,
)
FULL_TIME = GOAL.model_copy(
    update={
        "event_key": "full_time",
        "kind": "end",
        "state": LiveState(home=1, away=0, state="finished", minute=90, version=8),
        "moment": None,
        "timestamp": 1_790_000_300,
    }
)
OLD = f"now() - interval '{older_than(AGES.la_push_age_seconds)} days'"


async def test_publishing_for_a_purged_match_changes_no_mailbox_and_sends_nothing(
    engine: AsyncEngine,
    apns_client: ApnsClient,
    drain_config: DrainConfig,
    sim: PushSim,
    db: asyncpg.Connection,
    retention: RetentionActivities,
) -> None:
    """The goal reaches three phones; once the match is long over its pushes are purged. The goal
    published again (a replay) and a later end move no mailbox, and even after a phone reports a
    new token no drainer finds anything to send."""
    await seed.fixture(db)
    running = await seed.running_activities(db, 3)
    age = AGES.la_push_age_seconds
    assert age is not None
    drainer = Drainer(engine, apns_client, drain_config)
    await publish(engine, GOAL, ROUTINE_INTERVAL)
    assert await drainer.settle(await drainer.send(await drainer.take())) == 3
    assert len(await sim.pushes()) == 3
    await _age(db)
    batch = await retention.delete_batch(RetentionTable.LA_PUSH, age, 1000)
    assert (batch.deleted, batch.fixtures_purged) == (1, 1)
    closed = await _mailboxes(db)

    replayed = await publish(engine, GOAL, ROUTINE_INTERVAL)
    ended = await publish(engine, FULL_TIME, ROUTINE_INTERVAL)
    assert (replayed, ended) == (Published(stamp=0), Published(stamp=0))
    assert await _mailboxes(db) == closed, "a publish for a purged match changes no mailbox"
    await report_activity_token(engine, running[0].device_id, seed.FIXTURE_ID, seed.apns_token())

    assert (await drainer.take()).rows == []
    assert len(await sim.pushes()) == 3, "nothing more reached APNs"
    assert await db.fetchval("SELECT count(*) FROM la_push") == 0
    assert await db.fetchval("SELECT count(*) FROM live_activity WHERE next_try_at IS NOT NULL") == 0


async def test_a_request_in_flight_during_the_purge_leaves_its_mailbox_owing_nothing(
    engine: AsyncEngine,
    apns_client: ApnsClient,
    drain_config: DrainConfig,
    sim: PushSim,
    db: asyncpg.Connection,
    retention: RetentionActivities,
) -> None:
    """A drainer took the mailboxes just before the purge: its requests still go (APNs answers 429),
    but the purge dropped its lease, so its settle schedules no retry of a deleted push."""
    await seed.fixture(db)
    await seed.running_activities(db, 2)
    age = AGES.la_push_age_seconds
    assert age is not None
    drainer = Drainer(engine, apns_client, drain_config)
    await publish(engine, GOAL, ROUTINE_INTERVAL)
    await _age(db)
    await sim.fault(status=429, duration_s=60)
    taken = await drainer.take()
    assert len(taken.rows) == 2

    batch = await retention.delete_batch(RetentionTable.LA_PUSH, age, 1000)
    settled = await drainer.settle(await drainer.send(taken))

    assert (batch.deleted, batch.fixtures_purged, settled) == (1, 1, 0)
    assert [tuple(row) for row in await _mailboxes(db)] == [("ended", None, None, 0)] * 2


async def _age(db: asyncpg.Connection) -> None:
    """The match over, and it and its pushes unchanged for longer than the age."""
    await db.execute(f"UPDATE fixture SET state = 'finished', updated_at = {OLD}")
    await db.execute(f"UPDATE la_push SET created_at = {OLD}")


async def _mailboxes(db: asyncpg.Connection) -> list[asyncpg.Record]:
    rows: list[asyncpg.Record] = await db.fetch(
        """SELECT status, want_stamp, next_try_at, tries FROM live_activity
        WHERE fixture_id = $1 ORDER BY id""",
        seed.FIXTURE_ID,
    )
    return rows
