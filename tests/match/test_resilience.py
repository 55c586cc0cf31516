"""The match outcome survives a killed worker, a restarted Postgres, a flushed Redis and an outage."""

from __future__ import annotations

import asyncio
import shutil
import signal
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import redis.asyncio as aioredis
from temporalio.client import Client

from devkit.devstack import embedded, health
from devkit.devstack.ports import free_port
from domain.probe import WorkerProbeInput
from scoreline.db import migrate
from scoreline.settings import Settings
from tests.match.harness import fast_settings, start_match, stored_outcome
from tests.support.provider import Provider, expected, line_times, running_provider
from tests.support.worker import running_worker, worker_process_env
from workflows.probe import WorkerProbeWorkflow

pytestmark = pytest.mark.timeout(300)

NAME = "football-basic"
FIXTURE_ID = 81000001
END_OF_RECORDING = 10_000.0


async def _probe(client: Client, settings: Settings) -> None:
    await client.execute_workflow(
        WorkerProbeWorkflow.run,
        WorkerProbeInput(),
        id=f"probe-{uuid.uuid4()}",
        task_queue=settings.temporal_task_queue,
    )


async def _wait_for_polls(provider: Provider, count: int, within: float) -> float:
    start = time.monotonic()
    seen = await provider.requests_served()
    while await provider.requests_served() < seen + count:
        assert time.monotonic() - start < within, f"no poll within {within}s"
        await asyncio.sleep(0.02)
    return time.monotonic() - start


def _assert_outcome(stored: dict[str, object]) -> None:
    outcome = expected(NAME)[str(FIXTURE_ID)]
    assert stored["events"] == sorted(outcome["events"])
    assert stored["retracted"] == sorted(outcome["retracted"])
    assert stored["score"] == outcome["score"]
    assert stored["event_entries"] == [1], "an event was logged twice or never"
    assert stored["gapless"]


async def test_killed_worker_is_taken_over_with_nothing_lost_or_doubled(
    settings: Settings, temporal_client: Client, database_url: str, tmp_path: Path
) -> None:
    """SIGKILL the worker mid-match: another takes the watch over within the heartbeat timeout."""
    times = [*line_times([NAME]), END_OF_RECORDING]
    half = len(times) // 2
    async with running_provider([NAME]) as provider:
        config = fast_settings(settings, provider.url)
        log = (tmp_path / "worker.log").open("w")
        first = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "scoreline",
            "worker",
            env=worker_process_env(config),
            stdout=log,
            stderr=log,
        )
        try:
            await asyncio.wait_for(_probe(temporal_client, config), 60)
            handle = await start_match(temporal_client, config, FIXTURE_ID)
            await provider.step_through(times[:half])
        finally:
            first.send_signal(signal.SIGKILL)
            await first.wait()
            log.close()
        killed_at = await stored_outcome(database_url, FIXTURE_ID)
        assert killed_at["version"] > 0
        async with running_worker(temporal_client, config):
            takeover = await _wait_for_polls(provider, 2, within=30)
            await provider.step_through(times[half:])
            result = await handle.result()
    heartbeat_timeout = config.watch_heartbeat_timeout.total_seconds()
    # The server notices after the heartbeat timeout; the retry waits its 1 s initial interval.
    assert takeover < heartbeat_timeout + 1 + 3, f"takeover took {takeover:.1f}s"
    assert result.state.value == "finished"
    _assert_outcome(await stored_outcome(database_url, FIXTURE_ID))


@pytest.fixture
async def own_postgres() -> AsyncIterator[tuple[embedded.EmbeddedPostgres, Path]]:
    """A Postgres this test may stop and start again (on the same port and data)."""
    scratch = Path(tempfile.mkdtemp(prefix="scoreline-pg-restart-"))
    scratch.chmod(0o755)
    server = embedded.postgres_process(scratch / "data", free_port(), scratch / "pg.log", durable=False)
    await server.process.start()
    await health.wait_until_ready(
        lambda: health.postgres_problem(server.url), timeout=60, gave_up=lambda: None
    )
    try:
        yield server, scratch
    finally:
        await server.process.stop()
        shutil.rmtree(scratch, ignore_errors=True)


async def test_postgres_restart_redis_flush_and_provider_outage_change_nothing(
    settings: Settings,
    temporal_client: Client,
    own_postgres: tuple[embedded.EmbeddedPostgres, Path],
) -> None:
    """Mid-match: Postgres restarts, Redis is flushed, the provider answers 503 for 60 s of match time."""
    server, scratch = own_postgres
    database_url = await embedded.ensure_database(server.url, "scoreline")
    await asyncio.to_thread(migrate.upgrade, database_url)
    times = [*line_times([NAME]), END_OF_RECORDING]
    third = len(times) // 3
    async with running_provider([NAME]) as provider:
        config = fast_settings(settings, provider.url).model_copy(update={"database_url": database_url})
        async with running_worker(temporal_client, config):
            handle = await start_match(temporal_client, config, FIXTURE_ID)
            await provider.step_through(times[:third])

            await server.process.stop()
            await asyncio.sleep(1.0)
            restarted = embedded.postgres_process(
                scratch / "data",
                server.port,
                scratch / "pg.log",
                durable=False,
            )
            await restarted.process.start()
            await health.wait_until_ready(
                lambda: health.postgres_problem(database_url), timeout=60, gave_up=lambda: None
            )
            await provider.step_through(times[third : 2 * third])

            redis = aioredis.Redis.from_url(config.redis_url or "")
            await redis.flushdb()
            await redis.aclose()
            await provider.fault(kind="status", status=503, duration=60)
            await provider.step_through(times[2 * third :], timeout=60)
            try:
                result = await handle.result()
                stored = await stored_outcome(database_url, FIXTURE_ID)
            finally:
                await restarted.process.stop()
    assert result.state.value == "finished"
    _assert_outcome(stored)
