"""The worker process: every workflow and activity of Scoreline, on the configured task queues.

Dependencies (engine, Redis) are built here, injected into activity classes, and closed on exit.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import redis.asyncio as aioredis
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.client import Client
from temporalio.worker import Worker

from activities.probe import ProbeActivities
from scoreline.db.engine import create_engine
from scoreline.logging import get_logger
from scoreline.settings import Settings
from scoreline.temporal.client import connect_from
from workflows.probe import WorkerProbeWorkflow

log = get_logger(__name__)

WORKFLOWS: Sequence[type] = (WorkerProbeWorkflow,)


@dataclass(frozen=True)
class WorkerDependencies:
    engine: AsyncEngine
    redis: aioredis.Redis


@asynccontextmanager
async def worker_dependencies(settings: Settings) -> AsyncIterator[WorkerDependencies]:
    engine = create_engine(settings.require_database_url())
    redis = aioredis.Redis.from_url(settings.require_redis_url())
    try:
        yield WorkerDependencies(engine=engine, redis=redis)
    finally:
        await redis.aclose()
        await engine.dispose()


def activities_for(deps: WorkerDependencies) -> list[Any]:
    probe = ProbeActivities(deps.engine, deps.redis)
    return [probe.probe_dependencies]


def build_worker(client: Client, deps: WorkerDependencies, task_queue: str) -> Worker:
    """The main-queue worker: workflows and short activities."""
    return Worker(
        client,
        task_queue=task_queue,
        workflows=list(WORKFLOWS),
        activities=activities_for(deps),
    )


async def run(settings: Settings) -> None:
    """Run until SIGINT/SIGTERM, then finish in-flight tasks and close connections."""
    client = await connect_from(settings)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    async with worker_dependencies(settings) as deps:
        worker = build_worker(client, deps, settings.temporal_task_queue)
        async with worker:
            log.info("worker running", task_queue=settings.temporal_task_queue)
            await stop.wait()
            log.info("worker stopping")
