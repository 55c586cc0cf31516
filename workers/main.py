"""The worker process (`scoreline worker`): every workflow and activity of Scoreline, on two task queues.

Watch activities hold a slot for a whole match, so they run on their own queue with a large slot
count; workflows and the short activities (ingest fetches, fixture sync, probes) share the main
queue and never wait behind pollers (design §2). Their dependencies (`workers.dependencies`) are
injected into the activity classes and closed on exit. The partner feed builder is a process of
its own (`workers.feeds`).
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.client import Client
from temporalio.worker import Worker

from activities.commands.activities import CommandActivities
from activities.fixture_sync import FixtureSyncActivities
from activities.ingest.store import IngestStore
from activities.probe import ProbeActivities
from activities.provider.config import live_poll_interval
from activities.push.publish import PublishActivities
from activities.retention import RetentionActivities
from activities.watch import PollingConfig, WatchActivities
from scoreline.logging import get_logger
from scoreline.metrics.exporter import start_exporter
from scoreline.metrics.instruments import metrics
from scoreline.settings import Settings
from scoreline.temporal.client import connect_from
from scoreline.temporal.match_runs import MatchRuns
from workers.dependencies import WorkerDependencies, worker_dependencies
from workers.schedules import ensure_fixture_sync_schedule, ensure_retention_schedule
from workflows.fixture_sync import FixtureSyncWorkflow
from workflows.match import MatchWorkflow
from workflows.probe import WorkerProbeWorkflow
from workflows.replay import ReplayFixtureWorkflow
from workflows.retention import RetentionWorkflow

log = get_logger(__name__)

WORKFLOWS: Sequence[type] = (
    MatchWorkflow,
    FixtureSyncWorkflow,
    ReplayFixtureWorkflow,
    WorkerProbeWorkflow,
    RetentionWorkflow,
)

MAIN_QUEUE_HEARTBEATS: dict[str, timedelta] = {
    "max_heartbeat_throttle_interval": timedelta(seconds=2),
    "default_heartbeat_throttle_interval": timedelta(seconds=2),
}
"""How often, at most, a main-queue activity's heartbeat reaches Temporal. Left to the SDK, it is
once per 0.8 heartbeat timeout, so a worker stopped for most of a timeout could lose an attempt it
would have resumed; every 2 s, a pause shorter than the timeout is survived, and a retry resumes
from a cursor at most 2 s old."""

VALIDATION_ATTEMPTS = 3


def new_worker(client: Client, **options: Any) -> Worker:
    """A `Worker`, built again if validating a workflow hit the sandbox's import-lock race.

    On Python 3.10/3.11 the workflow sandbox imports through pure-Python `importlib`, whose module
    lock is not re-entrant (CPython bug 91351): a garbage-collector finalizer that imports
    `warnings` while a workflow module loads makes the validation fail with `KeyError(<thread
    id>)` — temporalio/sdk-python#585, fixed upstream only by an open pull request (#1833). The
    race is rare and never repeats at once, so the worker is built again; any other validation
    failure is raised as it is.
    """
    for attempt in range(1, VALIDATION_ATTEMPTS + 1):
        try:
            return Worker(client, **options)
        except RuntimeError as error:
            if attempt == VALIDATION_ATTEMPTS or not _import_lock_race(error):
                raise
            log.warning("worker validation hit the sandbox import race; building it again", attempt=attempt)
    raise AssertionError("unreachable")


def _import_lock_race(error: BaseException) -> bool:
    cause = error.__cause__
    while cause is not None:
        if isinstance(cause, KeyError) and cause.args and isinstance(cause.args[0], int):
            return True
        cause = cause.__cause__
    return False


def build_workers(client: Client, deps: WorkerDependencies, settings: Settings) -> list[Worker]:
    """The main-queue worker (workflows, short activities) and the watch-queue worker."""
    pools = deps.pools
    store = IngestStore(pools.ingest)
    polling = PollingConfig(
        live=live_poll_interval(settings),
        idle=settings.poll_interval_idle,
        reconcile=settings.reconcile_interval,
        stumps=settings.cricket_stumps_interval,
    )
    matches = WatchActivities(
        deps.provider, store, pools.ingest, deps.redis, polling, deps.watched, cricket=deps.cricket
    )
    runs = MatchRuns.from_settings(client, pools.background, settings)
    fixtures = FixtureSyncActivities(deps.provider, store, runs, cricket=deps.cricket)
    probe = ProbeActivities(pools.background, deps.redis)
    commands = CommandActivities(pools.commands, deps.read_copies)
    pushes = PublishActivities(pools.pushes, settings.la_min_update_interval.total_seconds())
    retention = RetentionActivities(pools.background)
    main = new_worker(
        client,
        task_queue=settings.temporal_task_queue,
        workflows=list(WORKFLOWS),
        activities=[
            probe.probe_dependencies,
            matches.fetch_and_ingest,
            fixtures.sync_fixtures,
            fixtures.start_match_workflows,
            commands.load_desk_context,
            commands.commit_command,
            pushes.publish_live_activity_push,
            retention.purge_old_rows,
        ],
        **MAIN_QUEUE_HEARTBEATS,
    )
    watch = new_worker(
        client,
        task_queue=settings.temporal_watch_task_queue,
        activities=[matches.watch_match],
        max_concurrent_activities=settings.watch_max_concurrent,
        # Heartbeats are the watch's cursor; sending them well inside the timeout keeps takeover quick.
        max_heartbeat_throttle_interval=settings.watch_heartbeat_timeout / 2,
        default_heartbeat_throttle_interval=settings.watch_heartbeat_timeout / 2,
    )
    return [main, watch]


@asynccontextmanager
async def running_workers(
    client: Client, deps: WorkerDependencies, settings: Settings
) -> AsyncIterator[None]:
    """Both workers polling until the block exits; then in-flight tasks finish or are cancelled."""
    async with AsyncExitStack() as stack:
        for worker in build_workers(client, deps, settings):
            await stack.enter_async_context(worker)
        yield


async def run(settings: Settings) -> None:
    """Run until SIGINT/SIGTERM, then finish in-flight tasks and close connections.

    With `WORKER_METRICS_ADDRESS` set, the SDK's metrics and ours are served there.
    """
    _require_the_apns_key_in_production(settings)
    # The workflow's identity travels as the `temporal_workflow` field (see `scoreline.logging`),
    # not appended to every message, so a line's `event` stays the text the code wrote.
    workflow.logger.workflow_info_on_message = False
    runtime = None
    if settings.worker_metrics_address:
        runtime = start_exporter("scoreline-worker", settings.worker_metrics_address)
    metrics().budget.set(settings.provider_hourly_budget)
    _report_the_live_cadence(settings)
    client = await connect_from(settings, runtime=runtime)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    async with worker_dependencies(settings) as deps, running_workers(client, deps, settings):
        await ensure_fixture_sync_schedule(client, settings)
        await ensure_retention_schedule(client, settings)
        log.info(
            "worker running",
            task_queue=settings.temporal_task_queue,
            watch_task_queue=settings.temporal_watch_task_queue,
        )
        try:
            await stop.wait()
        finally:
            log.info("worker stopping")


def _require_the_apns_key_in_production(settings: Settings) -> None:
    """The worker is the one process that pushes: in production, a worker without the APNs signing
    key runs no drainer, and with none running every phone's mailbox stays owed, so a missing key
    is a start-up error instead (the API and the other processes never need it)."""
    if settings.is_production and settings.apns_key_path is None:
        raise RuntimeError("the production worker needs APNS_KEY_PATH (the APNs .p8 signing key)")


def _report_the_live_cadence(settings: Settings) -> None:
    """Say once, and in the metrics, when the hourly budget cannot pay for `POLL_INTERVAL_LIVE`:
    live matches are then polled at the slower cadence it pays for (`live_poll_interval`)."""
    configured, effective = settings.poll_interval_live, live_poll_interval(settings)
    if configured is None or effective is None or configured.total_seconds() <= 0:
        return
    stretch = effective / configured
    metrics().live_poll_stretch.set(stretch)
    if stretch > 1:
        log.warning(
            "the provider budget cannot pay for POLL_INTERVAL_LIVE; live matches are polled slower",
            poll_interval_live=configured.total_seconds(),
            polled_every=round(effective.total_seconds(), 3),
            budget=settings.provider_hourly_budget,
            budget_window=settings.provider_budget_window.total_seconds(),
        )
