"""Once retention purged a match's effect log, the real fan-out sends nothing for it (APNs simulator)."""

from __future__ import annotations

import asyncpg
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.client import Client, WorkflowFailureError
from temporalio.exceptions import ActivityError, ApplicationError

from activities.push.apns import ApnsClient
from activities.push.fanout import UNKNOWN_FIXTURE, FanoutConfig
from activities.retention import RetentionActivities
from domain.moments import KeyMoment
from domain.pushes import LiveState, PushInput, PushResult
from tests.push import seed
from tests.push.simulator import PushSim
from tests.push.workflow import push_worker, run_push
from tests.retention.rows import AGES, older_than
from workflows.retention_types import RetentionTable

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


async def test_a_purged_match_gets_no_push_again(
    temporal_client: Client,
    task_queue: str,
    engine: AsyncEngine,
    apns_client: ApnsClient,
    fanout_config: FanoutConfig,
    sim: PushSim,
    db: asyncpg.Connection,
    retention: RetentionActivities,
) -> None:
    """The goal alert is gated once; after the purge its gate rows are gone, and a retry is refused, not resent."""
    await seed.fixture(db)
    await seed.running_activities(db, 3)
    old = f"now() - interval '{older_than(AGES.effect_log_age_seconds)} days'"
    age = AGES.effect_log_age_seconds
    assert age is not None

    async with push_worker(temporal_client, task_queue, engine, apns_client, fanout_config):
        first = await _push(temporal_client, task_queue)
        assert first.sent == 3
        await db.execute(f"UPDATE fixture SET state = 'finished', updated_at = {old}")
        await db.execute(f"UPDATE effect_log SET created_at = {old}")
        batch = await retention.delete_batch(RetentionTable.EFFECT_LOG, age, 1000)
        assert (batch.deleted, batch.fixtures_purged) == (3, 1)
        with pytest.raises(WorkflowFailureError) as failed:
            await _push(temporal_client, task_queue)

    cause = failed.value.cause
    assert isinstance(cause, ActivityError) and isinstance(cause.cause, ApplicationError)
    assert (cause.cause.type, cause.cause.non_retryable) == (UNKNOWN_FIXTURE, True)
    assert len(await sim.pushes()) == 3, "only the first push reached APNs"
    assert await db.fetchval("SELECT count(*) FROM effect_log") == 0, "nothing was claimed again"


async def _push(client: Client, task_queue: str) -> PushResult:
    return await run_push(client, task_queue, GOAL)
