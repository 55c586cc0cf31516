"""RetentionWorkflow on Scoreline's real worker and the Temporal dev server; its Schedule from a worker start."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import uuid
from datetime import timedelta
from pathlib import Path

import asyncpg
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.api.enums.v1 import EventType
from temporalio.client import (
    Client,
    ScheduleActionExecutionStartWorkflow,
    ScheduleActionStartWorkflow,
    ScheduleDescription,
    ScheduleHandle,
    ScheduleOverlapPolicy,
    WorkflowHistory,
)
from temporalio.service import RPCError, RPCStatusCode

from domain.retention import RetentionInput, RetentionResult
from scoreline.feeds.partners import create_partner
from scoreline.settings import Settings
from tests.retention import rows
from tests.retention.rows import AGES, older_than
from tests.support.replay import assert_replays
from tests.support.waiting import eventually
from tests.support.worker import running_worker
from tests.webhooks import delivery_rows
from workers.main import run
from workers.schedules import ensure_retention_schedule, retention_schedule_id
from workflows.retention import RetentionWorkflow

HISTORIES = Path(__file__).parent / "histories"


async def execute(
    client: Client, task_queue: str, retention: RetentionInput
) -> tuple[RetentionResult, WorkflowHistory]:
    handle = await client.start_workflow(
        RetentionWorkflow.run, retention, id=f"retention-{uuid.uuid4()}", task_queue=task_queue
    )
    return await handle.result(), await handle.fetch_history()


async def test_the_workflow_purges_every_table_and_returns_counts(
    db: asyncpg.Connection,
    engine: AsyncEngine,
    worker_settings: Settings,
    temporal_client: Client,
    task_queue: str,
) -> None:
    """Started with `{}` (the UI form's defaults), it deletes what is past each age and reports per table."""
    await rows.fixture(db, changed_days_ago=older_than(AGES.la_push_age_seconds))
    events = await rows.outbox(db, 3, older_than(AGES.outbox_age_seconds))
    await rows.consumer_at(db, "feeds", events[-1])
    await rows.consumer_at(db, "webhooks", events[-1])
    await rows.push_attempts(db, 4, older_than(AGES.push_attempt_age_seconds))
    await rows.commands(db, 2, older_than(AGES.command_age_seconds))
    await rows.pushes(db, 5, older_than(AGES.la_push_age_seconds))
    await rows.document(db, "match/81000001", 1, 40)
    await rows.document(db, "match/81000001", 2, 30)
    await create_partner(engine, "acme", [8])
    hook = await delivery_rows.endpoint(engine, "acme", "https://hooks.acme.example/scores")
    for seq in (1, 2):
        await delivery_rows.attempt(engine, hook, rows.FIXTURE_ID, seq, days_ago=31)
    await delivery_rows.messages(engine, hook, rows.FIXTURE_ID, [1], delivered=True)
    await db.execute("UPDATE webhook_message SET delivered_at = now() - interval '8 days'")

    async with running_worker(temporal_client, worker_settings):
        result, history = await execute(temporal_client, task_queue, RetentionInput.model_validate({}))

    assert result == RetentionResult(
        domain_event=3,
        push_attempt=4,
        command=2,
        la_push=5,
        published_document=1,
        webhook_attempt=2,
        webhook_message=1,
        fixtures_purged=1,
        batches=7,
    )
    await assert_replays([RetentionWorkflow], history)


async def test_35_old_rows_go_in_4_batches_of_10_whatever_the_budget(
    db: asyncpg.Connection, worker_settings: Settings, temporal_client: Client, task_queue: str
) -> None:
    """Batches run until a short one, in one activity call or, once each call's budget is spent, in four."""
    only_push_attempts = RetentionInput(
        outbox_age_seconds=None,
        command_age_seconds=None,
        la_push_age_seconds=None,
        document_age_seconds=None,
        webhook_attempt_age_seconds=None,
        batch=10,
        pause_seconds=0,
    )
    await rows.fixture(db)
    async with running_worker(temporal_client, worker_settings):
        await rows.push_attempts(db, 35, older_than(AGES.push_attempt_age_seconds))
        whole, _ = await execute(temporal_client, task_queue, only_push_attempts)
        await rows.push_attempts(db, 35, older_than(AGES.push_attempt_age_seconds))
        spent = only_push_attempts.model_copy(update={"budget_seconds": 1e-6})
        piecemeal, history = await execute(temporal_client, task_queue, spent)

    expected = RetentionResult(push_attempt=35, batches=4)
    assert (whole, piecemeal) == (expected, expected)
    calls = [e for e in history.events if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED]
    assert len(calls) == 4, "one call per batch once every call is over its budget"
    assert await rows.count(db, "push_attempt") == 0
    await assert_replays([RetentionWorkflow], history)
    if os.environ.get("SCORELINE_RECORD_HISTORIES"):
        HISTORIES.mkdir(exist_ok=True)
        (HISTORIES / "retention-budget-spent.json").write_text(history.to_json())


async def test_committed_histories_still_replay() -> None:
    """Recorded RetentionWorkflow histories replay on today's code (re-record: `SCORELINE_RECORD_HISTORIES=1`)."""
    paths = sorted(HISTORIES.glob("*.json"))
    assert paths, "no recorded histories committed"
    await assert_replays(
        [RetentionWorkflow], *(WorkflowHistory.from_json(path.stem, path.read_text()) for path in paths)
    )


async def test_a_worker_start_creates_the_schedule_and_its_runs_purge(
    db: asyncpg.Connection, worker_settings: Settings, temporal_client: Client, task_queue: str
) -> None:
    """`scoreline worker` creates `retention-{queue}` (hourly, overlap skip, the settings' ages); a run purges."""
    await rows.fixture(db)
    await rows.push_attempts(db, 3, 3)
    config = worker_settings.model_copy(
        update={"fixture_sync_interval": None, "retention_push_attempt_age": timedelta(days=1)}
    )
    handle = temporal_client.get_schedule_handle(retention_schedule_id(task_queue))
    worker = asyncio.create_task(run(config))
    try:
        described = await eventually(lambda: _describe(handle), within=30)
        action = described.schedule.action
        assert isinstance(action, ScheduleActionStartWorkflow)
        assert (action.workflow, action.task_queue) == ("RetentionWorkflow", task_queue)
        assert described.schedule.spec.intervals[0].every == config.retention_interval
        assert described.schedule.policy.overlap == ScheduleOverlapPolicy.SKIP
        assert not described.schedule.state.paused

        await handle.trigger()
        ran = await eventually(lambda: _first_run(handle), within=30)
        result = await temporal_client.get_workflow_handle(ran, result_type=RetentionResult).result()
    finally:
        worker.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await worker
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
    try:
        assert result.push_attempt == 3, "the run used RETENTION_PUSH_ATTEMPT_AGE (1 day here)"
        assert await rows.count(db, "push_attempt") == 0

        await ensure_retention_schedule(
            temporal_client, config.model_copy(update={"retention_interval": None})
        )
        assert (await handle.describe()).schedule.state.paused, "RETENTION_INTERVAL=off pauses it"
    finally:
        await handle.delete()


async def _describe(handle: ScheduleHandle) -> ScheduleDescription | None:
    try:
        return await handle.describe()
    except RPCError as error:
        if error.status is RPCStatusCode.NOT_FOUND:
            return None
        raise


async def _first_run(handle: ScheduleHandle) -> str | None:
    actions = (await handle.describe()).info.recent_actions
    if not actions:
        return None
    started = actions[0].action
    assert isinstance(started, ScheduleActionExecutionStartWorkflow)
    return started.workflow_id
