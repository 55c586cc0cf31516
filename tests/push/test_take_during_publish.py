"""A drainer's take that overlaps a publish still sends the key moment's alert, on real Postgres.

A take reads the due mailboxes as of its start, then locks each one; a publish that commits in
between is seen on the locked row (Postgres re-reads it under the lock), while the rest of the
statement still sees the database as it was when the take began.
"""

from __future__ import annotations

import asyncio
import time

import asyncpg
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from activities.push.statements import TAKE
from domain.pushes import LiveState, PushInput
from scoreline.devices.mailbox import lock_pushes
from tests.push import seed
from tests.push.drainer import published
from tests.support.waiting import eventually

OTHER_FIXTURE = seed.FIXTURE_ID + 1
OTHER_DEVICES = 1_000_000
"""Devices of another environment, a third of them with a due mailbox: the take is still reading
them when the publish commits."""


def _update(key: str, at: int, *, alert: bool) -> PushInput:
    return PushInput.model_validate(
        {
            "fixture_id": seed.FIXTURE_ID,
            "event_key": key,
            "kind": "update",
            "priority": 10 if alert else 5,
            "state": LiveState(home=0, away=1 if alert else 0, state="innings_1", version=at),
            "alert": alert,
            "timestamp": at,
        }
    )


async def _other_environments_due_mailboxes(db: asyncpg.Connection) -> None:
    await seed.fixture(db, OTHER_FIXTURE)
    await db.execute(
        """WITH d AS (
            INSERT INTO device (install_id, platform, environment, token_hash, push_to_start_token)
            SELECT 'other-' || g, 'ios', 'production', 'unused', md5(g::text) FROM generate_series(1, $1) g
            RETURNING id)
        INSERT INTO live_activity (device_id, fixture_id, status, push_token, started_at, want_stamp,
                                   next_try_at)
        SELECT id, $2, 'active', md5(id::text), now(), 1, now() - interval '1 hour' FROM d
        WHERE random() < 0.3""",
        OTHER_DEVICES,
        OTHER_FIXTURE,
    )
    await db.execute("ANALYZE live_activity")
    await db.execute("ANALYZE device")


async def _running(db: asyncpg.Connection, condition: str) -> bool:
    found = await db.fetchval(
        f"SELECT count(*) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND {condition}"
    )
    return bool(found)


async def test_a_wicket_published_while_a_take_reads_the_mailboxes_goes_with_its_alert(
    engine: AsyncEngine, db: asyncpg.Connection
) -> None:
    """A take that began before the wicket's publish committed and locked the phone's mailbox after
    it sent the wicket's state without its alert: it looked for the push's stale date as of its
    start, found no such push, and dropped the alert as expired."""
    await seed.fixture(db)
    phone = (await seed.running_activities(db, 1))[0]
    now = int(time.time())
    await published(engine, _update("v27", now, alert=False))
    await _other_environments_due_mailboxes(db)
    params = {"limit": 10, "me": "test-drainer", "lease": 30.0, "grace": 60.0, "carry_alerts": True}
    async with engine.connect() as drainer, engine.connect() as report:
        # Prepared beforehand, so that the take seen running below is executing, not planning.
        await drainer.execute(text(TAKE), {**params, "environment": "nowhere"})
        await drainer.rollback()
        # A device report holds the fixture's push lock: the publish has begun and waits for it.
        await lock_pushes(report, seed.FIXTURE_ID, shared=True)
        publishing = asyncio.create_task(published(engine, _update("v28", now + 1, alert=True)))
        await eventually(lambda: _running(db, "wait_event = 'advisory'"), within=10, every=0.001)
        take = asyncio.create_task(drainer.execute(text(TAKE), {**params, "environment": "sandbox"}))
        await eventually(
            lambda: _running(
                db, "state = 'active' AND backend_xmin IS NOT NULL AND query LIKE '%SKIP LOCKED%'"
            ),
            within=10,
            every=0.001,
        )
        await report.commit()
        wicket = await publishing
        taken = {row.id: row for row in (await take).all()}
    row = taken[phone.live_activity_id]
    assert row.want_stamp == wicket.stamp, "the take locked the mailbox before the publish committed"
    assert row.alert_stamp == wicket.stamp
