"""Bench: from the provider's answer to a durable change and a woken LISTEN client (design §7).

Run: `.venv/bin/python bench/ingest_latency.py [--recording football-three-matches] [--poll-ms 100]`

Goal: *ingest: provider response received → events durable → SSE client has it: p95 ≤ 100 ms*.
SSE does not exist yet; this measures the two stages that do, up to where the SSE hub will sit.

Setup: a real worker (`workers.main.running_workers`: both task queues, the real activities) in this
process, fed by the provider simulator in a child process whose replay clock is frozen and moved one
recording line at a time (like the match tests' `step_through`); a Temporal dev server of its own; a
fresh migrated database and a Redis database of its own on the tests' servers. One `MatchWorkflow`
per fixture of the recording. A separate *listener* process stands in for the SSE hub: one asyncpg
connection `LISTEN scoreline_changes`, a consumer task woken through an `asyncio.Queue` for each
notification, which then reads the new log entries (`timeline_item`, seq above the last it saw).

What is timed, per committed change (one NOTIFY `{fixture_id, version}`), all on the wall clock
(one machine, so the processes share it):

- *visible*: the clock POST that put the recording line on show had returned;
- *response received*: the HTTP answer carrying the snapshot that was ingested had arrived in the
  worker. The worker's provider client is the real one, subclassed to record every snapshot a
  match activity asks for (`ObservedClient`): for the live board this is `LiveBoard.fetched_at`
  (stamped as the answer arrives, before the board is shared); for the per-fixture endpoint, the end
  of the request. The snapshot ingested is the one the match's activity fetched last before the
  ingest transaction issued its `pg_notify` (the watch fetches, then ingests, in one task, so that
  order ties a change to the answer that carried it — no timing guesses; a retraction, which needs
  a second listing, is tied to that second answer);
- *watch has it*: the match's activity got the snapshot (a coalesced board may have arrived earlier
  on another watcher's poll and waited in the shared cache until this watch's own poll);
- the ingest transaction: when it began, its statements (count, round-trip time of each), when it
  issued `pg_notify` and when it sent COMMIT (SQLAlchemy `begin`, `before/after_cursor_execute` and
  `commit` hooks on the worker's engine);
- (a) *durable*: the NOTIFY arrived on the listener's LISTEN connection (sent by Postgres at commit);
- (b) *woken*: the listener's consumer task ran with it;
- (c) *read*: the consumer had the new entries from Postgres (what an SSE hub would then send).

The poll interval decides how long a change waits at the provider before a poll picks it up; that
wait is only in the *visible →* rows. The *response received →* rows are isolated from it (apart
from the coalescing wait, shown separately), and *watch has it →* from both. CPU of every process
over the stepping is reported alongside.

It prints a table and appends a dated section to `bench/results.md`.
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import json
import os
import re
import sys
import time
import uuid
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
from pydantic import SecretStr
from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.client import Client

from bench._common import (
    SIMULATOR_TOKEN,
    ChildProvider,
    CpuMeter,
    Fetch,
    ObservedClient,
    append_section,
    bench_database,
    bench_redis,
    busy_with,
    cancel_on_sigterm,
    child_provider,
    children_named,
    machine_note,
    ms,
    percentile,
    temporal_server,
    wait_until_quiet,
)
from scoreline.db.urls import asyncpg_dsn
from scoreline.logging import configure_logging
from scoreline.outbox.writer import CHANNEL as NOTIFY_CHANNEL
from scoreline.settings import Settings
from tests.match.harness import fast_settings, start_match
from tests.support.provider import expected, line_times, recording
from workers.dependencies import worker_dependencies
from workers.main import running_workers

GOAL = "ingest: provider response received → events durable → SSE client has it: p95 ≤ 100 ms"
GOAL_SECONDS = 0.100
SCRIPT = Path(__file__).resolve()
END_OF_RECORDING = 10_000.0
ENDED_AFTER = 2.0
"""A watch that has not fetched for this long (seconds) has ended: its match is over."""
WATCH_ACTIVITIES = frozenset({"watch_match", "fetch_and_ingest"})
FETCHES_PER_STEP = 3
"""A step is over when every active watch has started this many fetches after it (the first carries
the change, the second may retract what the first listed missing, the third proves both ingested)."""


# --- the listener (stand-in for the SSE hub), in its own process ------------------------------


async def listen(dsn: str) -> None:
    """LISTEN, wake a consumer per notification, read the new entries; one JSON line per change."""
    queue: asyncio.Queue[tuple[float, str]] = asyncio.Queue()
    listener = await asyncpg.connect(dsn)
    reader = await asyncpg.connect(dsn)
    seen: dict[int, int] = {}

    def notified(_connection: Any, _pid: int, _channel: str, payload: str) -> None:
        queue.put_nowait((time.time(), payload))

    await listener.add_listener(NOTIFY_CHANNEL, notified)
    print("ready", flush=True)
    while True:
        notified_at, payload = await queue.get()
        woken_at = time.time()
        change = json.loads(payload)
        fixture_id, version = int(change["fixture_id"]), int(change["version"])
        rows = await reader.fetch(
            "SELECT seq, kind, body FROM timeline_item WHERE fixture_id = $1 AND seq > $2 AND seq <= $3 ORDER BY seq",
            fixture_id,
            seen.get(fixture_id, 0),
            version,
        )
        read_at = time.time()
        seen[fixture_id] = max(seen.get(fixture_id, 0), version)
        line = {
            "fixture_id": fixture_id,
            "version": version,
            "notified": notified_at,
            "woken": woken_at,
            "read": read_at,
            "rows": len(rows),
        }
        sys.stdout.write(json.dumps(line) + "\n")
        sys.stdout.flush()


@dataclass(frozen=True)
class Heard:
    notified: float
    woken: float
    read: float
    rows: int


class ListenerProcess:
    """The listener child process and what it reported, by `(fixture_id, version)`."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.heard: dict[tuple[int, int], Heard] = {}
        self._reader = asyncio.create_task(self._read())

    @classmethod
    async def start(cls, database_url: str) -> ListenerProcess:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            str(SCRIPT),
            "--listen",
            asyncpg_dsn(database_url),
            stdout=asyncio.subprocess.PIPE,
        )
        assert process.stdout is not None
        async with asyncio.timeout(60):
            ready = await process.stdout.readline()
        if ready.strip() != b"ready":
            raise RuntimeError(f"the listener did not start: {ready!r}")
        return cls(process)

    async def _read(self) -> None:
        assert self.process.stdout is not None
        while line := await self.process.stdout.readline():
            data = json.loads(line)
            key = (int(data["fixture_id"]), int(data["version"]))
            self.heard[key] = Heard(data["notified"], data["woken"], data["read"], int(data["rows"]))

    async def stop(self) -> None:
        if self.process.returncode is None:
            self.process.terminate()
            await self.process.wait()
        self._reader.cancel()
        await asyncio.gather(self._reader, return_exceptions=True)


# --- what the worker does, observed -----------------------------------------------------------


@dataclass
class Transaction:
    """The ingest transaction a connection is in: when it began, its statements so far."""

    began: float
    statements: int = 0
    statement_seconds: float = 0.0
    statement_started: float = 0.0
    timings: list[tuple[str, float]] = field(default_factory=list)
    change: tuple[int, int] | None = None


@dataclass
class Change:
    """One committed change (one NOTIFY), with what the worker saw of it."""

    fixture_id: int
    version: int
    statement_at: float
    fetch: Fetch | None
    began: float
    statements: int
    statement_seconds: float
    timings: list[tuple[str, float]]
    commit_issued: float | None = None


@dataclass
class Observer:
    """Fed by the observed client and the engine's hooks, in the worker's process."""

    fetch_starts: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))
    last_fetch: dict[int, Fetch] = field(default_factory=dict)
    last_seen: dict[int, float] = field(default_factory=dict)
    changes: dict[tuple[int, int], Change] = field(default_factory=dict)

    def on_fetch(self, fetch: Fetch) -> None:
        if fetch.activity_type not in WATCH_ACTIVITIES:
            return
        self.last_fetch[fetch.fixture_id] = fetch
        self.last_seen[fetch.fixture_id] = fetch.finished
        if fetch.activity_type == "watch_match":
            self.fetch_starts[fetch.fixture_id].append(fetch.started)

    def fetches_since(self, fixture_id: int, moment: float) -> int:
        starts = self.fetch_starts.get(fixture_id, [])
        return len(starts) - bisect.bisect_left(starts, moment)

    def hook(self, engine: AsyncEngine) -> None:
        """Follow every transaction's statements; note each `pg_notify` and when its COMMIT was sent."""
        sync = engine.sync_engine
        event.listen(sync, "begin", self._begin)
        event.listen(sync, "before_cursor_execute", self._before)
        event.listen(sync, "after_cursor_execute", self._after)
        event.listen(sync, "commit", self._commit)

    def _begin(self, conn: Any) -> None:
        conn.info["bench_tx"] = Transaction(began=time.time())

    def _before(self, conn: Any, *_args: Any) -> None:
        tx = conn.info.get("bench_tx")
        if tx is not None:
            tx.statement_started = time.perf_counter()

    def _after(
        self, conn: Any, _cursor: Any, statement: str, parameters: Any, _context: Any, _many: bool
    ) -> None:
        tx: Transaction | None = conn.info.get("bench_tx")
        if tx is None:
            return
        took = time.perf_counter() - tx.statement_started
        tx.statements += 1
        tx.statement_seconds += took
        tx.timings.append((_statement_kind(statement), took))
        if "pg_notify" not in statement:
            return
        payload = _notify_payload(parameters)
        if payload is None:
            return
        key = (int(payload["fixture_id"]), int(payload["version"]))
        self.changes[key] = Change(
            key[0],
            key[1],
            time.time(),
            self.last_fetch.get(key[0]),
            began=tx.began,
            statements=tx.statements,
            statement_seconds=tx.statement_seconds,
            timings=list(tx.timings),
        )
        tx.change = key

    def _commit(self, conn: Any) -> None:
        tx: Transaction | None = conn.info.pop("bench_tx", None)
        if tx is not None and tx.change in self.changes:
            self.changes[tx.change].commit_issued = time.time()


def _statement_kind(statement: str) -> str:
    """`INSERT fixture`, `SELECT timeline_item`, `SELECT pg_notify` … for the round-trip breakdown."""
    text = " ".join(statement.split())
    if "pg_notify" in text:
        return "SELECT pg_notify"
    match = re.match(r"(INSERT INTO|UPDATE|DELETE FROM)\s+(\w+)", text) or re.match(
        r"(SELECT)\b.*?\bFROM\s+(\w+)", text
    )
    if match is None:
        return text[:20]
    return f"{match.group(1).split()[0]} {match.group(2)}"


def _notify_payload(parameters: Any) -> dict[str, Any] | None:
    values = parameters.values() if isinstance(parameters, Mapping) else parameters
    for value in values or ():
        if isinstance(value, str) and '"fixture_id"' in value:
            data: dict[str, Any] = json.loads(value)
            return data
    return None


# --- the run ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    t: float
    posted: float
    visible: float


@dataclass
class Run:
    steps: list[Step]
    changes: list[Change]
    heard: dict[tuple[int, int], Heard]
    fixtures: int
    step_timeouts: int
    missing: int
    seconds: float
    cpu: dict[str, float]
    disturbed: list[str]


async def settle(
    observer: Observer,
    listener: ListenerProcess,
    fixtures: Sequence[int],
    since: float,
    *,
    active_after: float | None,
    timeout: float,
) -> bool:
    """Until every active watch fetched `FETCHES_PER_STEP` times since `since` and every NOTIFY was heard."""
    deadline = time.monotonic() + timeout
    while True:
        active = [
            fixture_id
            for fixture_id in fixtures
            if active_after is None or observer.last_seen.get(fixture_id, 0.0) >= active_after
        ]
        now = time.time()
        polled = all(
            observer.fetches_since(fixture_id, since) >= FETCHES_PER_STEP
            or (active_after is not None and now - observer.last_seen.get(fixture_id, 0.0) > ENDED_AFTER)
            for fixture_id in active
        )
        if polled and set(observer.changes) <= set(listener.heard):
            return True
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.01)


async def measure(name: str, poll: timedelta, max_steps: int | None) -> Run:
    fixtures = sorted(int(key) for key in expected(name))
    times = line_times([name])
    moments = [*times[1:], END_OF_RECORDING]
    if max_steps is not None:
        moments = moments[:max_steps]
    observer = Observer()
    async with (
        bench_database("scoreline_bench_ingest") as database_url,
        bench_redis() as redis_url,
        temporal_server() as env,
        child_provider(recording(name)) as sim,
    ):
        listener = await ListenerProcess.start(database_url)
        try:
            base = Settings(
                database_url=database_url,
                redis_url=redis_url,
                temporal_address=env.client.service_client.config.target_host,
                temporal_namespace=env.client.namespace,
                temporal_task_queue=f"bench-ingest-{uuid.uuid4().hex[:8]}",
                log_format="console",
            )
            settings = fast_settings(base, sim.provider.url).model_copy(
                update={
                    "provider_token": SecretStr(SIMULATOR_TOKEN),
                    "poll_interval_live": poll,
                    "poll_interval_idle": poll,
                    # Production's reconcile: the live board carries the changes, as it would.
                    "reconcile_interval": timedelta(seconds=60),
                }
            )
            meter = CpuMeter(
                {
                    "worker": [os.getpid()],
                    "simulator": [sim.pid],
                    "listener": [listener.process.pid],
                    "temporal": children_named("temporal"),
                },
                database_url,
            )
            return await _drive(
                env.client, settings, sim, listener, observer, meter, fixtures, times[0], moments
            )
        finally:
            await listener.stop()


async def _drive(
    client: Client,
    settings: Settings,
    sim: ChildProvider,
    listener: ListenerProcess,
    observer: Observer,
    meter: CpuMeter,
    fixtures: list[int],
    first: float,
    moments: list[float],
) -> Run:
    provider = sim.provider
    await provider.set_clock(first)
    async with worker_dependencies(settings) as shared:
        observed = ObservedClient(shared.provider.transport, observer.on_fetch)
        deps = replace(shared, provider=observed)
        observer.hook(deps.pools.ingest)
        try:
            async with running_workers(client, deps, settings):
                handles = [await start_match(client, settings, fixture_id) for fixture_id in fixtures]
                warm = time.time()
                if not await settle(observer, listener, fixtures, warm, active_after=None, timeout=60):
                    raise RuntimeError("the matches did not start polling within 60 s")
                began = time.time()
                await meter.start()
                observer.changes.clear()
                steps: list[Step] = []
                timeouts = 0
                disturbed: set[str] = set()
                for index, t in enumerate(moments, 1):
                    posted = time.time()
                    await provider.set_clock(t)
                    visible = time.time()
                    steps.append(Step(t, posted, visible))
                    ok = await settle(
                        observer, listener, fixtures, visible, active_after=posted - 1.0, timeout=10
                    )
                    timeouts += not ok
                    if index % 25 == 0:
                        disturbed.update(busy_with())
                    if index % 50 == 0:
                        print(f"  {index}/{len(moments)} recording lines shown", flush=True)
                if moments[-1] == END_OF_RECORDING:
                    async with asyncio.timeout(60):
                        for handle in handles:
                            await handle.result()
                else:
                    for handle in handles:
                        await handle.terminate(reason="bench over")
                await settle(observer, listener, fixtures, time.time(), active_after=time.time(), timeout=10)
                seconds = time.time() - began
                cpu = await meter.used()
        finally:
            await observed.aclose()
    changes = [change for change in observer.changes.values() if change.statement_at >= began]
    missing = sum(1 for change in changes if (change.fixture_id, change.version) not in listener.heard)
    disturbed.update(busy_with())
    return Run(
        steps,
        changes,
        dict(listener.heard),
        len(fixtures),
        timeouts,
        missing,
        seconds,
        cpu,
        sorted(disturbed),
    )


# --- figures ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    label: str
    values: list[float]
    goal: bool = False


def rows(run: Run) -> list[Row]:
    posted = [step.posted for step in run.steps]
    columns: dict[str, list[float]] = defaultdict(list)
    for change in run.changes:
        heard = run.heard.get((change.fixture_id, change.version))
        fetch = change.fetch
        if heard is None or fetch is None:
            continue
        index = bisect.bisect_right(posted, fetch.received) - 1
        visible = run.steps[index].visible if index >= 0 else None
        if visible is not None:
            columns["visible → response"].append(fetch.received - visible)
            columns["visible → woken"].append(heard.woken - visible)
        columns["response → durable"].append(heard.notified - fetch.received)
        columns["response → woken"].append(heard.woken - fetch.received)
        columns["response → read"].append(heard.read - fetch.received)
        columns["watch → woken"].append(heard.woken - fetch.finished)
        columns["response → watch"].append(fetch.finished - fetch.received)
        columns["watch → begin"].append(change.began - fetch.finished)
        columns["begin → pg_notify"].append(change.statement_at - change.began)
        columns["statements"].append(change.statement_seconds)
        columns["pg_notify → commit"].append(
            (change.commit_issued or change.statement_at) - change.statement_at
        )
        columns["commit → notified"].append(heard.notified - (change.commit_issued or change.statement_at))
        columns["notified → woken"].append(heard.woken - heard.notified)
        columns["woken → read"].append(heard.read - heard.woken)
    return [
        Row("change visible at provider → LISTEN client woken (incl. poll wait)", columns["visible → woken"]),
        Row("response received → durable (NOTIFY on LISTEN connection) — (a)", columns["response → durable"]),
        Row("response received → LISTEN client woken — (b)", columns["response → woken"], goal=True),
        Row("response received → client has read the new entries", columns["response → read"]),
        Row("watch has the snapshot → LISTEN client woken", columns["watch → woken"]),
        Row("· visible → response received (poll wait)", columns["visible → response"]),
        Row("· response received → watch has it (coalescing wait)", columns["response → watch"]),
        Row(
            "· watch has it → transaction begun (digest check in Redis, pool checkout)",
            columns["watch → begin"],
        ),
        Row("· transaction begun → pg_notify issued (the ingest's statements)", columns["begin → pg_notify"]),
        Row("·· of which waiting on statement round trips", columns["statements"]),
        Row("· pg_notify issued → COMMIT issued", columns["pg_notify → commit"]),
        Row(
            "· COMMIT issued → NOTIFY at listener (commit, WAL flush, delivery)", columns["commit → notified"]
        ),
        Row("· NOTIFY → consumer task woken", columns["notified → woken"]),
        Row("· woken → new entries read", columns["woken → read"]),
    ]


def table(run: Run) -> str:
    lines = [
        "| stage | changes | p50 ms | p95 ms | p99 ms | max ms |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for row in rows(run):
        values = row.values
        label = f"**{row.label}**" if row.goal else row.label
        lines.append(
            f"| {label} | {len(values)} | {ms(percentile(values, 50))} | {ms(percentile(values, 95))} "
            f"| {ms(percentile(values, 99))} | {ms(max(values)) if values else '-'} |"
        )
    return "\n".join(lines)


def details(run: Run) -> list[str]:
    """What was measured, where the ingest's time goes, and the CPU around it."""
    by_kind: dict[str, int] = defaultdict(int)
    for change in run.changes:
        by_kind[change.fetch.kind if change.fetch else "none"] += 1
    kinds = ", ".join(f"{count} from the {kind} endpoint" for kind, count in sorted(by_kind.items()))
    statements = [float(change.statements) for change in run.changes]
    trips: dict[str, list[float]] = defaultdict(list)
    for change in run.changes:
        for kind, took in change.timings:
            trips[kind].append(took)
    slowest = sorted(trips.items(), key=lambda item: -percentile(item[1], 50))
    share = {role: seconds / run.seconds * 100 for role, seconds in run.cpu.items()}
    return [
        f"{len(run.changes)} committed changes over {len(run.steps)} recording lines in {run.seconds:.0f} s "
        f"({kinds}); {run.missing} NOTIFY not heard; {run.step_timeouts} steps timed out.",
        f"The ingest transaction ran {percentile(statements, 50):.0f} statements before its pg_notify "
        "(median); round trip of each, median ms: "
        + ", ".join(f"{kind} {ms(percentile(values, 50))}" for kind, values in slowest)
        + ".",
        f"CPU while stepping, % of one core: worker {share.get('worker', 0):.0f}, simulator "
        f"{share.get('simulator', 0):.0f}, Temporal {share.get('temporal', 0):.0f}, Postgres "
        f"{share.get('postgres', 0):.0f}, listener {share.get('listener', 0):.0f}; whole machine "
        f"{share.get('machine', 0):.0f} of {(os.cpu_count() or 1) * 100}.",
        *(
            [
                f"Note: a test run (pytest, pids {', '.join(run.disturbed)}) started during the "
                "measurement: these figures were taken on a shared machine."
            ]
            if run.disturbed
            else []
        ),
    ]


def verdict(run: Run) -> str:
    goal_row = next(row for row in rows(run) if row.goal)
    p95 = percentile(goal_row.values, 95)
    if not goal_row.values:
        return "Goal not measured (no change was observed end to end)."
    met = p95 <= GOAL_SECONDS and run.missing == 0
    return (
        f"Goal (stages that exist) {'met' if met else 'NOT met'}: response received → LISTEN client woken "
        f"p95 = {ms(p95)} ms against 100 ms. The SSE hop (hub → browser) does not exist yet and is not "
        "in these figures; it has to fit in what is left."
    )


def append_results(run: Run, name: str, poll: timedelta) -> None:
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    append_section(
        [
            f"## {now} — ingest latency: provider response → durable → LISTEN client (`bench/ingest_latency.py`)",
            "",
            f"Goal: *{GOAL}*.",
            "",
            f"Setup: `recordings/{name}.jsonl` ({run.fixtures} matches) shown one line at a time on the "
            f"simulator's frozen clock (child process); one in-process worker (`running_workers`, real "
            f"activities) polling every {poll.total_seconds() * 1000:g} ms (live and idle), reconcile 60 s; "
            "Temporal dev server, Postgres and Redis on this machine; a listener process (asyncpg LISTEN, "
            "a consumer task woken through a queue, then a read of the new `timeline_item` rows) standing "
            f"in for the SSE hub. {machine_note()}.",
            "",
            "Method: every change is one NOTIFY. *Response received* is when the HTTP answer carrying the "
            "ingested snapshot arrived in the worker (the live board's `fetched_at`, or the end of a "
            "per-fixture request): the worker's real provider client is subclassed to record every "
            "snapshot a match activity fetched, and SQLAlchemy hooks on the worker's engine (begin, each "
            "statement, the `pg_notify`, COMMIT) tie each change to the last snapshot its activity "
            "fetched (a watch fetches, then ingests, in one task). *Durable* = the NOTIFY arrived on the "
            "listener's LISTEN connection (Postgres "
            "sends it at commit). Times are wall-clock across processes on one machine. Rows marked · "
            "break the total down.",
            "",
            table(run),
            "",
            *(part for line in details(run) for part in (line, "")),
            verdict(run),
            "",
        ]
    )


async def main_async(args: argparse.Namespace) -> Run:
    cancel_on_sigterm()
    return await measure(args.recording, timedelta(milliseconds=args.poll_ms), args.max_steps)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--recording", default="football-three-matches", help="Bundled recording name (recordings/*.jsonl)."
    )
    parser.add_argument("--poll-ms", type=float, default=100, help="Live and idle poll interval, ms.")
    parser.add_argument("--max-steps", type=int, default=None, help="Show at most this many recording lines.")
    parser.add_argument("--no-wait", action="store_true", help="Do not wait for a running pytest to finish.")
    parser.add_argument("--no-write", action="store_true", help="Do not append to bench/results.md.")
    parser.add_argument("--listen", metavar="DSN", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.listen:
        asyncio.run(listen(args.listen))
        return
    configure_logging("warning", "console")
    if not args.no_wait and not wait_until_quiet():
        sys.exit("pytest still running after 15 minutes; not measuring on a busy machine")
    print(f"replaying {args.recording} at a {args.poll_ms:g} ms poll...", flush=True)
    run = asyncio.run(main_async(args))
    print()
    print(table(run))
    print()
    print("\n".join(details(run)))
    print(verdict(run))
    if not args.no_write:
        append_results(run, args.recording, timedelta(milliseconds=args.poll_ms))
        print("appended to bench/results.md")


if __name__ == "__main__":
    main()
