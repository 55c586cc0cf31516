"""Run Scoreline's real workers (every workflow and activity) on a test's own task queues."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from temporalio.client import Client

from scoreline.settings import Settings
from workers.dependencies import worker_dependencies
from workers.main import running_workers


@asynccontextmanager
async def running_worker(client: Client, settings: Settings) -> AsyncIterator[None]:
    async with worker_dependencies(settings) as deps, running_workers(client, deps, settings):
        yield
