"""A 10,000-device goal alert whose worker is stopped half-way: a new worker finishes it, exactly once."""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import replace

import asyncpg
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter

from activities.push.apns import ApnsClient
from activities.push.fanout import FanoutConfig
from domain.moments import KeyMoment
from domain.pushes import LiveState, PushInput
from tests.push import seed
from tests.push.simulator import PushSim
from tests.push.workflow import PushOnceWorkflow, push_worker

DEVICES = 10_000
STOP_AFTER = 3_250
"""Mid-batch (batches are 500): the stop lands while requests are in flight."""


async def _delivered(sim: PushSim) -> int:
    return int((await sim.stats())["pushes"]["total"])


async def test_fanout_stopped_mid_way_delivers_to_every_device_exactly_once(
    temporal_client: Client,
    task_queue: str,
    engine: AsyncEngine,
    apns_client: ApnsClient,
    fanout_config: FanoutConfig,
    sim: PushSim,
    db: asyncpg.Connection,
) -> None:
    """Worker A is shut down after ~3,250 pushes (its activity cancelled mid-batch); worker B resumes
    from the heartbeated cursor. The simulator sees each of the 10,000 tokens once, all 200."""
    await seed.fixture(db)
    running = await seed.running_activities(db, DEVICES)
    goal = PushInput(
        fixture_id=seed.FIXTURE_ID,
        event_key="v7",
        kind="update",
        priority=10,
        alert=True,
        moment=KeyMoment(kind="goal", side="home", minute=71),
        state=LiveState(home=2, away=1, state="live_second_half", minute=71, version=7),
        timestamp=int(time.time()),
    )
    # Answers take 100 ms, as over a real network, and a batch is more than the in-flight window:
    # the stop finds requests in flight (drained) and requests not yet sent (released).
    await sim.fault(latency_ms=100, duration_s=300)
    config = replace(fanout_config, concurrency=200)
    first = push_worker(temporal_client, task_queue, engine, apns_client, config)
    worker_a = asyncio.create_task(first.run())
    handle = await temporal_client.start_workflow(
        PushOnceWorkflow.run, goal, id=f"push-kill-{uuid.uuid4()}", task_queue=task_queue
    )
    deadline = time.monotonic() + 60
    while await _delivered(sim) < STOP_AFTER:
        assert time.monotonic() < deadline, "the fan-out never got going"
        assert not worker_a.done(), worker_a
        await asyncio.sleep(0.05)
    await first.shutdown()
    await worker_a
    at_stop = await _delivered(sim)
    assert STOP_AFTER <= at_stop < DEVICES, f"stopped too late to prove anything ({at_stop})"
    pending = (await handle.describe()).raw_description.pending_activities
    assert pending and pending[0].attempt == 2, "the stopped attempt failed and a retry is scheduled"
    [cursor] = pydantic_data_converter.payload_converter.from_payloads(
        pending[0].heartbeat_details.payloads, [str]
    )
    assert int(cursor) > 0, "the stopped attempt heartbeated its progress"

    async with push_worker(temporal_client, task_queue, engine, apns_client, config):
        result = await handle.result()

    stats = await sim.stats()
    assert stats["pushes"]["total"] == DEVICES
    assert stats["pushes"]["by_status"] == {"200": DEVICES}
    tokens = [p["token"] for p in await sim.pushes(limit=DEVICES)]
    assert sorted(tokens) == sorted(a.push_token for a in running)
    assert (result.sent, result.targets, result.in_doubt) == (DEVICES, DEVICES, 0)
    assert await db.fetchval("SELECT count(*) FROM push_attempt WHERE status = 200") == DEVICES
