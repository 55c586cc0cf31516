"""A token APNs answers dead is switched off in Postgres at once, not when its batch is written.

The soak of 2026-12-03 (seed 17, third run): a goal alert's fan-out got a 410 for an activity
token while the rest of its batch waited for answers. The 410 would reach Postgres only with the
batch, and the worker was SIGKILLed 1.6 s later; its relay's PUBLISH had failed too (the first
after a Redis restart, on a connection Redis had closed). Nobody knew, and the other worker sent
the next alert to the dead token 40 s later.
"""

from __future__ import annotations

import asyncio
import uuid

import asyncpg
from sqlalchemy.ext.asyncio import AsyncEngine
from structlog.testing import capture_logs
from temporalio.client import Client

from activities.push.apns import ApnsClient
from activities.push.delivery import Delivery
from activities.push.fanout import FanoutConfig
from activities.push.pacing import LastSent
from activities.push.store import PushStore, Target
from domain.moments import KeyMoment
from domain.pushes import LiveState, PushInput
from scoreline.db.engine import create_engine
from tests.push import seed
from tests.push.simulator import PushSim
from tests.push.workflow import PushOnceWorkflow, push_worker
from tests.support.waiting import eventually

SLOW_ANSWER_MS = 4_000
"""Under the tests' 5 s APNs request timeout."""
GOAL = PushInput(
    fixture_id=seed.FIXTURE_ID,
    event_key="v3",
    kind="update",
    priority=10,
    alert=True,
    moment=KeyMoment(kind="goal", side="home", minute=23),
    state=LiveState(home=1, away=0, state="live_first_half", minute=23, version=3),
    timestamp=1_790_000_000,
)


async def test_a_410_is_in_postgres_while_the_rest_of_its_batch_still_waits_for_apns(
    temporal_client: Client,
    task_queue: str,
    engine: AsyncEngine,
    apns_client: ApnsClient,
    fanout_config: FanoutConfig,
    sim: PushSim,
    db: asyncpg.Connection,
) -> None:
    await seed.fixture(db)
    dead, slow = await seed.running_activities(db, 2)
    await sim.unregister(dead.push_token)
    await sim.fault(latency_ms=SLOW_ANSWER_MS, token=slow.push_token)

    async with push_worker(temporal_client, task_queue, engine, apns_client, fanout_config):
        handle = await temporal_client.start_workflow(
            PushOnceWorkflow.run, GOAL, id=f"push-{uuid.uuid4()}", task_queue=task_queue
        )

        async def switched_off() -> bool:
            return not await db.fetchval(
                "SELECT push_token_active FROM live_activity WHERE id = $1", dead.live_activity_id
            )

        async def answered_dead() -> bool:
            return bool(await sim.pushes(token=dead.push_token))

        await eventually(answered_dead, within=20, every=0.02)
        # Well before the slow answer ends the batch.
        await eventually(switched_off, within=SLOW_ANSWER_MS / 1000 / 2, every=0.02)
        slow_state = await db.fetchval(
            "SELECT outcome->>'state' FROM effect_log WHERE target = $1", str(slow.live_activity_id)
        )
        assert slow_state == "claimed", "the batch was written already: the test proves nothing"
        result = await asyncio.wait_for(handle.result(), 30)

    assert (result.sent, result.deactivated) == (1, 1)
    rows = await db.fetch("SELECT target, outcome->>'state' AS state FROM effect_log ORDER BY target")
    assert {row["target"]: row["state"] for row in rows} == {
        str(dead.live_activity_id): "dead",
        str(slow.live_activity_id): "sent",
    }


async def test_a_death_write_does_not_wait_for_the_fanouts_pool(
    engine: AsyncEngine, db: asyncpg.Connection, database_url: str
) -> None:
    """The 30-minute soak's seed 27: the early death write queued for a connection of the
    fan-outs' pool, busy right after the worker's pause, and its worker was SIGKILLed first. It
    now has a pool of its own: with the fan-outs' pool taken, the token is switched off at once."""
    await seed.fixture(db)
    (dead,) = await seed.running_activities(db, 1)
    busy = create_engine(database_url, pool_size=1)
    try:
        store = PushStore(busy, GOAL, "sandbox", urgent=engine)
        async with busy.connect(), busy.connect():  # the fan-outs' pool (one, and one more) is taken
            await asyncio.wait_for(store.switch_off([_answered_dead(dead)]), timeout=0.5)
    finally:
        await busy.dispose()
    assert not await db.fetchval(
        "SELECT push_token_active FROM live_activity WHERE id = $1", dead.live_activity_id
    )


async def test_a_slow_death_write_says_how_long_it_waited_for_a_connection(
    db: asyncpg.Connection, database_url: str
) -> None:
    """The 30-minute soak's seed 27: a 410 answered 1.4 s before its worker's SIGKILL, right after
    a pause, was not in Postgres yet, and the next attempt sent to the token again; the run's
    logs could not say where the write's time went. A slow one is now logged with when it held
    its connection (here the pool is taken for 0.8 s)."""
    await seed.fixture(db)
    (dead,) = await seed.running_activities(db, 1)
    small = create_engine(database_url, pool_size=1)
    try:
        with capture_logs() as logs:
            async with small.connect(), small.connect():  # the pool (one, and one more) is taken
                writing = asyncio.create_task(
                    PushStore(small, GOAL, "sandbox").switch_off([_answered_dead(dead)])
                )
                await asyncio.sleep(0.8)
            await asyncio.wait_for(writing, timeout=5.0)
    finally:
        await small.dispose()
    (slow,) = [entry for entry in logs if entry["event"] == "push.death_write_slow"]
    assert (slow["deaths"], slow["connected_s"] >= 0.7, slow["seconds"] >= slow["connected_s"]) == (
        1,
        True,
        True,
    )
    assert not await db.fetchval(
        "SELECT push_token_active FROM live_activity WHERE id = $1", dead.live_activity_id
    )


def _answered_dead(activity: seed.RunningActivity) -> tuple[Target, Delivery]:
    """The activity's token, answered 410 by APNs."""
    target = Target(
        activity.live_activity_id, activity.device_id, activity.push_token, LastSent(), read_at=0.0
    )
    return target, Delivery("dead", (), status=410, reason="Unregistered")
