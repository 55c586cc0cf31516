"""Run Scoreline's real workers (every workflow and activity) on a test's own task queues: in this
process (`running_worker`) or as `scoreline worker` child processes (`worker_processes`)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from temporalio.client import Client

from devkit.devstack.ports import free_port
from scoreline.durations import format_duration, format_durations
from scoreline.settings import Settings
from tests.support.services import embedded_redis
from workers.dependencies import worker_dependencies
from workers.main import running_workers


@asynccontextmanager
async def running_worker(client: Client, settings: Settings) -> AsyncIterator[None]:
    async with worker_dependencies(settings) as deps, running_workers(client, deps, settings):
        yield


def worker_process_env(settings: Settings) -> dict[str, str]:
    """The environment a `scoreline worker` process needs to join this test's queues, with its
    providers, polling and (when the settings name one) APNs."""
    assert settings.database_url and settings.redis_url
    env = {
        **os.environ,
        "DATABASE_URL": settings.database_url,
        "REDIS_URL": settings.redis_url,
        "TEMPORAL_ADDRESS": settings.temporal_address,
        "TEMPORAL_NAMESPACE": settings.temporal_namespace,
        "TEMPORAL_TASK_QUEUE": settings.temporal_task_queue,
        "TEMPORAL_WATCH_TASK_QUEUE": settings.temporal_watch_task_queue,
        "PROVIDER_URL": settings.provider_url,
        "PROVIDER_TOKEN": settings.provider_token.get_secret_value(),
        "CRICKET_PROVIDER_URL": settings.cricket_provider_url,
        "CRICKET_PROVIDER_TOKEN": settings.cricket_provider_token.get_secret_value(),
        "CRICKET_STUMPS_INTERVAL": format_duration(settings.cricket_stumps_interval),
        "CRICKET_POST_MATCH_RECHECKS": format_durations(settings.cricket_post_match_rechecks),
        "POLL_INTERVAL_LIVE": format_duration(settings.poll_interval_live),
        "POLL_INTERVAL_IDLE": format_duration(settings.poll_interval_idle),
        "RECONCILE_INTERVAL": format_duration(settings.reconcile_interval),
        "WATCH_HEARTBEAT_TIMEOUT": format_duration(settings.watch_heartbeat_timeout),
        "PROVIDER_HOURLY_BUDGET": str(settings.provider_hourly_budget),
        "PROVIDER_BUDGET_WINDOW": format_duration(settings.provider_budget_window),
        "PROVIDER_BREAKER_COOLDOWN": format_duration(settings.provider_breaker_cooldown),
        "FULL_TIME_SETTLE": format_duration(settings.full_time_settle),
        "KICKOFF_LEAD": format_duration(settings.kickoff_lead),
        "FIXTURE_SYNC_INTERVAL": "off",
        "LOG_FORMAT": "json",
    }
    if settings.apns_key_path is not None:
        env.update(
            {
                "APNS_URL": settings.apns_url,
                "APNS_KEY_PATH": str(settings.apns_key_path),
                "APNS_TEAM_ID": settings.apns_team_id,
                "APNS_KEY_ID": settings.apns_key_id,
                "APNS_TOPIC": settings.apns_topic,
                "APNS_REQUEST_TIMEOUT": format_duration(settings.apns_request_timeout),
                "LA_MIN_UPDATE_INTERVAL": format_duration(settings.la_min_update_interval),
            }
        )
        if settings.apns_ca_file is not None:
            env["APNS_CA_FILE"] = str(settings.apns_ca_file)
    return env


@dataclass
class WorkerProcess:
    """A `scoreline worker` child process, its JSON log file and its metrics endpoint."""

    process: asyncio.subprocess.Process
    log_path: Path
    metrics_address: str

    async def stop(self) -> None:
        """SIGTERM, and SIGKILL if it has not left within 15 s."""
        if self.process.returncode is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.process.wait(), 15)
            except TimeoutError:
                await self.kill()

    async def kill(self) -> None:
        """SIGKILL: no shutdown, no last heartbeat, no reply; its activities time out on the server."""
        if self.process.returncode is None:
            self.process.send_signal(signal.SIGKILL)
        await self.process.wait()

    def log_events(self) -> list[dict[str, Any]]:
        """Every JSON line of its log so far (anything else it printed left out)."""
        events: list[dict[str, Any]] = []
        for line in self.log_path.read_text(errors="replace").splitlines():
            if line.startswith("{"):
                try:
                    events.append(json.loads(line))
                except ValueError:
                    continue  # a line cut short by SIGKILL
        return events

    def logged(self, event: str) -> list[dict[str, Any]]:
        """Its log lines whose `event` is `event`."""
        return [line for line in self.log_events() if line.get("event") == event]

    async def metric(self, name: str) -> float:
        """The sum over every label set of one series its `/metrics` serves (0 if none)."""
        async with httpx.AsyncClient(timeout=5) as http:
            text = (await http.get(f"http://{self.metrics_address}/metrics")).text
        total = 0.0
        for line in text.splitlines():
            series, _, value = line.rpartition(" ")
            if series.split("{", 1)[0] == name:
                total += float(value)
        return total


@asynccontextmanager
async def worker_processes(
    settings: Settings, directory: Path, count: int, *, ready_within: float = 60
) -> AsyncIterator[list[WorkerProcess]]:
    """`count` `scoreline worker` processes on the test's queues and settings, started together,
    each logging JSON to `directory/worker-{n}.log` and serving its metrics on a free port of its
    own; yielded once every one logs `worker running` (its pollers are up), stopped at the end
    (SIGTERM, then SIGKILL)."""
    workers: list[WorkerProcess] = []
    try:
        for number in range(count):
            address = f"127.0.0.1:{free_port()}"
            env = {**worker_process_env(settings), "WORKER_METRICS_ADDRESS": address}
            log_path = directory / f"worker-{number}.log"
            with log_path.open("w") as log:
                process = await asyncio.create_subprocess_exec(
                    sys.executable, "-m", "scoreline", "worker", env=env, stdout=log, stderr=log
                )
            workers.append(WorkerProcess(process, log_path, address))
        async with asyncio.timeout(ready_within):
            for worker in workers:
                while not worker.logged("worker running"):
                    assert worker.process.returncode is None, (
                        f"the worker exited: {worker.log_path.read_text()[-3000:]}"
                    )
                    await asyncio.sleep(0.1)
        yield workers
    finally:
        await asyncio.gather(*(worker.stop() for worker in workers))


@asynccontextmanager
async def own_redis(directory: Path) -> AsyncIterator[str]:
    """A Redis server of the test's own (its URL, db 0). Workers share their live board and hourly
    budget through Redis under fixed keys, so a test that counts either must not share a Redis
    with another test run on the machine (the harness's per-test database is the same number in
    every run without xdist, and each test flushes it)."""
    directory.mkdir(parents=True, exist_ok=True)
    async with embedded_redis(directory) as url:
        yield url
