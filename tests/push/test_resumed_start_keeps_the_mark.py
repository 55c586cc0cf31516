"""A retried start walk resumes at its heartbeated cursor, so it leaves the followers' mark alone.

CI's 10-minute soak of 2026-12-06 (seed 18): nine phones of one desk match never got a
push-to-start. One way that happens: a follow lands behind a running walk's cursor, its signal is
lost (the API process SIGKILLed between the commit and the signal, or Postgres restarting under
the signal's read), so only its followers-waiting mark stands for it; then the walk's attempt
fails and its retry, resuming past that follower, deleted the mark as it began. Nothing walked
the follower again. Only an attempt that walks from the first follower clears the mark now.
"""

from __future__ import annotations

import dataclasses
from datetime import timedelta

import asyncpg
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.testing import ActivityEnvironment

from activities.push.apns import ApnsClient
from activities.push.fanout import FanoutConfig, PushActivities
from domain.pushes import LiveState, PushInput
from tests.push import seed
from tests.push.simulator import PushSim

WALK = PushInput(
    fixture_id=seed.FIXTURE_ID,
    event_key="start:1",
    kind="start",
    priority=10,
    alert=True,
    state=LiveState(state="live_first_half", minute=30, version=4),
    timestamp=1_790_000_000,
)
LAST_DEVICE = "ffffffff-ffff-ffff-ffff-ffffffffffff"


async def _walk(activities: PushActivities, resumed_from: str | None) -> None:
    env = ActivityEnvironment()
    env.info = dataclasses.replace(
        env.info,
        attempt=1 if resumed_from is None else 2,
        heartbeat_details=[] if resumed_from is None else [resumed_from],
        heartbeat_timeout=timedelta(seconds=30),
    )
    await env.run(activities.push_live_activities, WALK)


async def _marked(db: asyncpg.Connection) -> bool:
    count = await db.fetchval("SELECT count(*) FROM followers_waiting WHERE fixture_id = $1", seed.FIXTURE_ID)
    return bool(count)


async def test_a_resumed_start_walk_leaves_the_mark_of_followers_behind_its_cursor(
    engine: AsyncEngine,
    apns_client: ApnsClient,
    fanout_config: FanoutConfig,
    sim: PushSim,
    db: asyncpg.Connection,
) -> None:
    """Before the fix the resumed attempt deleted the mark: the follower behind its cursor was
    owed a walk that nothing would signal."""
    await seed.fixture(db)
    [behind] = await seed.followers(db, 1)
    await db.execute("INSERT INTO followers_waiting (fixture_id) VALUES ($1)", seed.FIXTURE_ID)
    activities = PushActivities(engine, apns_client, fanout_config)

    await _walk(activities, resumed_from=LAST_DEVICE)

    assert await _marked(db), "the mark still stands for the follower the resumed walk never reached"
    assert await sim.pushes() == []

    await _walk(activities, resumed_from=None)

    assert not await _marked(db), "a walk from the first follower covers every follower marked"
    assert [push["token"] for push in await sim.pushes()] == [behind.push_to_start_token]
