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
from temporalio.client import Client

from activities.push.apns import ApnsClient
from activities.push.fanout import FanoutConfig
from domain.moments import KeyMoment
from domain.pushes import LiveState, PushInput
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
