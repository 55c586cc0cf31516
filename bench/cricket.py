"""Bench: 100 concurrent live cricket matches on one worker at real poll intervals (issue #12).

Run: `.tools/bin/uv run --frozen python bench/cricket.py [--matches 100] [--minutes 3] [--sse-matches 20]`

Goals: *one upstream `livescores` request per poll interval; ball commit → SSE client p95 ≤ 100 ms;
worker CPU per poll interval reported*.

Setup (`bench/cricket_recording.py`): the bundled real T20 (`recordings/cricket-t20.jsonl.gz`)
copied to N fixtures (provider ids 70001…, ball ids unique per copy), copy `i` shifted later by
`i/N` of `--stagger` seconds (about one ball's gap, so the balls land spread out, not at once) and
cut to a window of the first innings. The simulator (child process, `bench/_common.child_provider`)
replays it at real speed from replay time 5,000 s, when every copy is mid-innings (about ball 60
of 120), so the worker's intervals are the real ones: 2.5 s live, 5 s idle, reconcile 60 s. Its
Cricket v2 budget is the real one (2,000 calls per endpoint per hour) and is not raised: a run of
a few minutes stays far below it, and the report projects each endpoint's use to an hour.

One in-process worker (`workers.main.running_workers`, the real activities, production settings;
as `bench/many_matches.py`) runs the N `MatchWorkflow`s, started the way the fixture sync does
(fixture rows from one `livescores` answer, then `MatchRuns.ensure_running`), on a Temporal dev
server of its own, a fresh migrated database and a Redis database of its own on the tests'
servers. The API runs in a child process (`bench/stream_latency.py --serve`: uvicorn, production
live settings). An observer child process (this file with `--observe`) holds one SSE client
(`/v1/matches/{id}/stream`) on each of `--sse-matches` matches (every fifth copy by default) and LISTENs on the outbox
channel; it shares no event loop and no GIL with the worker, so neither of its clocks waits behind
the worker's JSON parsing.

After a warm-up (every match polling steadily) it measures for `--minutes`:

- upstream requests: `cricket/livescores` per poll interval (requests ÷ (elapsed ÷ 2.5 s)), and
  every cricket endpoint per hour (the simulator's `/_sim/stats`, against the 2,000/hour budget);
- ball commit → SSE client latency, per ball entry (`timeline_item` kind `event` of the `balls`
  stream) of a watched match committed in the window, at each client: the first arrival of a
  version at or past the ball's seq - the ball's commit. Commit = when the observer received the
  transaction's `pg_notify` (Postgres sends it at COMMIT; the API's hub wakes on the same one).
  Also given from the transaction's start (`timeline_item.created_at` is `now()`), an upper bound;
- worker CPU: `time.process_time()` of this process (the worker and the bench's own light
  bookkeeping; the SSE clients are in the observer) over the window, per poll interval and per
  poll, split by thread group; the simulator's, API's, Postgres's and the machine's CPU beside it;
- missed polls as `bench/many_matches.py` counts them (the worker's real Cricket v2 client,
  subclassed to record every call a watch makes: a gap between two polls of a match above 1.5x its
  interval, hand-backs to the workflow after each ball included), and the largest poll age the
  watches' own gauge (`WatchedMatches`) showed, sampled every second.

It prints a table and appends a dated section to `bench/results.md`, then terminates every
workflow; an overloaded worker that has not drained within a minute is stopped hard.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
from pydantic import SecretStr
from temporalio import activity
from temporalio.client import Client, WorkflowHandle

from activities.ingest.store import IngestStore
from activities.provider.client import LiveBoard
from activities.provider.cricket.client import FIXTURE_INCLUDES, CricketClient
from activities.provider.transport import SportMonksTransport
from bench._common import (
    SIMULATOR_TOKEN,
    Fetch,
    WarningCounter,
    append_section,
    arm_teardown_watchdog,
    bench_database,
    bench_redis,
    busy_with,
    cancel_on_sigterm,
    child_provider,
    configure_bench_logging,
    machine_busy,
    machine_note,
    ms,
    percentile,
    postgres_pids,
    process_cpu,
    reset_sim_requests,
    sim_requests,
    temporal_server,
    thread_cpu,
    wait_until_quiet,
)
from bench.cricket_recording import FIRST_INNINGS, provider_ids, write_copies
from bench.many_matches import MISS_FACTOR, Gaps, Polls, bounded, gaps
from bench.stream_latency import Client as StreamClient
from bench.stream_latency import start_api
from domain.cricket.board import cricket_fixture_id
from domain.snapshot import Snapshot
from scoreline.db.urls import asyncpg_dsn
from scoreline.outbox.writer import CHANNEL
from scoreline.settings import Settings
from scoreline.temporal.match_runs import MatchRuns, match_workflow_id
from tests.support.provider import Provider
from workers.dependencies import WorkerDependencies, worker_dependencies
from workers.main import running_workers

SCRIPT = Path(__file__).resolve()
GOAL = (
    "100 concurrent live cricket matches on one worker at real poll intervals: 1 `livescores` per "
    "interval, ball commit → SSE client p95 ≤ 100 ms, worker CPU per poll"
)
GOAL_LIVESCORES = 1.0
GOAL_P95 = 0.100
LIVE = "cricket/livescores"
CRICKET_HOURLY_BUDGET = 2000
"""The simulator's (and Cricket v2's) calls per endpoint per hour (`devkit.simulators.provider.simulator`)."""
START_T = 5000.0
"""Replay time at which the run starts: every copy is mid first innings (about ball 60)."""
STAGGER = 45.0
"""About one ball's gap in the real T20 (mean 47 s, median 35 s in the first innings)."""
SETTLE_SECONDS = 10.0
"""The observer keeps listening this long after the window, so a ball committed at its end still arrives."""
OBSERVER_READY_SECONDS = 120.0
TEARDOWN_SECONDS = 60.0


# --- the worker's Cricket v2 client, observed ---------------------------------------------------


class ObservedCricket(CricketClient):
    """The real Cricket v2 client (same transport, coalescing, normaliser), telling `sink` about every fetch."""

    def __init__(self, transport: SportMonksTransport, sink: Polls) -> None:
        super().__init__(transport)
        self._sink = sink
        self.live_fetches: list[tuple[float, float]] = []
        """(start, end) wall times of each upstream `livescores` fetch, normalisation included."""

    async def _fetch_live(self) -> LiveBoard:
        started = time.time()
        try:
            return await super()._fetch_live()
        finally:
            self.live_fetches.append((started, time.time()))

    async def live_snapshot(self, fixture_id: int) -> Snapshot | None:
        started = time.time()
        try:
            board = await self.live()
        except Exception:
            self._report(fixture_id, "live", started, None, failed=True)
            raise
        self._report(
            fixture_id, "live", started, board.get(fixture_id), received=board.fetched_at.timestamp()
        )
        return board.get(fixture_id)

    async def fixture(self, fixture_id: int) -> Snapshot | None:
        started = time.time()
        try:
            snapshot = await super().fixture(fixture_id)
        except Exception:
            self._report(fixture_id, "fixture", started, None, failed=True)
            raise
        self._report(fixture_id, "fixture", started, snapshot)
        return snapshot

    def _report(
        self,
        fixture_id: int,
        kind: str,
        started: float,
        snapshot: Snapshot | None,
        *,
        received: float | None = None,
        failed: bool = False,
    ) -> None:
        """One `Fetch` for `Polls`, with the calling activity (polls are told apart by it)."""
        now = time.time()
        caller: str | None = None
        caller_type: str | None = None
        if activity.in_activity():
            info = activity.info()
            caller = f"{info.workflow_id}/{info.activity_id}#{info.attempt}"
            caller_type = info.activity_type
        fetch = Fetch(fixture_id, kind, started, now, received or now, caller, caller_type, snapshot, failed)
        self._sink.on_fetch(fetch)


# --- the observer: SSE clients and the outbox's NOTIFY, in a process of their own ----------------


class SseClient(StreamClient):
    """A bare SSE client (`bench/stream_latency.py`'s) that also notes when its stream dropped."""

    def __init__(self, fixture_id: int) -> None:
        super().__init__("sse", fixture_id)
        self.lost: float | None = None

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = time.time()
        super().connection_lost(exc)


async def observe(port: int, database_url: str, out: Path, fixtures: list[int]) -> None:
    """The observer's whole job: stamp every commit and every SSE arrival until SIGTERM, then dump them.

    Commits are stamped from `pg_notify` (sent by Postgres at COMMIT), arrivals as the bytes reach
    the socket; one process, one clock, nothing else on its loop.
    """
    wanted = set(fixtures)
    commits: list[tuple[int, int, float]] = []

    def on_notify(_conn: object, _pid: int, _channel: str, payload: str) -> None:
        now = time.time()
        body = json.loads(payload)
        if int(body["fixture_id"]) in wanted:
            commits.append((int(body["fixture_id"]), int(body["version"]), now))

    listener = await asyncpg.connect(asyncpg_dsn(database_url))
    await listener.add_listener(CHANNEL, on_notify)
    loop = asyncio.get_running_loop()
    clients = [SseClient(fixture_id) for fixture_id in fixtures]
    for client in clients:
        await loop.create_connection(client.itself, "127.0.0.1", port)
    async with asyncio.timeout(OBSERVER_READY_SECONDS):
        await asyncio.gather(*(client.ready for client in clients))
    stop = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    print("ready", flush=True)
    await stop.wait()
    await listener.close()
    record = {
        "commits": commits,
        "clients": [
            {"fixture_id": client.fixture_id, "received": client.received, "lost": client.lost}
            for client in clients
        ],
    }
    await asyncio.to_thread(out.write_text, json.dumps(record))
    for client in clients:
        if client.transport is not None:
            client.transport.close()


@dataclass(frozen=True)
class Observed:
    """What the observer saw: (fixture, version, notify time) and each client's (version, arrival)."""

    commits: list[tuple[int, int, float]]
    received: dict[int, list[list[tuple[int, float]]]]
    lost: int


class Observer:
    """The observer child process: started once the matches have values, stopped after the window."""

    def __init__(self, process: asyncio.subprocess.Process, out: Path) -> None:
        self.process = process
        self.out = out

    @classmethod
    async def start(cls, port: int, database_url: str, workdir: Path, fixtures: list[int]) -> Observer:
        out = workdir / "observed.json"
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            str(SCRIPT),
            "--observe",
            str(port),
            database_url,
            str(out),
            *(str(fixture_id) for fixture_id in fixtures),
            cwd=SCRIPT.parent.parent,
            stdout=asyncio.subprocess.PIPE,
        )
        assert process.stdout is not None
        async with asyncio.timeout(OBSERVER_READY_SECONDS + 10):
            line = await process.stdout.readline()
        if line.strip() != b"ready":
            raise RuntimeError(f"the observer did not start (exit {process.returncode})")
        return cls(process, out)

    async def finish(self) -> Observed:
        """Stop it and read what it recorded."""
        self.process.terminate()
        await self.process.wait()
        raw = json.loads(self.out.read_text())
        received: dict[int, list[list[tuple[int, float]]]] = {}
        for client in raw["clients"]:
            arrivals = [(int(version), float(at)) for version, at in client["received"]]
            received.setdefault(int(client["fixture_id"]), []).append(arrivals)
        commits = [(int(f), int(v), float(t)) for f, v, t in raw["commits"]]
        lost = sum(client["lost"] is not None for client in raw["clients"])
        return Observed(commits, received, lost)

    async def kill(self) -> None:
        if self.process.returncode is None:
            self.process.kill()
            await self.process.wait()


# --- latency -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Ball:
    """One ball's log entry: its match, its seq, and when its transaction started (`now()`)."""

    fixture_id: int
    seq: int
    started: float


async def balls_committed(database_url: str, since: float, until: float) -> list[Ball]:
    """Every ball entry of every match whose transaction started inside the window."""
    connection = await asyncpg.connect(asyncpg_dsn(database_url))
    try:
        rows = await connection.fetch(
            """SELECT t.fixture_id, t.seq, extract(epoch FROM t.created_at)::float8 AS started
            FROM timeline_item t JOIN match_event e ON e.id = t.match_event_id
            WHERE t.kind = 'event' AND e.stream = 'balls'
              AND t.created_at >= to_timestamp($1) AND t.created_at < to_timestamp($2)""",
            since,
            until,
        )
    finally:
        await connection.close()
    return [Ball(int(row["fixture_id"]), int(row["seq"]), float(row["started"])) for row in rows]


@dataclass
class Latency:
    """Ball commit → SSE client, per (ball, client)."""

    from_commit: list[float] = field(default_factory=list)
    from_start: list[float] = field(default_factory=list)
    transactions: list[float] = field(default_factory=list)
    """Per watched ball: its transaction's start to its commit's NOTIFY (how long the ingest held it open)."""
    balls: int = 0
    missing: int = 0
    unannounced: int = 0


def latencies(balls: list[Ball], observed: Observed) -> Latency:
    """Match each watched ball to its commit's NOTIFY and to each client's first arrival at or past it."""
    notified: dict[int, list[tuple[int, float]]] = {}
    for fixture_id, version, at in observed.commits:
        notified.setdefault(fixture_id, []).append((version, at))
    result = Latency()
    for ball in balls:
        clients = observed.received.get(ball.fixture_id)
        if not clients:
            continue
        result.balls += 1
        commit = next(
            (at for version, at in sorted(notified.get(ball.fixture_id, [])) if version >= ball.seq), None
        )
        if commit is None:
            result.unannounced += 1
        else:
            result.transactions.append(commit - ball.started)
        for arrivals in clients:
            arrival = next((at for version, at in arrivals if version >= ball.seq), None)
            if arrival is None:
                result.missing += 1
                continue
            result.from_start.append(arrival - ball.started)
            if commit is not None:
                result.from_commit.append(arrival - commit)
    return result


# --- the run -----------------------------------------------------------------------------------


@dataclass
class Result:
    matches: int
    sse_matches: int
    interval: float
    seconds: float
    warmup: float
    requests: dict[str, int]
    requests_total: dict[str, int]
    run_seconds: float
    latency: Latency
    balls_all: int
    cpu: dict[str, float]
    threads: dict[str, float]
    gaps: Gaps
    oldest_age: float
    transport: dict[str, int]
    live_fetches: list[float]
    live_sample: tuple[int, float]
    """One `livescores` answer after the window: its bytes and the seconds the simulator took."""
    notes: list[str] = field(default_factory=list)
    warnings: dict[str, int] = field(default_factory=dict)

    @property
    def intervals(self) -> float:
        return self.seconds / self.interval

    def per_interval(self, endpoint: str) -> float:
        return self.requests.get(endpoint, 0) / self.intervals

    def per_hour(self, endpoint: str) -> float:
        return self.requests.get(endpoint, 0) / self.seconds * 3600


def bench_settings(
    database_url: str, redis_url: str, env_client: Client, provider: Provider, interval: float
) -> Settings:
    """Production settings, pointed at this bench's services (both provider URLs at the simulator)."""
    return Settings(
        database_url=database_url,
        redis_url=redis_url,
        temporal_address=env_client.service_client.config.target_host,
        temporal_namespace=env_client.namespace,
        temporal_task_queue=f"bench-cricket-{uuid.uuid4().hex[:8]}",
        temporal_watch_task_queue=f"bench-cricket-watch-{uuid.uuid4().hex[:8]}",
        provider_url=provider.url,
        provider_token=SecretStr(SIMULATOR_TOKEN),
        cricket_provider_url=f"{provider.url}/api/v2.0",
        cricket_provider_token=SecretStr(SIMULATOR_TOKEN),
        poll_interval_live=timedelta(seconds=interval),
        log_format="console",
    )


async def start_matches(
    client: Client, deps: WorkerDependencies, settings: Settings, ramp: float
) -> list[WorkflowHandle[Any, Any]]:
    """As the fixture sync does: fixture rows from one `livescores` answer, then each run from the facts."""
    board = await deps.cricket.live()
    snapshots = sorted(board.fixtures.values(), key=lambda snapshot: snapshot.fixture_id)
    await IngestStore(deps.pools.ingest).upsert_fixtures(snapshots)
    runs = MatchRuns.from_settings(client, deps.pools.ingest, settings)
    handles: list[WorkflowHandle[Any, Any]] = []
    began = time.time()
    for number, snapshot in enumerate(snapshots):
        await asyncio.sleep(max(0.0, began + ramp * number / len(snapshots) - time.time()))
        if await runs.ensure_running(snapshot.fixture_id):
            handles.append(client.get_workflow_handle(match_workflow_id(snapshot.fixture_id)))
    return handles


def watched_by_sse(fixtures: list[int], count: int) -> list[int]:
    """`count` matches spread evenly over the copies, so their offsets (and balls) spread too."""
    step = max(1, len(fixtures) // max(count, 1))
    return fixtures[::step][:count]


async def warm_up(polls: Polls, fixtures: list[int], limit: float, notes: list[str]) -> None:
    """Until every match polls steadily in play (or `limit` seconds), then one more interval."""
    began = time.time()
    while not all(polls.steady(fixture_id) for fixture_id in fixtures):
        if time.time() - began > limit:
            unsteady = sum(not polls.steady(fixture_id) for fixture_id in fixtures)
            notes.append(f"{unsteady} of {len(fixtures)} matches were not polling steadily after the warm-up")
            return
        await asyncio.sleep(1)


async def livescores_sample(provider: Provider) -> tuple[int, float]:
    """One `livescores` answer as the worker asks for it: how big it is and how long it took."""
    began = time.monotonic()
    answer = await provider.admin.get(
        "/api/v2.0/livescores", params={"api_token": SIMULATOR_TOKEN, "include": FIXTURE_INCLUDES}
    )
    return len(answer.content), time.monotonic() - began


def transport_counts(client: CricketClient) -> dict[str, int]:
    stats = client.stats.transport
    return {"sent": stats.sent, "failed": stats.failed, "refused_rate_limited": stats.refused_rate_limited}


async def measure(args: argparse.Namespace, workdir: Path, warnings: WarningCounter) -> Result:
    cancel_on_sigterm()
    run_began = time.time()
    end = START_T + args.warmup_max + args.minutes * 60 + 240
    path = write_copies(workdir, args.matches, start=START_T, end=min(end, FIRST_INNINGS[1]), stagger=STAGGER)
    fixtures = [cricket_fixture_id(provider_id) for provider_id in provider_ids(args.matches)]
    polls = Polls()
    async with (
        bench_database("scoreline_bench_cricket") as database_url,
        bench_redis() as redis_url,
        temporal_server() as env,
        child_provider(path) as sim,
    ):
        settings = bench_settings(database_url, redis_url, env.client, sim.provider, args.interval)
        await sim.provider.admin.post("/_sim/clock", json={"t": START_T, "freeze": False})
        api, port = await start_api(database_url, redis_url)
        try:
            async with worker_dependencies(settings) as shared:
                observed = ObservedCricket(shared.cricket.transport, polls)
                deps = replace(shared, cricket=observed)
                try:
                    async with running_workers(env.client, deps, settings):
                        return await _run(
                            args,
                            env.client,
                            deps,
                            settings,
                            sim.pid,
                            api.pid,
                            sim.provider,
                            fixtures,
                            polls,
                            database_url,
                            workdir,
                            port,
                            warnings,
                            run_began,
                        )
                finally:
                    await observed.aclose()
        finally:
            api.terminate()
            await api.wait()


async def _run(
    args: argparse.Namespace,
    client: Client,
    deps: WorkerDependencies,
    settings: Settings,
    sim_pid: int,
    api_pid: int,
    provider: Provider,
    fixtures: list[int],
    polls: Polls,
    database_url: str,
    workdir: Path,
    port: int,
    warnings: WarningCounter,
    run_began: float,
) -> Result:
    """Start, warm up, observe, measure; report at once; then end every workflow."""
    handles: list[WorkflowHandle[Any, Any]] = []
    reported = False
    observer: Observer | None = None
    try:
        print(f"starting {len(fixtures)} cricket match workflows...", flush=True)
        began = time.time()
        handles = await start_matches(client, deps, settings, args.ramp)
        notes: list[str] = []
        if len(handles) != len(fixtures):
            notes.append(f"only {len(handles)} of {len(fixtures)} match runs started")
        await warm_up(polls, fixtures, args.warmup_max, notes)
        observer = await Observer.start(
            port, database_url, workdir, watched_by_sse(fixtures, args.sse_matches)
        )
        await asyncio.sleep(args.interval)
        warmup = time.time() - began
        print(f"warm after {warmup:.0f} s; measuring {args.minutes:g} min...", flush=True)
        result = await _window(
            args, deps, settings, (sim_pid, api_pid), provider, fixtures, polls, database_url, observer
        )
        result.warmup = warmup
        result.run_seconds = time.time() - run_began
        result.notes = notes + result.notes
        result.warnings = dict(warnings.counts)
        report(result, args)
        reported = True
        return result
    finally:
        arm_teardown_watchdog(TEARDOWN_SECONDS, exit_code=0 if reported else 3)
        if observer is not None:
            await observer.kill()
        print(f"terminating {len(handles)} workflows...", flush=True)
        await bounded(handles, _terminate)


async def _terminate(handle: WorkflowHandle[Any, Any]) -> None:
    with contextlib.suppress(Exception):
        await handle.terminate(reason="bench over")


async def _window(
    args: argparse.Namespace,
    deps: WorkerDependencies,
    settings: Settings,
    pids: tuple[int, int],
    provider: Provider,
    fixtures: list[int],
    polls: Polls,
    database_url: str,
    observer: Observer,
) -> Result:
    """The measured minutes: counters before and after, the watches' poll age sampled every second."""
    seconds = args.minutes * 60
    assert isinstance(deps.cricket, ObservedCricket)
    requests_before = await sim_requests(provider)
    await reset_sim_requests(provider)
    transport_before = transport_counts(deps.cricket)
    others = {"simulator": [pids[0]], "API": [pids[1]], "observer": [observer.process.pid]}
    others_before = {role: process_cpu(pids) for role, pids in others.items()}
    postgres = await postgres_pids(database_url)
    postgres_before = process_cpu(postgres)
    machine_before, threads_before = machine_busy(), thread_cpu()
    started, cpu_before = time.time(), time.process_time()
    oldest = 0.0
    disturbed: set[str] = set()
    last_note = started
    while (left := started + seconds - time.time()) > 0:
        await asyncio.sleep(min(1.0, left))
        oldest = max(oldest, deps.watched.oldest_age(time.monotonic()))
        if time.time() - last_note >= 30:
            last_note = time.time()
            disturbed.update(busy_with())
            print(f"  {time.time() - started:.0f} s of {seconds:g} s", flush=True)
    cpu_after, until = time.process_time(), time.time()
    threads_after, machine_after = thread_cpu(), machine_busy()
    requests = await sim_requests(provider)
    transport_after = transport_counts(deps.cricket)
    cpu = {"worker": cpu_after - cpu_before, "machine": machine_after - machine_before}
    for role, role_pids in others.items():
        now = process_cpu(role_pids)
        cpu[role] = sum(value - others_before[role].get(pid, 0.0) for pid, value in now.items())
    postgres_now = process_cpu(await postgres_pids(database_url))
    cpu["Postgres"] = sum(value - postgres_before.get(pid, 0.0) for pid, value in postgres_now.items())
    await asyncio.sleep(SETTLE_SECONDS)
    seen = await observer.finish()
    sample = await livescores_sample(provider)
    balls = await balls_committed(database_url, started, until)
    notes: list[str] = []
    if seen.lost:
        notes.append(f"{seen.lost} SSE stream(s) dropped during the run")
    disturbed.update(busy_with())
    if disturbed:
        notes.append(
            f"a test run (pytest, pids {', '.join(sorted(disturbed))}) ran during the measurement: "
            "these figures were taken on a shared machine"
        )
    idle = (settings.poll_interval_idle or timedelta(seconds=5)).total_seconds()
    return Result(
        matches=len(fixtures),
        sse_matches=min(args.sse_matches, len(fixtures)),
        interval=args.interval,
        seconds=until - started,
        warmup=0.0,
        requests=requests,
        requests_total={
            name: requests.get(name, 0) + requests_before.get(name, 0)
            for name in {*requests, *requests_before}
        },
        run_seconds=0.0,
        latency=latencies(balls, seen),
        balls_all=len(balls),
        cpu=cpu,
        threads={group: value - threads_before.get(group, 0.0) for group, value in threads_after.items()},
        gaps=gaps(polls, fixtures, started, until, args.interval, idle),
        oldest_age=oldest,
        transport={key: transport_after[key] - transport_before[key] for key in transport_after},
        live_fetches=[end - begin for begin, end in deps.cricket.live_fetches if started <= begin <= until],
        live_sample=sample,
        notes=notes,
    )


# --- figures -----------------------------------------------------------------------------------


def table(result: Result) -> str:
    lat, g = result.latency, result.gaps
    worker = result.cpu.get("worker", 0.0)
    others = [
        endpoint
        for endpoint in sorted(result.requests)
        if endpoint.startswith("cricket/") and endpoint != LIVE
    ]
    rows = [
        (
            "matches in play / measured",
            f"{result.matches} / {result.seconds:.0f} s after a {result.warmup:.0f} s warm-up",
        ),
        (
            f"upstream `{LIVE}` per poll interval (goal: {GOAL_LIVESCORES:g} livescores per interval)",
            f"{result.per_interval(LIVE):.2f} ({result.requests.get(LIVE, 0)} in {result.intervals:.1f} intervals)",
        ),
        *(
            (
                f"upstream `{endpoint}` per hour (budget {CRICKET_HOURLY_BUDGET:,})",
                f"{result.per_hour(endpoint):,.0f} ({result.requests.get(endpoint, 0)} in the window, "
                f"{result.requests_total.get(endpoint, 0)} since the simulator started)",
            )
            for endpoint in others
        ),
        (
            "`livescores` answer: size / simulator's time to answer (one sample after the window)",
            f"{result.live_sample[0] / 1e6:.1f} MB / {result.live_sample[1]:.2f} s",
        ),
        (
            "`livescores` fetch + normalisation in the worker p50 / max, s (count)",
            f"{percentile(result.live_fetches, 50):.2f} / {max(result.live_fetches, default=float('nan')):.2f} "
            f"({len(result.live_fetches)})",
        ),
        (
            "client: requests failed / refused by a 429 window",
            f"{result.transport.get('failed', 0)} / {result.transport.get('refused_rate_limited', 0)}",
        ),
        (
            f"ball commit (NOTIFY) → SSE client p50 / p95 / p99 / max, ms (goal p95 ≤ {GOAL_P95 * 1000:.0f} ms)",
            " / ".join(ms(percentile(lat.from_commit, q)) for q in (50, 95, 99, 100))
            + f" ({len(lat.from_commit)} deliveries)",
        ),
        (
            "ball's transaction start (`created_at`) → SSE client p50 / p95 / p99, ms",
            " / ".join(ms(percentile(lat.from_start, q)) for q in (50, 95, 99)),
        ),
        (
            "ball's ingest transaction, start → commit (NOTIFY) p50 / p95 / max, ms",
            " / ".join(ms(percentile(lat.transactions, q)) for q in (50, 95, 100)),
        ),
        (
            "balls committed in the window: all matches / watched by SSE",
            f"{result.balls_all} / {lat.balls} ({lat.missing} deliveries missing, {lat.unannounced} without a NOTIFY seen)",
        ),
        (
            "worker CPU per poll interval (process time ÷ intervals)",
            f"{worker / result.intervals * 1000:.0f} ms = {worker / result.seconds * 100:.0f} % of one core",
        ),
        ("worker CPU per poll (÷ polls done)", f"{worker / max(g.polls, 1) * 1000:.1f} ms"),
        (
            "worker CPU by thread, % of one core",
            ", ".join(
                f"{group} {value / result.seconds * 100:.0f}" for group, value in result.threads.items()
            ),
        ),
        (
            "other CPU: simulator / API / Postgres / observer, % of one core",
            " / ".join(
                f"{result.cpu.get(role, 0.0) / result.seconds * 100:.0f}"
                for role in ("simulator", "API", "Postgres", "observer")
            ),
        ),
        (
            "whole machine busy",
            f"{result.cpu.get('machine', 0.0) / result.seconds * 100:.0f} % of one core (of {(os.cpu_count() or 1) * 100} %)",
        ),
        (
            f"missed polls (gap > {MISS_FACTOR:g}x interval)",
            f"{g.missed} of {g.polls:,} polls ({g.missed_at_restart} at a watch restart, {g.stalled} stalled watches)",
        ),
        (
            "poll gap p50 / p99 / max, s; across a watch restart p50 / max (count)",
            f"{percentile(g.gaps, 50):.2f} / {percentile(g.gaps, 99):.2f} / {max(g.gaps, default=float('nan')):.2f}; "
            f"{percentile(g.restart_gaps, 50):.2f} / {max(g.restart_gaps, default=float('nan')):.2f} ({g.restarts})",
        ),
        (
            "watch's wait for its snapshot p50 / p99, ms",
            f"{percentile(g.waits, 50) * 1000:.0f} / {percentile(g.waits, 99) * 1000:.0f}",
        ),
        ("largest poll age the watches' gauge showed (sampled each second)", f"{result.oldest_age:.1f} s"),
    ]
    lines = ["| figure | value |", "|---|---|"]
    lines.extend(f"| {name} | {value} |" for name, value in rows)
    return "\n".join(lines)


def verdict(result: Result) -> str:
    """Each goal, plainly, in one line; the board's real cadence beside the count (fewer is not better)."""
    live = result.per_interval(LIVE)
    # At most one per interval, give or take the window's ends.
    live_ok = live <= (round(result.intervals) + 1) / result.intervals
    every = result.seconds / max(result.requests.get(LIVE, 0), 1)
    p95 = percentile(result.latency.from_commit, 95)
    p95_ok = p95 <= GOAL_P95 and result.latency.missing == 0
    worker = result.cpu.get("worker", 0.0)
    return (
        f"{result.matches} live cricket matches on one worker: {live:.2f} `livescores` per interval "
        f"({'met' if live_ok else 'NOT met'}: goal 1; fetched every {every:.1f} s, polls every "
        f"{percentile(result.gaps.gaps, 50):.1f} s at the median for a {result.interval:g} s interval); "
        f"ball commit → SSE p95 {ms(p95)} ms ({'met' if p95_ok else 'NOT met'}: goal ≤ "
        f"{GOAL_P95 * 1000:.0f} ms, {result.latency.missing} missing); worker CPU "
        f"{worker / result.intervals * 1000:.0f} ms per {result.interval:g} s interval "
        f"({worker / result.seconds * 100:.0f} % of a core); {result.gaps.missed} missed polls."
    )


def warning_line(result: Result) -> str:
    """The worker's warnings and errors over the whole run, most frequent first."""
    if not result.warnings:
        return "Worker log: no warnings or errors."
    top = sorted(result.warnings.items(), key=lambda item: -item[1])[:6]
    return (
        "Worker log, warnings and errors over the whole run: "
        + "; ".join(f"{event!r} x{count:,}" for event, count in top)
        + "."
    )


def append_results(result: Result, args: argparse.Namespace) -> None:
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    notes = [f"Note: {note}." for note in result.notes]
    append_section(
        [
            f"## {now} — {result.matches} live cricket matches on one worker (`bench/cricket.py`)",
            "",
            f"Goal: *{GOAL}*.",
            "",
            f"Setup: the bundled real T20 (`cricket-t20`) copied to {result.matches} fixtures (provider ids "
            f"70001…, ball ids unique per copy), copy i shifted by i/{result.matches} of {STAGGER:g} s, and "
            f"replayed by the simulator (child process) at real speed from replay time {START_T:g} s, mid "
            f"first innings (about ball 60; the real Cricket v2 budget of {CRICKET_HOURLY_BUDGET:,} calls "
            "per endpoint per hour left as it is). One in-process worker with production settings (live "
            f"poll {args.interval:g} s, idle 5 s, reconcile 60 s), a Temporal dev server, Postgres and "
            "Redis on this machine; the API in a child process; one SSE client on each of "
            f"{result.sse_matches} matches in an observer process that also LISTENs on the outbox channel. "
            f"Measured for {result.seconds:.0f} s after every match polled steadily; the whole run took "
            f"{result.run_seconds / 60:.1f} min. {machine_note()}.",
            "",
            "Method: upstream requests from the simulator's counters. Latency per (ball entry, client): "
            "the client's first arrival of a version at or past the ball's seq - the ball's commit, "
            "taken as the moment the observer received the commit's `pg_notify` (Postgres sends it at "
            "COMMIT); the row below it measures from the transaction's start (`timeline_item.created_at`, "
            "`now()`), an upper bound. Worker CPU is `time.process_time()` of the worker's process "
            "(the bench's bookkeeping included, the SSE clients not) over the window ÷ poll intervals.",
            "",
            table(result),
            "",
            *notes,
            *([""] if notes else []),
            warning_line(result),
            "",
            verdict(result),
            "",
        ]
    )


def report(result: Result, args: argparse.Namespace) -> None:
    """Print the figures and append them to `bench/results.md` (unless `--no-write`)."""
    print()
    print(table(result))
    print()
    for note in result.notes:
        print(f"Note: {note}.")
    print(warning_line(result))
    print(verdict(result))
    if not args.no_write:
        append_results(result, args)
        print("appended to bench/results.md", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--matches", type=int, default=100, help="Live cricket matches (MatchWorkflows).")
    parser.add_argument("--minutes", type=float, default=3, help="Measured minutes after the warm-up.")
    parser.add_argument("--sse-matches", type=int, default=20, help="Matches with an SSE client.")
    parser.add_argument("--interval", type=float, default=2.5, help="Live poll interval, seconds.")
    parser.add_argument(
        "--ramp", type=float, default=20, help="Spread the workflow starts over this many seconds."
    )
    parser.add_argument("--warmup-max", type=float, default=90, help="Longest warm-up, seconds.")
    parser.add_argument("--no-wait", action="store_true", help="Do not wait for a running pytest to finish.")
    parser.add_argument("--no-write", action="store_true", help="Do not append to bench/results.md.")
    parser.add_argument(
        "--log-level", default="error", help="Worker log level on stderr (warnings are counted)."
    )
    parser.add_argument("--observe", nargs="+", metavar="ARG", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.observe:
        port, database_url, out, *fixtures = args.observe
        asyncio.run(observe(int(port), database_url, Path(out), [int(fixture_id) for fixture_id in fixtures]))
        return
    warnings = configure_bench_logging(args.log_level)
    if not args.no_wait and not wait_until_quiet():
        sys.exit("pytest still running after 15 minutes; not measuring on a busy machine")
    with tempfile.TemporaryDirectory(prefix="scoreline-bench-cricket-") as workdir:
        asyncio.run(measure(args, Path(workdir), warnings))


if __name__ == "__main__":
    main()
