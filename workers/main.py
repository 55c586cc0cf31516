"""The worker process: every workflow and activity of Scoreline, on two task queues.

Watch activities hold a slot for a whole match, so they run on their own queue with a large slot
count; workflows and the short activities (ingest fetches, fixture sync, probes) share the main
queue and never wait behind pollers (design §2). Dependencies (engine, Redis, the provider
client with its one connection pool) are built here, injected into the activity classes, and
closed on exit.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Any

import redis.asyncio as aioredis
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.client import Client
from temporalio.worker import Worker

from activities.commands.activities import CommandActivities
from activities.fixture_sync import FixtureSyncActivities
from activities.ingest.store import IngestStore
from activities.probe import ProbeActivities
from activities.provider.client import SportMonksClient
from activities.push.apns import ApnsClient
from activities.push.fanout import FanoutConfig, PushActivities
from activities.retention import RetentionActivities
from activities.watch import PollingConfig, WatchActivities
from scoreline.db.engine import create_engine
from scoreline.feeds.builder import FeedBuilder
from scoreline.logging import get_logger
from scoreline.redis_client import shared_redis
from scoreline.settings import Settings
from scoreline.temporal.client import connect_from
from scoreline.temporal.match_runs import MatchRuns
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


@dataclass(frozen=True)
class WorkerDependencies:
    engine: AsyncEngine
    redis: aioredis.Redis
    provider: SportMonksClient
    apns: ApnsClient | None
    """None without `APNS_KEY_PATH`: pushes to a fixture nobody follows still succeed."""


@asynccontextmanager
async def worker_dependencies(settings: Settings) -> AsyncIterator[WorkerDependencies]:
    async with AsyncExitStack() as stack:
        engine = create_engine(settings.require_database_url(), pre_ping=False)
        stack.push_async_callback(engine.dispose)
        redis = shared_redis(settings.require_redis_url())
        stack.push_async_callback(redis.aclose)
        provider = SportMonksClient.from_settings(settings)
        stack.push_async_callback(provider.aclose)
        apns = ApnsClient.from_settings(settings) if settings.apns_key_path else None
        if apns is not None:
            stack.push_async_callback(apns.aclose)
        yield WorkerDependencies(engine=engine, redis=redis, provider=provider, apns=apns)


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
    store = IngestStore(deps.engine)
    polling = PollingConfig(
        live=settings.poll_interval_live,
        idle=settings.poll_interval_idle,
        reconcile=settings.reconcile_interval,
    )
    matches = WatchActivities(deps.provider, store, deps.engine, deps.redis, polling)
    fixtures = FixtureSyncActivities(
        deps.provider, store, MatchRuns.from_settings(client, deps.engine, settings)
    )
    probe = ProbeActivities(deps.engine, deps.redis)
    commands = CommandActivities(deps.engine, deps.redis)
    pushes = PushActivities(deps.engine, deps.apns, FanoutConfig.from_settings(settings))
    retention = RetentionActivities(deps.engine)
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
            pushes.push_live_activities,
            retention.purge_old_rows,
        ],
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
    """Run until SIGINT/SIGTERM, then finish in-flight tasks and close connections."""
    client = await connect_from(settings)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    async with worker_dependencies(settings) as deps, running_workers(client, deps, settings):
        await ensure_fixture_sync_schedule(client, settings)
        await ensure_retention_schedule(client, settings)
        # Partner feed documents: every worker runs a builder, one leads per database.
        feeds = FeedBuilder(deps.engine, deps.redis, settings.require_database_url())
        await feeds.start()
        log.info(
            "worker running",
            task_queue=settings.temporal_task_queue,
            watch_task_queue=settings.temporal_watch_task_queue,
        )
        try:
            await stop.wait()
        finally:
            log.info("worker stopping")
            await feeds.stop()
