"""The fixture-sync Schedule, created (or brought in line with the settings) when a worker starts."""

from __future__ import annotations

from datetime import timedelta

from temporalio.client import (
    Client,
    Schedule,
    ScheduleActionStartWorkflow,
    ScheduleAlreadyRunningError,
    ScheduleIntervalSpec,
    ScheduleOverlapPolicy,
    SchedulePolicy,
    ScheduleSpec,
    ScheduleUpdate,
    ScheduleUpdateInput,
)

from scoreline.logging import get_logger
from scoreline.settings import Settings
from workflows.fixture_sync import FixtureSyncInput, FixtureSyncWorkflow

log = get_logger(__name__)


def fixture_sync_schedule_id(task_queue: str) -> str:
    """One schedule per deployment (task queue), so deployments sharing a namespace never clash."""
    return f"fixture-sync-{task_queue}"


def _schedule(settings: Settings, every: timedelta) -> Schedule:
    return Schedule(
        action=ScheduleActionStartWorkflow(
            FixtureSyncWorkflow.run,
            FixtureSyncInput(days_ahead=settings.fixture_sync_days_ahead),
            id=f"fixture-sync-run-{settings.temporal_task_queue}",
            task_queue=settings.temporal_task_queue,
            # A run that takes longer than one interval is stuck; the next one starts afresh.
            execution_timeout=every,
        ),
        spec=ScheduleSpec(intervals=[ScheduleIntervalSpec(every=every)]),
        # Skip overlaps, and never replay a backlog after an outage: the next run catches up.
        policy=SchedulePolicy(overlap=ScheduleOverlapPolicy.SKIP, catchup_window=timedelta(minutes=2)),
    )


async def ensure_fixture_sync_schedule(client: Client, settings: Settings) -> None:
    """Create the schedule (or update it to the current interval) and run it once at once.

    `FIXTURE_SYNC_INTERVAL=off` pauses an existing schedule instead.
    """
    schedule_id = fixture_sync_schedule_id(settings.temporal_task_queue)
    every = settings.fixture_sync_interval
    handle = client.get_schedule_handle(schedule_id)
    if every is None:
        try:
            await handle.pause(note="FIXTURE_SYNC_INTERVAL=off")
        except Exception as error:  # noqa: BLE001 - no schedule to pause is fine
            log.info("fixture sync is off", detail=str(error))
        return
    schedule = _schedule(settings, every)
    try:
        await client.create_schedule(schedule_id, schedule)
        log.info("fixture sync schedule created", schedule_id=schedule_id, every=str(every))
    except ScheduleAlreadyRunningError:

        def replace(_: ScheduleUpdateInput) -> ScheduleUpdate:
            return ScheduleUpdate(schedule=schedule)

        await handle.update(replace)
        await handle.unpause(note="worker started")
    await handle.trigger(overlap=ScheduleOverlapPolicy.SKIP)
