"""Retention: rows deleted per second, and a live ingest's latency with the job idle and running.

A bench database gets a backlog (200,000 outbox rows every consumer has read, 200,000 push
attempts, 50,000 published Live Activity pushes (`la_push`) of 50 long-finished matches, all 40
days old). One in-process worker (Temporal dev server) runs the real `RetentionWorkflow` and
`purge_old_rows` with their default pacing. Beside it, in the same process as a worker would, a live ingest: the real
`IngestStore.ingest` of 20 live matches in turn, each snapshot one event longer than the last,
at a fixed pace. Its latency is measured with the job idle, while it runs, and idle again after,
in one run.

    uv run python -m bench.retention [--rows N] [--pace-ms MS] [--no-wait] [--no-write]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import sys
import time
import uuid
from collections import defaultdict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import asyncpg
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.client import Client
from temporalio.worker import Worker

from activities.ingest.store import IngestStore
from activities.retention import Batch, RetentionActivities
from bench._common import (
    append_section,
    bench_database,
    busy_with,
    cancel_on_sigterm,
    machine_busy,
    machine_note,
    ms,
    percentile,
    temporal_server,
    wait_until_quiet,
)
from domain.retention import RetentionInput, RetentionResult, RetentionTable
from domain.snapshot import Item, ItemType, MatchState, Snapshot, Sport, Stream
from scoreline.db.engine import create_engine
from scoreline.db.urls import asyncpg_dsn
from scoreline.logging import configure_logging
from workflows.retention import RetentionWorkflow

GOAL = (
    "a retention job deletes in batches what is older than its age, never holding a long lock; "
    "rows deleted per second without slowing a live ingest (p95 with and without the job, same run)"
)
LIVE_MATCHES = 20
FIRST_LIVE = 90_000_001
BACKLOG_DAYS = 40
PUSH_FIXTURES = 50
IDLE_SECONDS = 20.0
AFTER_SECONDS = 10.0


class TimedRetention(RetentionActivities):
    """The real activities, noting when each batch's transaction began and how long it took."""

    def __init__(self, engine: AsyncEngine) -> None:
        super().__init__(engine)
        self.batches: list[tuple[RetentionTable, float, float, int]] = []

    async def delete_batch(self, table: RetentionTable, age_seconds: float, limit: int) -> Batch:
        began = time.monotonic()
        batch = await super().delete_batch(table, age_seconds, limit)
        self.batches.append((table, began, time.monotonic() - began, batch.deleted))
        return batch


@dataclass
class Phase:
    name: str
    latencies: list[float] = field(default_factory=list)
    seconds: float = 0.0
    busy: float = 0.0
    """Machine CPU seconds (all cores) spent during the phase."""


@dataclass(frozen=True)
class Run:
    phases: list[Phase]
    result: RetentionResult
    batches: list[tuple[RetentionTable, float, float, int]]
    backlog: dict[str, int]
    pace: float
    disturbed: list[str]


# --- the backlog -----------------------------------------------------------------------------


async def seed(database_url: str, rows: int) -> dict[str, int]:
    """Old rows in bulk (one statement per table), live fixtures, and the feed builder's cursor past the backlog."""
    db = await asyncpg.connect(asyncpg_dsn(database_url))
    old = datetime.now(UTC) - timedelta(days=BACKLOG_DAYS)
    try:
        await db.execute(
            """INSERT INTO fixture (id, name, state, updated_at)
            SELECT 80000000 + n, 'old match ' || n, 'finished', $1 FROM generate_series(1, $2) AS n""",
            old,
            PUSH_FIXTURES,
        )
        await db.execute(
            """INSERT INTO domain_event (fixture_id, kind, payload, created_at)
            SELECT 80000000 + 1 + n % $3, 'match.changed', '{"version": 1}', $1
            FROM generate_series(1, $2) AS n""",
            old,
            rows,
            PUSH_FIXTURES,
        )
        await db.execute(
            """INSERT INTO feed_cursor (consumer, last_xid, last_event_id)
            SELECT consumer, xid, id FROM domain_event, unnest(ARRAY['feeds', 'webhooks']) AS consumer
            ORDER BY xid DESC, id DESC LIMIT 2"""
        )
        device = await db.fetchval(
            """INSERT INTO device (install_id, platform, environment, token_hash)
            VALUES ('bench', 'ios', 'sandbox', 'unused') RETURNING id"""
        )
        await db.execute(
            """INSERT INTO push_attempt (fixture_id, event_key, effect, device_id, token_kind, attempt,
                priority, payload_bytes, status, latency_ms, created_at)
            SELECT 80000000 + 1 + n % $4, 'v' || n, 'la.update', $1, 'update', 1, 5, 300, 200, 12, $2
            FROM generate_series(1, $3) AS n""",
            device,
            old,
            rows,
            PUSH_FIXTURES,
        )
        pushes = rows // 4
        await db.execute(
            """INSERT INTO la_push (fixture_id, stamp, event_key, event, generation, priority, routine,
                content_state, attributes, stale_date, dismissal_date, created_at)
            SELECT 80000000 + 1 + n % $3, n, 'v' || n, 'update', 1, 5, true, '{"homeScore": 1}', '{}',
                n + 900, n + 900, $1
            FROM generate_series(1, $2) AS n""",
            old,
            pushes,
            PUSH_FIXTURES,
        )
        await db.execute("ANALYZE")
    finally:
        await db.close()
    return {"domain_event": rows, "push_attempt": rows, "la_push": pushes}


# --- the live ingest -------------------------------------------------------------------------


class LiveIngest:
    """Ingests `LIVE_MATCHES` matches in turn, every `pace` seconds, each time one event longer."""

    def __init__(self, store: IngestStore, pace: float) -> None:
        self._store = store
        self._pace = pace
        self._events: dict[int, list[Item]] = defaultdict(list)
        self._turn = 0
        self.phase = Phase("warm-up")

    async def run(self, stop: asyncio.Event) -> None:
        next_at = time.monotonic()
        while not stop.is_set():
            began = time.monotonic()
            await self._store.ingest(self._next(), "live")
            self.phase.latencies.append(time.monotonic() - began)
            next_at += self._pace
            await asyncio.sleep(max(0.0, next_at - time.monotonic()))

    def _next(self) -> Snapshot:
        fixture_id = FIRST_LIVE + self._turn % LIVE_MATCHES
        self._turn += 1
        events = self._events[fixture_id]
        events.append(
            Item(
                stream=Stream.EVENTS,
                provider_id=fixture_id * 1000 + len(events),
                type=ItemType.CORNER,
                provider_type_id=18,
                minute=min(len(events), 90),
            )
        )
        return Snapshot(
            sport=Sport.FOOTBALL,
            fixture_id=fixture_id,
            name=f"Live {fixture_id} vs Rivals",
            state=MatchState.LIVE_SECOND_HALF,
            minute=min(len(events), 90),
            events=tuple(events),
        )


@asynccontextmanager
async def measuring(live: LiveIngest, phase: Phase) -> AsyncIterator[Phase]:
    live.phase = phase
    began, busy = time.monotonic(), machine_busy()
    try:
        yield phase
    finally:
        phase.seconds = time.monotonic() - began
        phase.busy = machine_busy() - busy


async def measure(rows: int, pace: float) -> Run:
    async with bench_database("scoreline_bench_retention") as database_url, temporal_server() as env:
        backlog = await seed(database_url, rows)
        engine = create_engine(database_url, pool_size=10)
        try:
            return await _drive(env.client, engine, backlog, pace)
        finally:
            await engine.dispose()


async def _drive(client: Client, engine: AsyncEngine, backlog: dict[str, int], pace: float) -> Run:
    retention = TimedRetention(engine)
    task_queue = f"bench-retention-{uuid.uuid4().hex[:8]}"
    live = LiveIngest(IngestStore(engine), pace)
    stop = asyncio.Event()
    disturbed: set[str] = set(busy_with())
    async with Worker(
        client, task_queue=task_queue, workflows=[RetentionWorkflow], activities=[retention.purge_old_rows]
    ):
        ingesting = asyncio.create_task(live.run(stop))
        try:
            await asyncio.sleep(3.0)  # warm-up: pool connections, first rows of every match
            async with measuring(live, Phase("job idle")) as idle:
                await asyncio.sleep(IDLE_SECONDS)
            async with measuring(live, Phase("job running")) as running:
                result = await client.execute_workflow(
                    RetentionWorkflow.run,
                    RetentionInput(),
                    id=f"retention-{task_queue}",
                    task_queue=task_queue,
                )
            disturbed.update(busy_with())
            async with measuring(live, Phase("job idle again (backlog gone)")) as after:
                await asyncio.sleep(AFTER_SECONDS)
        finally:
            stop.set()
            await ingesting
    disturbed.update(busy_with())
    return Run([idle, running, after], result, retention.batches, backlog, pace, sorted(disturbed))


# --- figures ---------------------------------------------------------------------------------


def rates(run: Run) -> list[tuple[RetentionTable, int, int, float, list[float]]]:
    """Per table with rows: deleted, batches, rows/s (first batch begun → last batch done), batch times."""
    found = []
    for table in RetentionTable:
        mine = [batch for batch in run.batches if batch[0] is table]
        deleted = sum(batch[3] for batch in mine)
        if not deleted:
            continue
        span = mine[-1][1] + mine[-1][2] - mine[0][1]
        found.append((table, deleted, len(mine), deleted / span, [batch[2] for batch in mine]))
    return found


def tables(run: Run) -> list[str]:
    cores = os.cpu_count() or 1
    lines = [
        "| live ingest | ingests | p50 ms | p95 ms | p99 ms | max ms | machine CPU % (of "
        + f"{cores * 100}) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for phase in run.phases:
        values = phase.latencies
        lines.append(
            f"| {phase.name} | {len(values)} | {ms(percentile(values, 50))} | {ms(percentile(values, 95))} "
            f"| {ms(percentile(values, 99))} | {ms(max(values)) if values else '-'} "
            f"| {phase.busy / phase.seconds * 100:.0f} |"
        )
    lines += [
        "",
        "| table | rows deleted | batches | rows/s (pauses included) | batch p50 ms | batch p95 ms | batch max ms |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for table, deleted, batches, per_second, times in rates(run):
        lines.append(
            f"| `{table.value}` | {deleted:,} | {batches} | {per_second:,.0f} | {ms(percentile(times, 50))} "
            f"| {ms(percentile(times, 95))} | {ms(max(times))} |"
        )
    return lines


def totals(run: Run) -> str:
    running = run.phases[1]
    deleted = sum(batch[3] for batch in run.batches)
    return (
        f"{deleted:,} rows deleted in {running.seconds:.1f} s of workflow run "
        f"({deleted / running.seconds:,.0f} rows/s overall, Temporal round trips and the empty tables included); "
        f"{run.result.fixtures_purged} matches marked `pushes_purged_at`."
    )


def verdict(run: Run) -> str:
    idle, running = run.phases[0], run.phases[1]
    p95_idle, p95_running = percentile(idle.latencies, 95), percentile(running.latencies, 95)
    p50_idle, p50_running = percentile(idle.latencies, 50), percentile(running.latencies, 50)
    ratio = p95_running / p95_idle if p95_idle > 0 else math.nan
    longest = max((batch[2] for batch in run.batches), default=math.nan)
    return (
        f"Live ingest with the job running: p50 {ms(p50_running)} ms vs {ms(p50_idle)} ms idle, "
        f"p95 {ms(p95_running)} ms vs {ms(p95_idle)} ms idle ({ratio:.2f}x); "
        f"the longest delete transaction took {ms(longest)} ms."
    )


def report(run: Run) -> list[str]:
    return [*tables(run), "", totals(run), "", verdict(run)]


def append_results(run: Run) -> None:
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    defaults = RetentionInput()
    backlog = ", ".join(f"{count:,} `{table}`" for table, count in run.backlog.items())
    append_section(
        [
            f"## {now} — retention: rows deleted per second beside a live ingest (`bench/retention.py`)",
            "",
            f"Goal (trust issue, item 10): *{GOAL}*.",
            "",
            f"Setup: a fresh bench database with a backlog of {backlog} rows, all {BACKLOG_DAYS} days old "
            f"(the outbox rows behind the `feeds` cursor, the pushes of {PUSH_FIXTURES} finished matches), "
            "then `ANALYZE`. One in-process worker on a Temporal dev server runs the real `RetentionWorkflow` "
            f"and `purge_old_rows` with the defaults (batch {defaults.batch}, pause "
            f"{defaults.pause_seconds * 1000:g} ms, budget {defaults.budget_seconds:g} s per call). In the same "
            f"process (as in a worker) the real `IngestStore.ingest` of {LIVE_MATCHES} live matches in turn, "
            f"one snapshot every {run.pace * 1000:g} ms, each one event longer than that match's last (a new "
            f"event, log entry, scoreboard, outbox row and NOTIFY per ingest). {machine_note()}.",
            "",
            f"Method: ingest latency = wall time of `ingest()` (one transaction). Phases in one run: {IDLE_SECONDS:g} s "
            "with the job idle and the backlog in place, the whole workflow run, then "
            f"{AFTER_SECONDS:g} s idle again. Batch times are each `delete_batch` transaction, begin to commit; "
            "rows/s per table is from its first batch's start to its last batch's end, pauses included.",
            "",
            *report(run),
            *(
                [
                    "",
                    f"Note: a test run (pytest, pids {', '.join(run.disturbed)}) was on the machine during the "
                    "measurement: these figures were taken on a shared machine.",
                ]
                if run.disturbed
                else []
            ),
            "",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--rows", type=int, default=200_000, help="Old outbox rows and old push attempts each."
    )
    parser.add_argument("--pace-ms", type=float, default=50, help="One live ingest every this many ms.")
    parser.add_argument("--no-wait", action="store_true", help="Do not wait for a running pytest to finish.")
    parser.add_argument("--no-write", action="store_true", help="Do not append to bench/results.md.")
    args = parser.parse_args()
    configure_logging("warning", "console")
    if not args.no_wait and not wait_until_quiet():
        sys.exit("pytest still running after 15 minutes; not measuring on a busy machine")

    async def run() -> Run:
        cancel_on_sigterm()
        return await measure(args.rows, args.pace_ms / 1000)

    print(f"seeding {args.rows:,} old outbox rows and push attempts, then measuring...", flush=True)
    result = asyncio.run(run())
    print()
    print("\n".join(report(result)))
    if not args.no_write:
        append_results(result)
        print("appended to bench/results.md")


if __name__ == "__main__":
    main()
