"""Bench: hundreds of live matches on one worker, at the real poll interval (design §7).

Run: `.venv/bin/python bench/many_matches.py [--matches 500] [--duration 120] [--interval 2.5]`

Goal: *500 live matches on one worker: one upstream request per poll interval, no missed polls*.

Setup: the three bundled matches (`recordings/football-three-matches.jsonl`) cloned to N fixtures
under new ids and names, each clone shifted by its own offset of up to `--stagger` seconds so
their goals and cards do not all land at the same moment, and cut to the second half, so every
fixture is in play for the whole run. The provider simulator replays that file in a child process
with its clock *running* at real speed, so matches change as they would (about one change per match
per minute). N `MatchWorkflow`s (`match-{id}-…`), started evenly over `--ramp` seconds (0: all at
once, as after a worker restart), run on one in-process worker
(`workers.main.running_workers`, the real activities) with production settings: live poll 2.5 s,
idle 5 s, reconcile 60 s, heartbeat timeout 10 s; a Temporal dev server of its own (in memory, with
its Prometheus endpoint on), a fresh migrated database and a Redis database of its own on the
tests' servers.

After a warm-up (every match past its first ingest and polling steadily, or `--warmup-max`) it
measures for `--duration` seconds:

- missed polls: per match, the gap between the starts of two consecutive polls of its watch
  (including a hand-back to the workflow and the next watch's start after a material change) above
  1.5x the interval that applied (live while in play); a watch silent for that long at the end of the
  window counts too. Polls are seen through the worker's real provider client, subclassed to record
  every call a match activity makes (`ObservedClient`);
- upstream requests per poll interval, per endpoint (the simulator's `/_sim/stats`);
- CPU seconds of the worker process (`psutil`: all its threads, split into the event loop, the
  workflow thread, the Temporal SDK's Rust core and the executor), the simulator, the Temporal
  server, Postgres (postmaster and backends) and Redis (`INFO cpu`), and the whole machine;
- Temporal history events per minute (sum of `history_length` over the N workflows, before and
  after) and the server's frontend requests per minute by operation (its `service_requests` metric);
- Postgres transactions per minute (`pg_stat_database`) and committed log changes (`domain_event`);
- the worker's warnings and errors, counted by event (stderr shows them from `--log-level`).

It prints a table and appends a dated section to `bench/results.md` as soon as the window is over,
then terminates every workflow; an overloaded worker that has not drained within a minute is
stopped hard (children killed, database dropped).
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import itertools
import json
import os
import sys
import tempfile
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

import asyncpg
import httpx
from pydantic import SecretStr
from temporalio.client import Client, WorkflowHandle

from bench._common import (
    SIMULATOR_TOKEN,
    Fetch,
    ObservedClient,
    WarningCounter,
    append_section,
    arm_teardown_watchdog,
    bench_database,
    bench_redis,
    busy_with,
    cancel_on_sigterm,
    child_provider,
    children_named,
    configure_bench_logging,
    machine_busy,
    machine_note,
    percentile,
    postgres_pids,
    process_cpu,
    redis_cpu,
    reset_sim_requests,
    sim_requests,
    temporal_server,
    thread_cpu,
    wait_until_quiet,
)
from domain.states import PLAYING_STATES
from scoreline.db.urls import asyncpg_dsn
from scoreline.devstack.ports import free_port
from scoreline.settings import Settings
from simulators.provider.recording_file import read_recording
from tests.match.harness import start_match
from tests.support.provider import Provider, recording
from workers.dependencies import worker_dependencies
from workers.main import running_workers

GOAL = "500 live matches on one worker: one upstream request per poll interval, no missed polls"
SOURCE = "football-three-matches"
CLONE_BASE_ID = 96_000_000
SECOND_HALF = (4020.0, 6750.0)
"""Replay times between which all three bundled matches are in their second half."""
START_T = 4800.0
MISS_FACTOR = 1.5
MERGE_SECONDS = 0.5
"""Client calls of one watch closer than this are one poll (the live board, then the fixture)."""
TEARDOWN_SECONDS = 60.0
BENCH_OPERATIONS = frozenset({"DescribeWorkflowExecution", "GetSystemInfo", "DescribeNamespace"})
"""Frontend requests the bench itself makes (counting history), not the worker."""
T = TypeVar("T")


# --- the recording ---------------------------------------------------------------------------


def cloned_recording(directory: Path, count: int, *, start: float, end: float, stagger: float) -> Path:
    """The bundled matches cloned to `count` fixtures, each shifted by its own offset in `[0, stagger)`.

    A clone shifted by `d` shows at replay time `t` what its original showed at `t - d`. Lines before
    `start` are cut to the last one (the state on show at `start`), lines after `end` are dropped.
    """
    if start - stagger < SECOND_HALF[0] or end > SECOND_HALF[1]:
        raise ValueError(f"the run must stay inside the second half {SECOND_HALF} of replay time")
    lines = [json.loads(line) for line in read_recording(recording(SOURCE)).splitlines() if line.strip()]
    header, body = lines[0], lines[1:]
    originals: list[int] = header["fixtures"]
    frames: dict[int, list[dict[str, Any]]] = {fixture_id: [] for fixture_id in originals}
    for line in body:
        if "fixture" in line:
            frames[line["fixture"]["id"]].append(line)
    ids = [CLONE_BASE_ID + index for index in range(count)]
    out: list[dict[str, Any]] = []
    for index, clone_id in enumerate(ids):
        offset = stagger * ((index * 0.6180339887) % 1.0)
        shown: list[dict[str, Any]] = []
        for line in frames[originals[index % len(originals)]]:
            t = float(line["t"]) + offset
            if t <= start:
                shown[:] = [line]
            elif t <= end:
                shown.append(line)
        for line in shown:
            fixture = copy.deepcopy(line["fixture"])
            fixture["id"] = clone_id
            fixture["name"] = f"{fixture.get('name', 'Match')} #{index}"
            for relation in ("scores", "events", "periods", "timeline"):
                for item in fixture.get(relation) or ():
                    if isinstance(item, dict) and "fixture_id" in item:
                        item["fixture_id"] = clone_id
            out.append({"t": round(float(line["t"]) + offset, 3), "fixture": fixture})
    out.sort(key=lambda line: float(line["t"]))
    path = directory / f"many-matches-{count}.jsonl"
    with path.open("w") as handle:
        for line in [{**header, "name": f"bench x{count}", "fixtures": ids}, *out]:
            handle.write(json.dumps(line, separators=(",", ":")) + "\n")
    return path


# --- polls, as the worker's provider client saw them -----------------------------------------


@dataclass
class Poll:
    started: float
    finished: float
    activity: str | None
    playing: bool | None
    failed: bool


@dataclass
class Polls:
    """Every watch poll per fixture (calls of one poll merged)."""

    by_fixture: dict[int, list[Poll]] = field(default_factory=lambda: defaultdict(list))
    calls: Counter[str] = field(default_factory=Counter)

    def on_fetch(self, fetch: Fetch) -> None:
        if fetch.activity_type != "watch_match":
            return
        self.calls[fetch.kind] += 1
        playing = None if fetch.snapshot is None else fetch.snapshot.state in PLAYING_STATES
        polls = self.by_fixture[fetch.fixture_id]
        last = polls[-1] if polls else None
        if (
            last is not None
            and last.activity == fetch.activity
            and fetch.started - last.finished < MERGE_SECONDS
            and fetch.kind == "fixture"
        ):
            # The live board did not list it, so the watch asked the fixture endpoint: same poll.
            last.finished = fetch.finished
            last.playing = playing if playing is not None else last.playing
            last.failed = last.failed and fetch.failed
            return
        polls.append(Poll(fetch.started, fetch.finished, fetch.activity, playing, fetch.failed))

    def steady(self, fixture_id: int) -> bool:
        """Its current watch has polled at least twice, in play (past the start-up hand-backs)."""
        polls = self.by_fixture.get(fixture_id, [])
        return (
            len(polls) >= 2
            and polls[-1].activity == polls[-2].activity
            and bool(polls[-1].playing)
            and not polls[-1].failed
        )


@dataclass(frozen=True)
class Gaps:
    polls: int
    expected: float
    missed: int
    missed_at_restart: int
    stalled: int
    restarts: int
    failed: int
    gaps: list[float]
    restart_gaps: list[float]
    waits: list[float]


def gaps(polls: Polls, fixtures: Iterable[int], since: float, until: float, live: float, idle: float) -> Gaps:
    count = missed = at_restart = stalled = restarts = failed = 0
    all_gaps: list[float] = []
    restart_gaps: list[float] = []
    waits: list[float] = []
    fixture_count = 0
    for fixture_id in fixtures:
        fixture_count += 1
        seen = polls.by_fixture.get(fixture_id, [])
        window = [poll for poll in seen if since <= poll.started <= until]
        count += len(window)
        failed += sum(poll.failed for poll in window)
        waits.extend(poll.finished - poll.started for poll in window)
        before = [poll for poll in seen if poll.started < since]
        chain = ([before[-1]] if before else []) + window
        playing = True
        for previous, following in itertools.pairwise(chain):
            playing = previous.playing if previous.playing is not None else playing
            limit = MISS_FACTOR * (live if playing else idle)
            gap = following.started - previous.started
            restart = following.activity != previous.activity
            all_gaps.append(gap)
            if restart:
                restarts += 1
                restart_gaps.append(gap)
            if gap > limit:
                missed += 1
                at_restart += restart
        last = chain[-1] if chain else None
        if last is None or until - last.started > MISS_FACTOR * live:
            missed += 1
            stalled += 1
    return Gaps(
        polls=count,
        expected=fixture_count * (until - since) / live,
        missed=missed,
        missed_at_restart=at_restart,
        stalled=stalled,
        restarts=restarts,
        failed=failed,
        gaps=all_gaps,
        restart_gaps=restart_gaps,
        waits=waits,
    )


# --- counters around the window --------------------------------------------------------------


@dataclass(frozen=True)
class Counters:
    at: float
    cpu: dict[str, dict[int, float]]
    redis_cpu: float
    machine: float
    xacts: int
    changes: int
    metrics: dict[str, float]
    threads: dict[str, float]


async def read_counters(
    roles: dict[str, list[int]], database_url: str, redis_url: str, metrics_url: str
) -> Counters:
    cpu = {role: process_cpu(pids) for role, pids in roles.items()}
    connection = await asyncpg.connect(asyncpg_dsn(database_url))
    try:
        xacts = int(
            await connection.fetchval(
                "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()"
            )
        )
        changes = int(await connection.fetchval("SELECT count(*) FROM domain_event"))
    finally:
        await connection.close()
    return Counters(
        at=time.time(),
        cpu=cpu,
        redis_cpu=await redis_cpu(redis_url),
        machine=machine_busy(),
        xacts=xacts,
        changes=changes,
        metrics=await frontend_requests(metrics_url),
        threads=thread_cpu(),
    )


async def frontend_requests(metrics_url: str) -> dict[str, float]:
    """The Temporal server's `service_requests` counter summed by operation (empty if unavailable)."""
    try:
        async with httpx.AsyncClient(timeout=10) as http:
            text = (await http.get(metrics_url)).text
    except httpx.HTTPError:
        return {}
    totals: dict[str, float] = defaultdict(float)
    for line in text.splitlines():
        if not line.startswith("service_requests{"):
            continue
        labels, _, value = line.rpartition(" ")
        operation = next(
            (
                part.split("=", 1)[1].strip('"')
                for part in labels[labels.index("{") + 1 : labels.rindex("}")].split(",")
                if part.startswith("operation=")
            ),
            "?",
        )
        totals[operation] += float(value)
    return dict(totals)


def cpu_delta(before: Counters, after: Counters, role: str) -> float:
    start, end = before.cpu.get(role, {}), after.cpu.get(role, {})
    return sum(seconds - start.get(pid, 0.0) for pid, seconds in end.items())


async def bounded(items: Iterable[T], action: Callable[[T], Awaitable[Any]], limit: int = 25) -> list[Any]:
    gate = asyncio.Semaphore(limit)

    async def one(item: T) -> Any:
        async with gate:
            return await action(item)

    return await asyncio.gather(*(one(item) for item in items))


async def history_events(handles: list[WorkflowHandle[Any, Any]]) -> int:
    async def length(handle: WorkflowHandle[Any, Any]) -> int:
        return int((await handle.describe()).history_length)

    return sum(await bounded(handles, length))


# --- the run ---------------------------------------------------------------------------------


@dataclass
class Result:
    matches: int
    interval: float
    seconds: float
    warmup: float
    gaps: Gaps
    requests: dict[str, int]
    cpu: dict[str, float]
    machine: float
    events: int
    events_seconds: float
    rpcs: dict[str, float]
    xacts: int
    changes: int
    calls: Counter[str]
    threads: dict[str, float]
    notes: list[str] = field(default_factory=list)
    warnings: dict[str, int] = field(default_factory=dict)

    @property
    def intervals(self) -> float:
        return self.seconds / self.interval

    def per_interval(self, endpoint: str) -> float:
        return self.requests.get(endpoint, 0) / self.intervals

    def per_minute(self, value: float, seconds: float | None = None) -> float:
        return value / (seconds or self.seconds) * 60


async def measure(args: argparse.Namespace, workdir: Path, warnings: WarningCounter) -> Result:
    cancel_on_sigterm()
    count = args.matches
    live = timedelta(seconds=args.interval)
    end = START_T + args.warmup_max + args.duration + 120
    path = cloned_recording(workdir, count, start=START_T, end=end, stagger=args.stagger)
    metrics_port = free_port()
    metrics_url = f"http://127.0.0.1:{metrics_port}/metrics"
    polls = Polls()
    async with (
        bench_database("scoreline_bench_many") as database_url,
        bench_redis() as redis_url,
        temporal_server(metrics_port=metrics_port) as env,
        child_provider(path) as sim,
    ):
        client = env.client
        settings = Settings(
            database_url=database_url,
            redis_url=redis_url,
            temporal_address=client.service_client.config.target_host,
            temporal_namespace=client.namespace,
            temporal_task_queue=f"bench-many-{uuid.uuid4().hex[:8]}",
            temporal_watch_task_queue=f"bench-many-watch-{uuid.uuid4().hex[:8]}",
            provider_url=sim.provider.url,
            provider_token=SecretStr(SIMULATOR_TOKEN),
            poll_interval_live=live,
            log_format="console",
        )
        fixtures = [CLONE_BASE_ID + index for index in range(count)]
        (
            await sim.provider.admin.post("/_sim/clock", json={"t": START_T, "freeze": False})
        ).raise_for_status()
        roles = {
            "worker": [os.getpid()],
            "simulator": [sim.pid],
            "temporal": children_named("temporal"),
            "postgres": await postgres_pids(database_url),
        }
        async with worker_dependencies(settings) as shared:
            observed = ObservedClient(shared.provider.transport, polls.on_fetch)
            deps = replace(shared, provider=observed)
            try:
                async with running_workers(client, deps, settings):
                    handles: list[WorkflowHandle[Any, Any]] = []
                    reported = False
                    try:
                        result = await _window(
                            args,
                            settings,
                            client,
                            sim.provider,
                            handles,
                            fixtures,
                            polls,
                            roles,
                            (database_url, redis_url, metrics_url),
                        )
                        result.warnings = dict(warnings.counts)
                        # The figures first: an overloaded worker may take long to drain.
                        report(result, args)
                        reported = True
                        return result
                    finally:
                        arm_teardown_watchdog(TEARDOWN_SECONDS, exit_code=0 if reported else 3)
                        print(f"terminating {len(handles)} workflows...", flush=True)
                        await bounded(handles, lambda handle: handle.terminate(reason="bench over"))
            finally:
                await observed.aclose()


async def _window(
    args: argparse.Namespace,
    settings: Settings,
    client: Client,
    provider: Provider,
    handles: list[WorkflowHandle[Any, Any]],
    fixtures: list[int],
    polls: Polls,
    roles: dict[str, list[int]],
    urls: tuple[str, str, str],
) -> Result:
    database_url, redis_url, metrics_url = urls
    started = time.time()
    print(f"starting {len(fixtures)} match workflows...", flush=True)

    async def start(fixture_id: int) -> None:
        handles.append(await start_match(client, settings, fixture_id))

    if args.ramp > 0:
        gap = args.ramp / len(fixtures)
        for fixture_id in fixtures:
            await start(fixture_id)
            await asyncio.sleep(max(0.0, started + gap * len(handles) - time.time()))
    else:
        await bounded(fixtures, start, limit=50)
    notes: list[str] = []
    while not all(polls.steady(fixture_id) for fixture_id in fixtures):
        if time.time() - started > args.warmup_max:
            unsteady = sum(not polls.steady(fixture_id) for fixture_id in fixtures)
            notes.append(f"{unsteady} of {len(fixtures)} matches were not polling steadily after the warm-up")
            break
        await asyncio.sleep(1)
    await asyncio.sleep(args.interval)  # let the last hand-backs settle into their rhythm
    warmup = time.time() - started
    print(f"warm after {warmup:.0f} s; measuring {args.duration:g} s...", flush=True)

    roles = {**roles, "postgres": await postgres_pids(database_url)}
    events_before, events_at = await history_events(handles), time.time()
    await reset_sim_requests(provider)
    before = await read_counters(roles, database_url, redis_url, metrics_url)
    deadline = before.at + args.duration
    disturbed: set[str] = set()
    while (left := deadline - time.time()) > 0:
        await asyncio.sleep(min(10.0, left))
        disturbed.update(busy_with())
        elapsed = args.duration - (deadline - time.time())
        if left > 10 and int(elapsed) // 30 != int(elapsed - 10) // 30:
            print(f"  {elapsed:.0f} s of {args.duration:g} s", flush=True)
    if disturbed:
        notes.append(
            f"a test run (pytest, pids {', '.join(sorted(disturbed))}) started during the measurement: "
            "these figures were taken on a shared machine"
        )
    requests = await sim_requests(provider)
    roles = {**roles, "postgres": await postgres_pids(database_url)}
    after = await read_counters(roles, database_url, redis_url, metrics_url)
    events_after = await history_events(handles)
    events_seconds = time.time() - events_at
    measured = gaps(
        polls,
        fixtures,
        before.at,
        after.at,
        args.interval,
        (settings.poll_interval_idle or timedelta(seconds=5)).total_seconds(),
    )
    cpu = {role: cpu_delta(before, after, role) for role in roles}
    cpu["redis"] = after.redis_cpu - before.redis_cpu
    rpcs = {
        operation: value - before.metrics.get(operation, 0.0)
        for operation, value in after.metrics.items()
        if value - before.metrics.get(operation, 0.0) > 0
    }
    return Result(
        matches=len(fixtures),
        interval=args.interval,
        seconds=after.at - before.at,
        warmup=warmup,
        gaps=measured,
        requests=requests,
        cpu=cpu,
        machine=after.machine - before.machine,
        events=events_after - events_before,
        events_seconds=events_seconds,
        rpcs=rpcs,
        xacts=after.xacts - before.xacts,
        changes=after.changes - before.changes,
        calls=polls.calls,
        threads={group: seconds - before.threads.get(group, 0.0) for group, seconds in after.threads.items()},
        notes=notes,
    )


# --- figures ---------------------------------------------------------------------------------


def table(result: Result) -> str:
    g = result.gaps
    minutes = result.seconds / 60
    share = (result.cpu.get("worker", 0.0) / result.seconds) * 100
    rows = [
        (
            "matches in play / measured",
            f"{result.matches:,} / {result.seconds:.0f} s after a {result.warmup:.0f} s warm-up",
        ),
        (
            "upstream `livescores/inplay` per poll interval",
            f"{result.per_interval('livescores/inplay'):.2f} ({result.requests.get('livescores/inplay', 0)} in {result.intervals:.1f})",
        ),
        (
            "upstream `fixtures/{id}` per poll interval (reconcile, first or retried watch)",
            f"{result.per_interval('fixtures/{id}'):.2f} ({result.requests.get('fixtures/{id}', 0)})",
        ),
        (
            "upstream requests per poll interval, all endpoints",
            f"{sum(result.requests.values()) / result.intervals:.2f}",
        ),
        (
            f"missed polls (gap > {MISS_FACTOR:g}x interval)",
            f"{g.missed} of {g.polls:,} polls ({g.missed_at_restart} at a watch restart, {g.stalled} stalled watches)",
        ),
        (
            "poll gap p50 / p99 / max, s",
            f"{percentile(g.gaps, 50):.2f} / {percentile(g.gaps, 99):.2f} / {max(g.gaps, default=float('nan')):.2f}",
        ),
        (
            "gap across a watch restart p50 / max, s (count)",
            f"{percentile(g.restart_gaps, 50):.2f} / {max(g.restart_gaps, default=float('nan')):.2f} ({g.restarts})",
        ),
        ("polls done / expected at the interval", f"{g.polls:,} / {g.expected:,.0f} ({g.failed} failed)"),
        (
            "watch's wait for its snapshot p50 / p99, ms",
            f"{percentile(g.waits, 50) * 1000:.1f} / {percentile(g.waits, 99) * 1000:.0f}",
        ),
        ("worker CPU (process time)", f"{result.cpu.get('worker', 0.0):.1f} s = {share:.0f} % of one core"),
        (
            "worker CPU per poll, ms",
            f"{result.cpu.get('worker', 0.0) / max(g.polls, 1) * 1000:.1f}",
        ),
        (
            "worker CPU by thread, % of one core",
            ", ".join(
                f"{group} {seconds / result.seconds * 100:.0f}" for group, seconds in result.threads.items()
            ),
        ),
        (
            "other CPU: simulator / Temporal / Postgres / Redis, % of one core",
            " / ".join(
                f"{result.cpu.get(role, 0.0) / result.seconds * 100:.0f}"
                for role in ("simulator", "temporal", "postgres", "redis")
            ),
        ),
        (
            "whole machine busy",
            f"{result.machine / result.seconds * 100:.0f} % of one core (of {(os.cpu_count() or 1) * 100} %)",
        ),
        (
            "Temporal history events per minute (all workflows)",
            f"{result.per_minute(result.events, result.events_seconds):,.0f}",
        ),
        (
            "Temporal frontend requests per minute (long polls and the bench's own describes left out)",
            ", ".join(
                f"{operation} {value / minutes:,.0f}"
                for operation, value in sorted(result.rpcs.items(), key=lambda kv: -kv[1])
                if not operation.startswith("Poll") and operation not in BENCH_OPERATIONS
            )
            or "n/a",
        ),
        (
            "Postgres transactions per minute (bench database)",
            f"{result.per_minute(result.xacts):,.0f}",
        ),
        ("committed log changes per minute", f"{result.per_minute(result.changes):,.0f}"),
    ]
    lines = ["| figure | value |", "|---|---|"]
    lines.extend(f"| {name} | {value} |" for name, value in rows)
    return "\n".join(lines)


def verdict(result: Result) -> str:
    """Each half of the goal, plainly."""
    inplay = result.per_interval("livescores/inplay")
    per_fixture = result.per_interval("fixtures/{id}")
    total = sum(result.requests.values()) / result.intervals
    board_ok = inplay <= (round(result.intervals) + 1) / result.intervals
    missed = result.gaps.missed
    met = board_ok and total <= 1.05 and missed == 0
    size = "at 500" if result.matches == 500 else f"at {result.matches} (the goal is 500)"
    return (
        f"Goal {'met' if met else 'NOT met'} {size}. Live board: {inplay:.2f} `livescores/inplay` requests "
        f"per interval ({'one' if board_ok else 'more than one'}). Every upstream request counted: {total:.2f} "
        f"per interval, because a watch also fetches `fixtures/{{id}}` every reconcile interval, and at once "
        f"when it is a match's first or a retried attempt ({per_fixture:.2f} per interval here). Missed "
        f"polls: {missed} of {result.gaps.polls:,}."
    )


def append_results(result: Result, args: argparse.Namespace) -> None:
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    notes = [f"Note: {note}." for note in result.notes]
    append_section(
        [
            f"## {now} — {result.matches} live matches on one worker (`bench/many_matches.py`)",
            "",
            f"Goal: *{GOAL}*.",
            "",
            f"Setup: the three bundled matches cloned to {result.matches} fixtures (new ids and names), "
            f"each shifted by up to {args.stagger:g} s and cut to the second half, so all are in play; "
            "the simulator (child process) replays them at real speed (about one change per match per "
            f"minute). {result.matches} `MatchWorkflow`s, started over {args.ramp:g} s, on one in-process "
            "worker with production "
            f"settings (live poll {args.interval:g} s, reconcile 60 s, heartbeat timeout 10 s); "
            "Temporal dev server (in memory), Postgres and Redis on this machine. Measured for "
            f"{result.seconds:.0f} s after every match polled steadily. A missed poll is a gap between "
            f"two polls of a match above {MISS_FACTOR:g}x the interval (hand-backs to the workflow "
            f"included). {machine_note()}.",
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--matches", type=int, default=500, help="Live matches (MatchWorkflows) to run.")
    parser.add_argument("--duration", type=float, default=120, help="Measured seconds after the warm-up.")
    parser.add_argument("--interval", type=float, default=2.5, help="Live poll interval, seconds.")
    parser.add_argument(
        "--stagger", type=float, default=600, help="Spread of the clones' timelines, seconds."
    )
    parser.add_argument(
        "--ramp",
        type=float,
        default=30,
        help="Spread the workflow starts over this many seconds (0: all at once, like a worker restart).",
    )
    parser.add_argument(
        "--warmup-max", type=float, default=60, help="Longest warm-up before measuring anyway, seconds."
    )
    parser.add_argument("--no-wait", action="store_true", help="Do not wait for a running pytest to finish.")
    parser.add_argument("--no-write", action="store_true", help="Do not append to bench/results.md.")
    parser.add_argument(
        "--log-level", default="error", help="Worker log level on stderr (warnings are counted either way)."
    )
    args = parser.parse_args()
    warnings = configure_bench_logging(args.log_level)
    if not args.no_wait and not wait_until_quiet():
        sys.exit("pytest still running after 15 minutes; not measuring on a busy machine")
    with tempfile.TemporaryDirectory(prefix="scoreline-bench-") as workdir:
        asyncio.run(measure(args, Path(workdir), warnings))


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


if __name__ == "__main__":
    main()
