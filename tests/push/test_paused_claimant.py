"""Claims marked by an attempt whose worker was paused, not killed, are left to it for a grace.

The soak of 2026-12-03 (seed 18): a worker was SIGSTOPped past its heartbeat timeout after its
last look had marked two goals' claims as being sent and before their requests began. The retry,
on the other worker, took the marked claims for a dead attempt's and called them in doubt at once
(an alert is sent at most once). The paused worker, resumed, sent one request (an APNs 500 burst
answered it) and released the rest, knowing they had never gone out, after the retry had finished:
111 phones never got their goal. The retry now waits for the claimant's word for a while and
sends what it released.
"""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter
from dataclasses import replace

import asyncpg
from sqlalchemy.ext.asyncio import AsyncEngine
from structlog.testing import capture_logs
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from activities.push.apns import ApnsClient
from activities.push.delivery import Delivery, Sender
from activities.push.fanout import FanoutConfig
from activities.push.last_look import Marks
from activities.push.limiter import AdaptiveLimit
from activities.push.pacing import LastSent
from activities.push.payloads import FixtureNames, build, variants
from activities.push.store import PushStore, Target
from tests.push import seed
from tests.push.conftest import FAST_POLICY
from tests.push.simulator import PushSim
from tests.push.test_claims_of_a_killed_attempt import GOAL, RESULT
from tests.push.test_fanout import push
from tests.push.workflow import PushOnceWorkflow, push_worker
from tests.support.waiting import eventually

PAUSED = "paused-run/1#1"
DEVICES = 5


async def _waiting_before(client: Client, workflow_id: str, cursor: str) -> bool:
    """Whether the push's attempt has heartbeated `cursor`: it is waiting for those claims."""
    try:
        description = await client.get_workflow_handle(workflow_id).describe()
    except RPCError as error:
        if error.status is RPCStatusCode.NOT_FOUND:  # not started yet
            return False
        raise
    for pending in description.raw_description.pending_activities:
        if pending.heartbeat_details.payloads:
            details = await client.data_converter.decode(pending.heartbeat_details.payloads)
            if details and details[0] == cursor:
                return True
    return False


async def test_the_retry_sends_what_a_resumed_claimant_released_and_not_what_it_sent(
    temporal_client: Client,
    task_queue: str,
    engine: AsyncEngine,
    apns_client: ApnsClient,
    fanout_config: FanoutConfig,
    sim: PushSim,
    db: asyncpg.Connection,
) -> None:
    """Each phone gets the goal once: one from the resumed attempt, the other four from the
    retry, which also reaches the phone the paused attempt had not claimed. Before the fix the
    retry called all five claims in doubt and finished, and the four released afterwards were
    never sent."""
    await seed.fixture(db)
    running = await seed.running_activities(db, DEVICES + 1)
    store = PushStore(engine, GOAL, "sandbox")
    batch = await store.load(store.first_cursor, limit=100)
    # The first activity was not reached by the paused attempt: the retry's cursor, held back
    # before the awaited claims, is then not the walk's first cursor.
    claimed = (await store.claim(batch.targets[1:], [], PAUSED, state={"version": 3})).mine
    ids = {target.live_activity_id for target in claimed}
    assert await store.mark_sending(PAUSED, sorted(ids)) == Marks(marked=ids)
    # SIGSTOP here: every request looked at, none begun.

    workflow_id = f"push-{uuid.uuid4()}"
    config = replace(fanout_config, claimant_grace=30.0)
    async with push_worker(temporal_client, task_queue, engine, apns_client, config):
        retry = asyncio.create_task(
            temporal_client.execute_workflow(
                PushOnceWorkflow.run, GOAL, id=workflow_id, task_queue=task_queue
            )
        )
        await eventually(
            lambda: _waiting_before(temporal_client, workflow_id, str(min(ids) - 1)), within=20, every=0.2
        )
        assert not retry.done()

        # Resumed: the first request goes out, then the attempt stops and releases the rest.
        first, *rest = claimed
        sender = Sender(apns_client, FAST_POLICY, AdaptiveLimit(10), asyncio.Event(), kind="alert")
        bodies = variants(build(GOAL, FixtureNames(seed.HOME, seed.AWAY, "Premier League"), seed.FIXTURE_ID))
        sent = await sender.deliver(
            first.token, bodies, priority=10, expiration=GOAL.timestamp + 900, resend_if_unknown=False
        )
        assert sent.outcome == "sent"
        released = [(target, Delivery("released", (), reason="stopping")) for target in rest]
        await store.settle([(first, sent), *released], PAUSED, trace_id=None)
        result = await asyncio.wait_for(retry, timeout=30)

    alerted = Counter(p["token"] for p in await sim.pushes() if p["status"] == 200)
    assert alerted == {activity.push_token: 1 for activity in running}
    assert (result.sent, result.in_doubt) == (DEVICES + 1, 0)


async def test_a_claimant_silent_past_the_grace_leaves_its_marked_claims_in_doubt(
    temporal_client: Client,
    task_queue: str,
    engine: AsyncEngine,
    apns_client: ApnsClient,
    fanout_config: FanoutConfig,
    sim: PushSim,
    db: asyncpg.Connection,
) -> None:
    """A claimant that never says anything (SIGKILLed after its look) is waited for no longer
    than the grace; then its marked claims are in doubt and never sent (at most once)."""
    await seed.fixture(db)
    await seed.running_activities(db, 3)
    store = PushStore(engine, GOAL, "sandbox")
    batch = await store.load(store.first_cursor, limit=100)
    claimed = (await store.claim(batch.targets, [], PAUSED, state={"version": 3})).mine
    await store.mark_sending(PAUSED, [target.live_activity_id for target in claimed])

    config = replace(fanout_config, claimant_grace=3.0)
    async with push_worker(temporal_client, task_queue, engine, apns_client, config):
        result = await asyncio.wait_for(
            temporal_client.execute_workflow(
                PushOnceWorkflow.run, GOAL, id=f"push-{uuid.uuid4()}", task_queue=task_queue
            ),
            timeout=30,
        )

    assert await sim.pushes() == []
    assert (result.sent, result.in_doubt) == (0, 3)


def _target(live_activity_id: int, device: int) -> Target:
    return Target(live_activity_id, uuid.UUID(int=device), "token", LastSent(), read_at=0.0)


async def test_an_end_awaited_when_its_attempt_stops_is_walked_by_the_next(
    temporal_client: Client,
    task_queue: str,
    engine: AsyncEngine,
    apns_client: ApnsClient,
    fanout_config: FanoutConfig,
    sim: PushSim,
    db: asyncpg.Connection,
) -> None:
    """An end's attempt closed the match's activities before it waited for the ends a paused
    attempt held marked. Stopped while it waited (its worker shut down here; a SIGKILL does the
    same), it left those activities ended, and once the paused attempt released its ends the
    next attempt's walk no longer found them: the result stayed on five phones. An activity
    whose end is still claimed now stays running until the claims are awaited."""
    await seed.fixture(db)
    running = await seed.running_activities(db, DEVICES + 1)
    store = PushStore(engine, RESULT, "sandbox")
    batch = await store.load(store.first_cursor, limit=100)
    claimed = (await store.claim(batch.targets[1:], [], PAUSED, state={"version": 9})).mine
    ids = {target.live_activity_id for target in claimed}
    assert await store.mark_sending(PAUSED, sorted(ids)) == Marks(marked=ids)

    workflow_id = f"push-{uuid.uuid4()}"
    config = replace(fanout_config, claimant_grace=30.0)
    with capture_logs() as logs:
        async with push_worker(temporal_client, task_queue, engine, apns_client, config):
            ending = asyncio.create_task(
                temporal_client.execute_workflow(
                    PushOnceWorkflow.run, RESULT, id=workflow_id, task_queue=task_queue
                )
            )

            async def awaiting() -> bool:  # after the walks and the first close
                return any(entry["event"] == "push.awaiting_claimants" for entry in logs)

            await eventually(awaiting, within=20, every=0.05)
    released = [(target, Delivery("released", (), reason="stopping")) for target in claimed]
    await store.settle(released, PAUSED, trace_id=None)
    async with push_worker(temporal_client, task_queue, engine, apns_client, config):
        result = await asyncio.wait_for(ending, timeout=30)

    ends = Counter(p["token"] for p in await sim.pushes() if p["status"] == 200)
    assert ends == {activity.push_token: 1 for activity in running}
    assert (result.sent, result.in_doubt) == (DEVICES + 1, 0)


def test_the_resume_point_never_passes_an_awaited_claim(engine: AsyncEngine) -> None:
    """A retry walks from the heartbeated cursor: it must reach the awaited claims again, by
    activity id for an update, by device id for a start; with none awaited the cursor stands."""
    update = PushStore(engine, GOAL, "sandbox")
    awaited = [_target(40, 7), _target(12, 9)]
    assert update.resume_point("100", awaited) == "11"
    assert update.resume_point("5", awaited) == "5"
    assert update.resume_point("100", []) == "100"
    start = PushStore(engine, push("start", key="kickoff"), "sandbox")
    assert start.resume_point(str(uuid.UUID(int=50)), awaited) == str(uuid.UUID(int=6))
    assert start.resume_point(str(uuid.UUID(int=3)), awaited) == str(uuid.UUID(int=3))


async def test_a_resumed_attempt_never_takes_over_its_retrys_claims(
    engine: AsyncEngine, db: asyncpg.Connection
) -> None:
    """The paused attempt, resumed before its cancellation came, walked on and took over its
    retry's claims that were not marked yet, then released them as it stopped: the retry's look
    found them no longer its own and no one sent them. An earlier attempt now leaves a later
    one's claims alone (and waits for them, as for any live claimant's)."""
    await seed.fixture(db)
    await seed.running_activities(db, 3)
    store = PushStore(engine, GOAL, "sandbox")
    batch = await store.load(store.first_cursor, limit=100)
    retry = (await store.claim(batch.targets, [], "run/1#2", state={"version": 3})).mine
    resumed = await store.claim(batch.targets, [], "run/1#1", state={"version": 3})

    assert (resumed.mine, resumed.awaited) == ([], retry)
    holders = await db.fetch(
        "SELECT outcome->>'by' AS by FROM effect_log WHERE fixture_id = $1", seed.FIXTURE_ID
    )
    assert [row["by"] for row in holders] == ["run/1#2"] * 3


async def test_a_claim_called_in_doubt_takes_only_an_answer_from_its_claimant(
    engine: AsyncEngine, db: asyncpg.Connection
) -> None:
    """A claimant resumed after its retry called its claims in doubt may write what APNs
    answered it, never `stale`: a push-to-start in doubt is sent again after its grace, and a
    `stale` written over it would have left its follower without a Live Activity."""
    await seed.fixture(db)
    await seed.running_activities(db, 2)
    store = PushStore(engine, GOAL, "sandbox", claimant_grace=0.0)
    batch = await store.load(store.first_cursor, limit=100)
    first, second = (await store.claim(batch.targets, [], PAUSED, state={"version": 3})).mine
    await store.mark_sending(PAUSED, [first.live_activity_id, second.live_activity_id])
    assert (await store.claim(batch.targets, [], "paused-run/1#2", state={"version": 3})).mine == []

    answered = [
        (first, Delivery("stale", (), reason="superseded")),
        (second, Delivery("sent", (), status=200)),
    ]
    await store.settle(answered, PAUSED, trace_id=None)

    states = await db.fetch(
        "SELECT target, outcome->>'state' AS state FROM effect_log WHERE fixture_id = $1 ORDER BY target::bigint",
        seed.FIXTURE_ID,
    )
    assert [row["state"] for row in states] == ["in_doubt", "sent"]
