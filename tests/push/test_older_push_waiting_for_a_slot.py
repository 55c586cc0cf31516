"""An older push still waiting for an in-flight slot is not sent once a newer one has claimed the activity.

The soak of 2026-12-02 (seed 12): a routine update of the real T20 had claimed its activities, but
its requests waited for slots of a throttled in-flight limit; meanwhile the innings-end alert,
stamped six seconds later, claimed the same activities on the loud lane and went out. The routine
update reached 31 phones 88 ms after it, out of timestamp order (each phone dropped it as stale).
A delivery asked whether a newer push had claimed its activity only before a retry, never before
its first request, however long that one had waited.

Here the routine update's fan-out has one slot, held three seconds by its first request (the
simulator delays that answer), so its nine other requests wait while the alert claims and sends.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace

import asyncpg
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.client import Client

from activities.push.apns import ApnsClient
from activities.push.fanout import FanoutConfig
from domain.moments import KeyMoment
from domain.pushes import PushResult
from tests.push import seed
from tests.push.simulator import PushSim
from tests.push.test_fanout import NOW, push
from tests.push.workflow import PushOnceWorkflow, push_worker, run_push
from tests.support.waiting import eventually

pytestmark = pytest.mark.timeout(120)

DEVICES = 10
FIRST_ANSWER_DELAY_MS = 3_000


async def test_an_update_waiting_for_a_slot_is_not_sent_after_a_newer_alert(
    temporal_client: Client,
    task_queue: str,
    engine: AsyncEngine,
    apns_client: ApnsClient,
    fanout_config: FanoutConfig,
    sim: PushSim,
    db: asyncpg.Connection,
) -> None:
    """Every phone gets the alert, and nothing older after it: the routine update reaches the one
    phone whose request was already in flight, the rest of it is settled stale. Before the fix the
    nine waiting requests went out after the alert."""
    await seed.fixture(db)
    running = await seed.running_activities(db, DEVICES)
    await sim.fault(latency_ms=FIRST_ANSWER_DELAY_MS, count=1)
    routine_queue = f"{task_queue}-routine"
    routine = push(version=5, routine=True, timestamp=NOW)
    alert = push(
        version=6, priority=10, alert=True, timestamp=NOW + 6, moment=KeyMoment(kind="goal", side="home")
    )
    one_slot = replace(fanout_config, concurrency=1)
    async with (
        push_worker(temporal_client, routine_queue, engine, apns_client, one_slot),
        push_worker(temporal_client, task_queue, engine, apns_client, fanout_config),
    ):
        routine_run = await temporal_client.start_workflow(
            PushOnceWorkflow.run, routine, id=f"push-routine-{routine_queue}", task_queue=routine_queue
        )

        async def first_request_in_flight() -> bool:
            return len(await sim.pushes()) == 1

        await eventually(first_request_in_flight, within=20)
        alerted = await run_push(temporal_client, task_queue, alert)
        routine_result: PushResult = await routine_run.result()

    assert alerted.sent == DEVICES
    timestamps: dict[str, list[int]] = defaultdict(list)
    for sent in await sim.pushes():
        assert sent["status"] == 200 and sent["dropped_by_device"] is None, sent
        timestamps[sent["token"]].append(sent["payload"]["aps"]["timestamp"])
    assert {token: sorted(stamps) for token, stamps in timestamps.items()} == timestamps, (
        "an older push reached a phone after a newer one"
    )
    assert {activity.push_token for activity in running} == set(timestamps)
    assert (routine_result.sent, routine_result.stale) == (1, DEVICES - 1)
