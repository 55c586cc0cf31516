"""The Schedules a worker creates (or brings in line with the settings) when it starts.

- `fixture-sync-{task_queue}`: FixtureSyncWorkflow every `FIXTURE_SYNC_INTERVAL`, run once at once.
- `retention-{task_queue}`: RetentionWorkflow every `RETENTION_INTERVAL`.

Both skip overlaps and never replay a backlog after an outage (the next run catches up); an
interval of `off` pauses an existing schedule instead.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio.client import (
    Client,
    Schedule,
    ScheduleActionStartWorkflow,
    ScheduleAlreadyRunningError,
    ScheduleHandle,
    ScheduleIntervalSpec,
    ScheduleOverlapPolicy,
    SchedulePolicy,
    ScheduleSpec,
    ScheduleUpdate,
    ScheduleUpdateInput,
)

from domain.fixture_sync import FixtureSyncInput
from domain.retention import RetentionInput
from scoreline.logging import get_logger
from scoreline.settings import Settings
from workflows.fixture_sync import FixtureSyncWorkflow
from workflows.retention import RetentionWorkflow

log = get_logger(__name__)


def fixture_sync_schedule_id(task_queue: str) -> str:
    """One schedule per deployment (task queue), so deployments sharing a namespace never clash."""
    return f"fixture-sync-{task_queue}"


def retention_schedule_id(task_queue: str) -> str:
    return f"retention-{task_queue}"


def _every(action: ScheduleActionStartWorkflow, every: timedelta) -> Schedule:
    return Schedule(
        action=action,
        spec=ScheduleSpec(intervals=[ScheduleIntervalSpec(every=every)]),
        policy=SchedulePolicy(overlap=ScheduleOverlapPolicy.SKIP, catchup_window=timedelta(minutes=2)),
    )


async def _ensure(
    client: Client, schedule_id: str, schedule: Schedule | None, off: str
) -> ScheduleHandle | None:
    """Create `schedule_id` or replace its schedule and unpause it; None pauses it (note `off`)."""
    handle = client.get_schedule_handle(schedule_id)
    if schedule is None:
        try:
            await handle.pause(note=off)
        except Exception as error:  # noqa: BLE001 - no schedule to pause is fine
            log.info("schedule is off", schedule_id=schedule_id, detail=str(error))
        return None
    try:
        await client.create_schedule(schedule_id, schedule)
        log.info("schedule created", schedule_id=schedule_id)
    except ScheduleAlreadyRunningError:

        def replace(_: ScheduleUpdateInput) -> ScheduleUpdate:
            return ScheduleUpdate(schedule=schedule)

        await handle.update(replace)
        await handle.unpause(note="worker started")
    return handle


async def ensure_fixture_sync_schedule(client: Client, settings: Settings) -> None:
    """Create the schedule (or update it to the current interval) and run it once at once.

    `FIXTURE_SYNC_INTERVAL=off` pauses an existing schedule instead.
    """
    every = settings.fixture_sync_interval
    schedule = None
    if every is not None:
        action = ScheduleActionStartWorkflow(
            FixtureSyncWorkflow.run,
            FixtureSyncInput(days_ahead=settings.fixture_sync_days_ahead),
            id=f"fixture-sync-run-{settings.temporal_task_queue}",
            task_queue=settings.temporal_task_queue,
            # A run that takes longer than one interval is stuck; the next one starts afresh.
            execution_timeout=every,
        )
        schedule = _every(action, every)
    schedule_id = fixture_sync_schedule_id(settings.temporal_task_queue)
    handle = await _ensure(client, schedule_id, schedule, "FIXTURE_SYNC_INTERVAL=off")
    if handle is not None:
        await handle.trigger(overlap=ScheduleOverlapPolicy.SKIP)


def retention_input(settings: Settings) -> RetentionInput:
    """The ages and batch size of every scheduled run (the pacing keeps the workflow's defaults)."""

    def seconds(age: timedelta | None) -> float | None:
        return None if age is None else age.total_seconds()

    return RetentionInput(
        outbox_age_seconds=seconds(settings.retention_outbox_age),
        push_attempt_age_seconds=seconds(settings.retention_push_attempt_age),
        command_age_seconds=seconds(settings.retention_command_age),
        la_push_age_seconds=seconds(settings.retention_la_push_age),
        document_age_seconds=seconds(settings.retention_document_age),
        webhook_attempt_age_seconds=seconds(settings.retention_webhook_attempt_age),
        batch=settings.retention_batch,
    )


async def ensure_retention_schedule(client: Client, settings: Settings) -> None:
    """Create the schedule (or update it to the current settings); `RETENTION_INTERVAL=off` pauses it.

    Not triggered at once, unlike the fixture sync: nothing waits on it, and each worker start
    would add a run.
    """
    every = settings.retention_interval
    schedule = None
    if every is not None:
        action = ScheduleActionStartWorkflow(
            RetentionWorkflow.run,
            retention_input(settings),
            id=f"retention-run-{settings.temporal_task_queue}",
            task_queue=settings.temporal_task_queue,
            # A run still going at the next interval has a backlog; the next run carries on with it.
            execution_timeout=every,
        )
        schedule = _every(action, every)
    schedule_id = retention_schedule_id(settings.temporal_task_queue)
    await _ensure(client, schedule_id, schedule, "RETENTION_INTERVAL=off")
