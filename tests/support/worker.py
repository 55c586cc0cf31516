"""Run Scoreline's real worker (every workflow and activity) on a test's own task queue."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from temporalio.client import Client

from scoreline.settings import Settings
from workers.main import build_worker, worker_dependencies


@asynccontextmanager
async def running_worker(client: Client, settings: Settings) -> AsyncIterator[None]:
    async with worker_dependencies(settings) as deps:
        async with build_worker(client, deps, settings.temporal_task_queue):
            yield
