"""Bench: hundreds of live matches on one worker, thousands on several, inside the provider's budget (issue 14).

Run: `.venv/bin/python bench/many_matches.py --matches N --workers W --minutes M`
(`[--interval 2.5] [--ramp 30] [--kill-worker-at SECONDS] [--hourly-budget 2000] [--no-write]`;
`--duration SECONDS` still works, `--minutes` wins when both are given).

Goals: *one worker, 500 live matches* and *2,000 on four worker processes*: 0 missed polls, one
`livescores/inplay` per poll interval for the whole deployment, at most 1,500 upstream requests per
hour per entity at 500 matches (every per-fixture call batched through `fixtures/multi`), the matches
spread over the workers, and a worker killed mid-run has its matches taken over within the
heartbeat timeout.

Setup: the three bundled matches (`recordings/football-three-matches.jsonl`) cloned to N fixtures
under new ids and names, each clone shifted by its own offset of up to `--stagger` seconds so
their goals and cards do not all land at the same moment, and cut to the second half, so every
fixture is in play for the whole run. The provider simulator replays that file in a child process
with its clock *running* at real speed, so matches change as they would (about one change per match
per minute). The matches' rows are written from one `fixtures/multi` listing and their
`MatchWorkflow`s (`match-{id}`) started through `MatchRuns`, as the fixture sync does, evenly over
`--ramp` seconds (0: all at once, as after a restart); the listing goes through a client of its
own, so the bench's setup spends none of the deployment's hourly budget. A Temporal dev server of
its own (in memory, with its Prometheus endpoint on), a fresh migrated database and a Redis
database of its own on the tests' servers.

The workers are the real ones (`workers.main.running_workers` on `worker_dependencies`, the real
activities) with production settings: live poll 2.5 s, idle 5 s, reconcile 60 s, heartbeat timeout
10 s, `PROVIDER_HOURLY_BUDGET` 2,000. Their football client is the real one, built as
`worker_dependencies` builds it (the deployment's board shared through Redis, the hourly budget,
`fixtures/multi` batching), subclassed to record every call a watch makes (`ObservedClient`):

- W = 1: one worker in the bench's own process (its CPU is the worker's);
- W > 1: W worker processes (`bench/many_matches_worker.py`, the repo's `.venv/bin/python`),
  configured through the environment as `tests.support.worker.worker_process_env` makes it, each
  appending its polls to a JSONL file of its own that the bench merges. The bench starts the
  matches once every worker polls its queues. With `--kill-worker-at S`, worker 1 is SIGKILLed S
  seconds into the measured window: Temporal hands its watches to the others once their heartbeat
  times out.

After a warm-up (every match past its first ingest and polling steadily, or `--warmup-max`) it
measures for `--minutes` (or `--duration` seconds):

- missed polls: per match, the gap between the starts of two consecutive polls of its watch
  (including a hand-back to the workflow and the next watch's start after a material change) above
  1.5x the interval that applied (live while in play); a watch silent for that long at the end of the
  window counts too. With a kill, the gaps across it are counted apart (the kill's part of the
  headline figure), and the killed worker's matches (those whose last poll before the kill was its)
  show their takeover time: the gap across the kill, next to the heartbeat timeout;
- how the matches spread over the workers (distinct fixtures each polled in the window);
- upstream requests per endpoint (the simulator's `/_sim/stats`), per poll interval and per hour
  (all football endpoints count against one entity, `Fixture`), and reconciles the budget deferred;
- CPU seconds of each worker process (`psutil`: all its threads, split into the event loop, the
  workflow thread, the Temporal SDK's Rust core and the executor; a killed worker until the kill),
  per poll interval, the simulator, the Temporal server, Postgres (postmaster and backends), Redis
  (`INFO cpu`), the bench process itself when the workers are children, and the whole machine;
- Temporal's load: history events per minute (sum of `history_length` over the N workflows,
  before and after) and the server's frontend requests per minute by operation (its
  `service_requests` metric), activity heartbeats (`RecordActivityTaskHeartbeat`) apart;
- Postgres transactions per minute (`pg_stat_database`) and committed log changes (`domain_event`);
- the workers' warnings and errors, counted by event (stderr shows them from `--log-level`).

It prints a table and appends a dated section to `bench/results.md` (unless `--no-write`) as soon as
the window is over, then terminates every workflow and stops the workers; an overloaded worker that
has not drained within a minute is stopped hard (children killed, database dropped). The very last
line it prints is the one other tools read:

`many_matches: N matches on W workers over M min: missed X of Y polls; board requests per interval
R; requests per hour {"livescores/inplay": a, "fixtures/multi/{ids}": b, "fixtures/{id}": c, ...}`

(R: `livescores/inplay` requests in the window over the window's poll intervals; requests per hour:
the window's requests per endpoint scaled to an hour.)
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import copy
import itertools
import json
import math
import os
import signal
import sys
import tempfile
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

import asyncpg
import httpx
from pydantic import SecretStr
from temporalio.client import Client, WorkflowHandle

from activities.ingest.store import IngestStore
from activities.provider.client import SportMonksClient
from bench._common import (
    ROOT,
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
    children_named,
    configure_bench_logging,
    machine_busy,
    machine_note,
    observed_client,
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
from devkit.devstack.ports import free_port
from devkit.simulators.provider.recording_file import read_recording
from devkit.simulators.provider.replay import LIVE_STATE_IDS
from devkit.simulators.provider.timemap import format_datetime
from domain.states import PLAYING_STATES
from scoreline.db.engine import create_engine
from scoreline.db.urls import asyncpg_dsn
from scoreline.settings import Settings
from scoreline.temporal.match_runs import MatchRuns, match_workflow_id
from tests.support.provider import Provider, recording
from tests.support.worker import worker_process_env
from workers.dependencies import worker_dependencies
from workers.main import running_workers

GOAL = (
    "500 live matches on one worker and 2,000 on four: 0 missed polls, one `livescores/inplay` per "
    "interval for the deployment, ≤ 1,500 requests per hour per entity at 500 matches, a killed "
    "worker's matches taken over within the heartbeat timeout"
)
HOURLY_GOAL = 1500
"""Upstream requests per hour per entity the issue allows for 500 live matches."""
HOURLY_GOAL_MATCHES = 500
SOURCE = "football-three-matches"
CLONE_BASE_ID = 96_000_000
SECOND_HALF = (4020.0, 6750.0)
"""Replay times between which all three bundled matches are in their second half."""
START_T = 4800.0
MISS_FACTOR = 1.5
MERGE_SECONDS = 0.5
"""Client calls of one watch closer than this are one poll (the live board, then the fixture)."""
TEARDOWN_SECONDS = 60.0
WORKER_READY_SECONDS = 180.0
"""How long W worker processes may take to import, connect and poll their queues (2 cores)."""
WORKER_STOP_SECONDS = 30.0
"""How long a worker process may take to stop on SIGTERM before it is killed."""
RECORDING_MARGIN = 120.0
"""Replay seconds the recording runs on past the planned end (a slow warm-up or teardown)."""
WORKER_SCRIPT = ROOT / "bench" / "many_matches_worker.py"
VENV_PYTHON = ROOT / ".venv" / "bin" / "python"
KILLED_WORKER = 1
"""The worker `--kill-worker-at` kills (the first: any would do, they are alike)."""
SAMPLE_SECONDS = 10.0
"""How often the window samples worker CPU (a worker killed between two samples loses that much)."""
HEADLINE_ENDPOINTS = ("livescores/inplay", "fixtures/multi/{ids}", "fixtures/{id}")
"""Always in the final line's requests per hour, in this order, even at zero (other tools read it)."""
HEARTBEAT_OPERATION = "RecordActivityTaskHeartbeat"
BENCH_OPERATIONS = frozenset({"DescribeWorkflowExecution", "GetSystemInfo", "DescribeNamespace"})
"""Frontend requests the bench itself makes (counting history), not the worker."""
T = TypeVar("T")


# --- the recording ---------------------------------------------------------------------------


def cloned_recording(directory: Path, count: int, *, start: float, end: float, stagger: float) -> Path:
    """The bundled matches cloned to `count` fixtures, each shifted by its own offset in `[0, stagger)`.

    A clone shifted by `d` shows at replay time `t` what its original showed at `t - d`, and kicks
    off `d` after its original really did (its first frame in play): the second bundled match
    announces a `starting_at` 2.5 hours after it kicked off, and a run started from that row sleeps
    until shortly before it, so a third of the clones would never be watched. Lines before `start`
    are cut to the last one (the state on show at `start`), lines after `end` are dropped.
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
    origin = datetime.fromisoformat(header["start"]).timestamp()
    kickoffs = {
        fixture_id: next(
            float(line["t"]) for line in seen if line["fixture"].get("state_id") in LIVE_STATE_IDS
        )
        for fixture_id, seen in frames.items()
    }
    ids = [CLONE_BASE_ID + index for index in range(count)]
    out: list[dict[str, Any]] = []
    for index, clone_id in enumerate(ids):
        offset = stagger * ((index * 0.6180339887) % 1.0)
        original = originals[index % len(originals)]
        kickoff = origin + kickoffs[original] + offset
        shown: list[dict[str, Any]] = []
        for line in frames[original]:
            t = float(line["t"]) + offset
            if t <= start:
                shown[:] = [line]
            elif t <= end:
                shown.append(line)
        for line in shown:
            fixture = copy.deepcopy(line["fixture"])
            fixture["id"] = clone_id
            fixture["name"] = f"{fixture.get('name', 'Match')} #{index}"
            fixture["starting_at"] = format_datetime(kickoff)
            fixture["starting_at_timestamp"] = int(kickoff)
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


# --- polls, as the workers' provider clients saw them ----------------------------------------


@dataclass(frozen=True, slots=True)
class PollRecord:
    """What `Polls` needs of one fetch: the line a worker process writes to its JSONL file.

    `worker` is not written: the bench knows whose file it reads (0 in-process, else 1..W).
    """

    fixture_id: int
    kind: str
    started: float
    finished: float
    activity: str | None
    activity_type: str | None
    playing: bool | None
    failed: bool
    deferred: bool = False
    worker: int = 0

    @classmethod
    def of(cls, fetch: Fetch, worker: int = 0) -> PollRecord:
        playing = None if fetch.snapshot is None else fetch.snapshot.state in PLAYING_STATES
        return cls(
            fixture_id=fetch.fixture_id,
            kind=fetch.kind,
            started=fetch.started,
            finished=fetch.finished,
            activity=fetch.activity,
            activity_type=fetch.activity_type,
            playing=playing,
            failed=fetch.failed,
            deferred=fetch.deferred,
            worker=worker,
        )

    def line(self) -> str:
        fields = asdict(self)
        del fields["worker"]
        return json.dumps(fields, separators=(",", ":"))

    @classmethod
    def parse(cls, line: str, worker: int) -> PollRecord:
        return cls(**json.loads(line), worker=worker)


@dataclass(slots=True)
class Poll:
    started: float
    finished: float
    activity: str | None
    playing: bool | None
    failed: bool
    deferred: bool = False
    worker: int = 0


@dataclass
class Polls:
    """Every watch poll per fixture (calls of one poll merged), fed in the order polls started."""

    by_fixture: dict[int, list[Poll]] = field(default_factory=lambda: defaultdict(list))
    calls: Counter[str] = field(default_factory=Counter)

    def on_fetch(self, fetch: Fetch) -> None:
        """A fetch seen in this process (the in-process worker's client, or another bench's)."""
        self.record(PollRecord.of(fetch))

    def record(self, fetch: PollRecord) -> None:
        if fetch.activity_type != "watch_match":
            return
        self.calls[fetch.kind] += 1
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
            last.playing = fetch.playing if fetch.playing is not None else last.playing
            last.failed = last.failed and fetch.failed
            last.deferred = last.deferred or fetch.deferred
            return
        polls.append(
            Poll(
                fetch.started,
                fetch.finished,
                fetch.activity,
                fetch.playing,
                fetch.failed,
                fetch.deferred,
                fetch.worker,
            )
        )

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
    deferred: int = 0
    """Polls whose reconcile the hourly budget could not spare (on time, without a snapshot)."""
    missed_at_cut: int = 0
    """Missed polls across the cut (a worker's kill): the gap spans it, or the watch fell silent
    before it and stayed so."""
    cut_gaps: list[float] = field(default_factory=list)
    """Per match polled before the cut: the gap across it (to the window's end if none followed)."""
    not_resumed: int = 0
    """Matches polled before the cut and never again in the window."""


def gaps(
    polls: Polls,
    fixtures: Iterable[int],
    since: float,
    until: float,
    live: float,
    idle: float,
    cut: float | None = None,
) -> Gaps:
    count = missed = at_restart = stalled = restarts = failed = deferred = 0
    at_cut = not_resumed = 0
    all_gaps: list[float] = []
    restart_gaps: list[float] = []
    cut_gaps: list[float] = []
    waits: list[float] = []
    fixture_count = 0
    for fixture_id in fixtures:
        fixture_count += 1
        seen = polls.by_fixture.get(fixture_id, [])
        window = [poll for poll in seen if since <= poll.started <= until]
        count += len(window)
        failed += sum(poll.failed for poll in window)
        deferred += sum(poll.deferred for poll in window)
        waits.extend(poll.finished - poll.started for poll in window)
        before = [poll for poll in seen if poll.started < since]
        chain = ([before[-1]] if before else []) + window
        playing = True
        for previous, following in itertools.pairwise(chain):
            playing = previous.playing if previous.playing is not None else playing
            limit = MISS_FACTOR * (live if playing else idle)
            gap = following.started - previous.started
            restart = following.activity != previous.activity
            across = cut is not None and previous.started < cut <= following.started
            all_gaps.append(gap)
            if restart:
                restarts += 1
                restart_gaps.append(gap)
            if across:
                cut_gaps.append(gap)
            if gap > limit:
                missed += 1
                at_restart += restart
                at_cut += across
        last = chain[-1] if chain else None
        silent_since_cut = cut is not None and last is not None and last.started < cut
        if silent_since_cut and last is not None:
            cut_gaps.append(until - last.started)
            not_resumed += 1
        if last is None or until - last.started > MISS_FACTOR * live:
            missed += 1
            stalled += 1
            at_cut += silent_since_cut
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
        deferred=deferred,
        missed_at_cut=at_cut,
        cut_gaps=cut_gaps,
        not_resumed=not_resumed,
    )


def polled_by(polls: Polls, fixtures: Iterable[int], worker: int, before: float) -> list[int]:
    """The fixtures whose last poll started before `before` was `worker`'s: its matches then."""
    found: list[int] = []
    for fixture_id in fixtures:
        earlier = [poll for poll in polls.by_fixture.get(fixture_id, []) if poll.started < before]
        if earlier and earlier[-1].worker == worker:
            found.append(fixture_id)
    return found


def spread(polls: Polls, since: float, until: float) -> dict[int, tuple[int, int]]:
    """Per worker: the distinct fixtures it polled in the window, and its polls."""
    fixtures: dict[int, set[int]] = defaultdict(set)
    counts: Counter[int] = Counter()
    for fixture_id, seen in polls.by_fixture.items():
        for poll in seen:
            if since <= poll.started <= until:
                fixtures[poll.worker].add(fixture_id)
                counts[poll.worker] += 1
    return {worker: (len(fixtures[worker]), counts[worker]) for worker in sorted(counts)}


# --- where the workers run -------------------------------------------------------------------


class Fleet:
    """The worker the matches run on when W = 1: this process, whose client feeds `polls` itself."""

    def __init__(self) -> None:
        self.polls = Polls()

    @property
    def pids(self) -> dict[int, int]:
        """Worker number -> pid."""
        return {0: os.getpid()}

    async def refresh(self) -> Polls:
        """The polls seen so far (good enough to tell a match polls steadily)."""
        return self.polls

    async def final(self) -> Polls:
        """Every poll, in the order they started (for the window's figures)."""
        return self.polls

    def warnings(self, own: WarningCounter) -> dict[str, int]:
        return dict(own.counts)

    def kill(self, worker: int) -> None:
        raise ValueError("the in-process worker cannot be killed (use --workers 2 or more)")

    def gone(self) -> dict[int, int]:
        """Workers that exited by themselves: number -> exit code."""
        return {}


@dataclass
class WorkerProcess:
    number: int
    process: asyncio.subprocess.Process
    polls: Path
    killed: bool = False

    @property
    def ready(self) -> Path:
        return self.polls.with_suffix(".ready")

    @property
    def warnings(self) -> Path:
        return self.polls.with_suffix(".warnings.json")


class ProcessFleet(Fleet):
    """W worker processes, each appending its polls to its own JSONL file, merged here."""

    def __init__(self, workers: Sequence[WorkerProcess]) -> None:
        super().__init__()
        self.workers = list(workers)
        self._offsets = {worker.number: 0 for worker in workers}
        self._records: list[PollRecord] = []

    @property
    def pids(self) -> dict[int, int]:
        return {worker.number: worker.process.pid for worker in self.workers}

    async def refresh(self) -> Polls:
        fresh = await asyncio.to_thread(self._read_new)
        for record in sorted(fresh, key=lambda record: record.started):
            self.polls.record(record)
        return self.polls

    async def final(self) -> Polls:
        await asyncio.to_thread(self._read_new)
        polls = Polls()
        for record in sorted(self._records, key=lambda record: record.started):
            polls.record(record)
        return polls

    def _read_new(self) -> list[PollRecord]:
        """Complete lines added to each file since the last read (a line being written waits)."""
        fresh: list[PollRecord] = []
        for worker in self.workers:
            if not worker.polls.exists():
                continue
            with worker.polls.open("rb") as handle:
                handle.seek(self._offsets[worker.number])
                chunk = handle.read()
            complete = chunk[: chunk.rfind(b"\n") + 1]
            self._offsets[worker.number] += len(complete)
            fresh.extend(
                PollRecord.parse(line, worker.number) for line in complete.decode().splitlines() if line
            )
        self._records.extend(fresh)
        return fresh

    def warnings(self, own: WarningCounter) -> dict[str, int]:
        """The bench's own and every worker's (a killed one's as of its last rewrite)."""
        total: Counter[str] = Counter(own.counts)
        for worker in self.workers:
            with contextlib.suppress(OSError, ValueError):
                total.update(json.loads(worker.warnings.read_text()))
        return dict(total)

    def kill(self, worker: int) -> None:
        chosen = next(candidate for candidate in self.workers if candidate.number == worker)
        chosen.killed = True
        chosen.process.send_signal(signal.SIGKILL)

    def gone(self) -> dict[int, int]:
        return {
            worker.number: worker.process.returncode
            for worker in self.workers
            if worker.process.returncode is not None and not worker.killed
        }


@asynccontextmanager
async def in_process_worker(client: Client, settings: Settings) -> AsyncIterator[Fleet]:
    """One real worker in this process, its football client observed and built as in production."""
    fleet = Fleet()
    async with worker_dependencies(settings) as shared:
        observed = observed_client(settings, shared.redis, fleet.polls.on_fetch)
        try:
            async with running_workers(client, replace(shared, provider=observed), settings):
                yield fleet
        finally:
            await observed.aclose()


@asynccontextmanager
async def worker_processes(
    count: int, settings: Settings, workdir: Path, log_level: str
) -> AsyncIterator[ProcessFleet]:
    """`count` worker processes on the bench's services, ready (polling their queues) when yielded."""
    env = {
        **worker_process_env(settings),
        "PROVIDER_HOURLY_BUDGET": str(settings.provider_hourly_budget),
        "PROVIDER_BUDGET_WINDOW": f"{settings.provider_budget_window.total_seconds():g}s",
    }
    python = str(VENV_PYTHON if VENV_PYTHON.exists() else Path(sys.executable))
    workers: list[WorkerProcess] = []
    try:
        for number in range(1, count + 1):
            polls = workdir / f"worker-{number}.jsonl"
            process = await asyncio.create_subprocess_exec(
                *(python, str(WORKER_SCRIPT), "--polls", str(polls), "--log-level", log_level),
                cwd=ROOT,
                env=env,
                stdout=asyncio.subprocess.DEVNULL,
            )
            workers.append(WorkerProcess(number, process, polls))
        await wait_ready(workers)
        yield ProcessFleet(workers)
    finally:
        await stop_workers(workers)


async def wait_ready(workers: Sequence[WorkerProcess]) -> None:
    deadline = time.monotonic() + WORKER_READY_SECONDS
    print(f"waiting for {len(workers)} worker processes...", flush=True)
    while not all(worker.ready.exists() for worker in workers):
        for worker in workers:
            if worker.process.returncode is not None:
                raise RuntimeError(f"worker {worker.number} exited with {worker.process.returncode}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"the workers were not polling after {WORKER_READY_SECONDS:g} s")
        await asyncio.sleep(0.5)


async def stop_workers(workers: Sequence[WorkerProcess]) -> None:
    """SIGTERM (each stops its Temporal workers and writes its last polls), SIGKILL if it hangs."""
    for worker in workers:
        if worker.process.returncode is None:
            worker.process.terminate()
    for worker in workers:
        try:
            async with asyncio.timeout(WORKER_STOP_SECONDS):
                await worker.process.wait()
        except TimeoutError:
            print(f"worker {worker.number} did not stop; killing it", file=sys.stderr, flush=True)
            worker.process.kill()
            await worker.process.wait()


def fleet_for(
    args: argparse.Namespace, client: Client, settings: Settings, workdir: Path
) -> contextlib.AbstractAsyncContextManager[Fleet]:
    """The in-process worker for W = 1 (its CPU is this process's), else W worker processes."""
    if args.workers == 1:
        return in_process_worker(client, settings)
    return worker_processes(args.workers, settings, workdir, args.log_level)


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


@dataclass(frozen=True)
class CpuSample:
    total: float
    threads: dict[str, float]


@dataclass(frozen=True)
class WorkerUse:
    """One worker over the window: what it polled and the CPU it used (a killed one's until the kill)."""

    number: int
    pid: int
    fixtures: int
    polls: int
    cpu: float
    threads: dict[str, float]
    killed: bool = False


class WorkerMeter:
    """CPU of each worker process over the window, from the last sample taken of it.

    A process's CPU cannot be read once it is gone, so the bench samples every few seconds and
    just before a kill: a killed worker keeps what it had used until then.
    """

    def __init__(self, pids: dict[int, int]) -> None:
        self.pids = dict(pids)
        self._start: dict[int, CpuSample] = {}
        self._last: dict[int, CpuSample] = {}
        self._frozen: set[int] = set()

    def freeze(self, number: int) -> None:
        """Sample `number` one last time and never again (it is about to be killed: a zombie's
        threads are gone from `/proc` while its totals are not, so later samples would not add up)."""
        self.sample()
        self._frozen.add(number)

    def sample(self) -> None:
        for number, pid in self.pids.items():
            if number in self._frozen:
                continue
            total = process_cpu([pid]).get(pid)
            threads = thread_cpu(pid)
            if total is None or not any(threads.values()):
                continue  # gone: its last sample stands
            self._last[number] = CpuSample(total, threads)

    def start(self) -> None:
        self.sample()
        self._start = dict(self._last)

    def used(self) -> dict[int, CpuSample]:
        """Per worker number: CPU seconds since `start`, in all and by thread group."""
        used: dict[int, CpuSample] = {}
        for number, last in self._last.items():
            first = self._start.get(number, CpuSample(0.0, {}))
            used[number] = CpuSample(
                last.total - first.total,
                {group: seconds - first.threads.get(group, 0.0) for group, seconds in last.threads.items()},
            )
        return used


async def read_counters(
    roles: dict[str, list[int]], database_url: str, redis_url: str, metrics_url: str, namespace: str
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
        metrics=await frontend_requests(metrics_url, namespace),
    )


async def frontend_requests(metrics_url: str, namespace: str) -> dict[str, float]:
    """The Temporal server's `service_requests` counter by operation, as its frontend counts them
    for `namespace` (empty if unavailable).

    The dev server is one process running every service, and each counts the calls it serves: a
    heartbeat is one `RecordActivityTaskHeartbeat` at the frontend and another at the history
    service, a task poll shows at the frontend and at matching. Summed over services (as this bench
    did until 2026-12-01) every worker call counts twice; the server's own `temporal_system`
    namespace is not the workers' either.
    """
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
        inside = labels[labels.index("{") + 1 : labels.rindex("}")]
        found = {name: raw.strip('"') for name, _, raw in (part.partition("=") for part in inside.split(","))}
        if found.get("service_name") == "frontend" and found.get("namespace") == namespace:
            totals[found.get("operation", "?")] += float(value)
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


@dataclass(frozen=True)
class Kill:
    """The worker SIGKILLed in the window, and what became of the matches it was polling."""

    worker: int
    after: float
    """Seconds into the window."""
    matches: int
    gaps: Gaps
    """Those matches' polls over the window, cut at the kill (`cut_gaps`: their takeover times)."""


@dataclass
class Result:
    matches: int
    workers: int
    interval: float
    seconds: float
    warmup: float
    gaps: Gaps
    requests: dict[str, int]
    cpu: dict[str, float]
    """Everything but the workers: simulator, temporal, postgres, redis (and bench for W > 1)."""
    used: list[WorkerUse]
    machine: float
    events: int
    events_seconds: float
    rpcs: dict[str, float]
    xacts: int
    changes: int
    heartbeat_timeout: float
    budget: int
    kill: Kill | None = None
    notes: list[str] = field(default_factory=list)
    warnings: dict[str, int] = field(default_factory=dict)

    @property
    def intervals(self) -> float:
        return self.seconds / self.interval

    @property
    def worker_cpu(self) -> float:
        return sum(use.cpu for use in self.used)

    def per_interval(self, endpoint: str) -> float:
        return self.requests.get(endpoint, 0) / self.intervals

    def per_minute(self, value: float, seconds: float | None = None) -> float:
        return value / (seconds or self.seconds) * 60

    def per_hour(self) -> dict[str, int]:
        """Requests per endpoint over the window scaled to an hour, the headline endpoints first."""
        names = [*HEADLINE_ENDPOINTS, *sorted(set(self.requests) - set(HEADLINE_ENDPOINTS))]
        return {name: round(self.requests.get(name, 0) / self.seconds * 3600) for name in names}


def bench_settings(
    args: argparse.Namespace, client: Client, database_url: str, redis_url: str, provider_url: str
) -> Settings:
    """Production settings on the bench's services and queues (the worker processes get them as
    their environment)."""
    return Settings(
        database_url=database_url,
        redis_url=redis_url,
        temporal_address=client.service_client.config.target_host,
        temporal_namespace=client.namespace,
        temporal_task_queue=f"bench-many-{uuid.uuid4().hex[:8]}",
        temporal_watch_task_queue=f"bench-many-watch-{uuid.uuid4().hex[:8]}",
        provider_url=provider_url,
        provider_token=SecretStr(SIMULATOR_TOKEN),
        poll_interval_live=timedelta(seconds=args.interval),
        provider_hourly_budget=args.hourly_budget,
        log_format="console",
    )


async def measure(args: argparse.Namespace, workdir: Path, warnings: WarningCounter) -> Result:
    cancel_on_sigterm()
    count = args.matches
    end = START_T + max(args.ramp, args.warmup_max) + args.interval + args.duration + RECORDING_MARGIN
    path = cloned_recording(workdir, count, start=START_T, end=end, stagger=args.stagger)
    metrics_port = free_port()
    metrics_url = f"http://127.0.0.1:{metrics_port}/metrics"
    async with (
        bench_database("scoreline_bench_many") as database_url,
        bench_redis() as redis_url,
        temporal_server(metrics_port=metrics_port) as env,
        child_provider(path) as sim,
    ):
        client = env.client
        settings = bench_settings(args, client, database_url, redis_url, sim.provider.url)
        fixtures = [CLONE_BASE_ID + index for index in range(count)]
        roles = {
            "simulator": [sim.pid],
            "temporal": children_named("temporal"),
            "postgres": await postgres_pids(database_url),
        }
        if args.workers > 1:
            roles["bench"] = [os.getpid()]
        last_line: list[str] = []
        async with fleet_for(args, client, settings, workdir) as fleet:
            # The replay starts once the workers are up: their start-up must not eat the second half.
            (
                await sim.provider.admin.post("/_sim/clock", json={"t": START_T, "freeze": False})
            ).raise_for_status()
            handles: list[WorkflowHandle[Any, Any]] = []
            try:
                result = await _window(
                    args,
                    settings,
                    client,
                    sim.provider,
                    handles,
                    fixtures,
                    fleet,
                    roles,
                    (database_url, redis_url, metrics_url),
                )
                result.warnings = fleet.warnings(warnings)
                # The figures first: an overloaded worker may take long to drain.
                report(result, args)
                last_line.append(summary_line(result, args))
                return result
            finally:
                arm_teardown_watchdog(
                    TEARDOWN_SECONDS,
                    exit_code=0 if last_line else 3,
                    last_words=lambda: last_line[0] if last_line else None,
                )
                print(f"terminating {len(handles)} workflows...", flush=True)
                await bounded(handles, lambda handle: handle.terminate(reason="bench over"))


async def start_matches(
    client: Client,
    settings: Settings,
    fixtures: list[int],
    ramp: float,
    handles: list[WorkflowHandle[Any, Any]],
) -> None:
    """Each match's row from one `fixtures/multi` listing, then its run started (`MatchRuns`), as
    the fixture sync does, evenly over `ramp` seconds.

    The listing goes through a client of its own without Redis, so outside the deployment's hourly
    budget: the bench's setup must not spend the calls the workers are measured on (the tests'
    `start_match` asks a worker's client once per match; at a 2,000 budget the bucket spares
    about 25 urgent calls at once, and 500 starts would leave the workers' first looks refused).
    """
    engine = create_engine(settings.require_database_url(), pool_size=4)
    try:
        async with SportMonksClient.from_settings(settings) as listing:
            snapshots = await listing.fixtures(fixtures)
        if len(snapshots) != len(fixtures):
            raise RuntimeError(f"the provider lists {len(snapshots)} of the {len(fixtures)} fixtures")
        await IngestStore(engine).upsert_fixtures(snapshots)
        runs = MatchRuns.from_settings(client, engine, settings)
        began = time.time()

        async def start(fixture_id: int) -> None:
            if not await runs.ensure_running(fixture_id):
                raise RuntimeError(f"match-{fixture_id} was not started")
            handles.append(client.get_workflow_handle(match_workflow_id(fixture_id)))

        if ramp > 0:
            gap = ramp / len(fixtures)
            for fixture_id in fixtures:
                await start(fixture_id)
                await asyncio.sleep(max(0.0, began + gap * len(handles) - time.time()))
        else:
            await bounded(fixtures, start, limit=50)
    finally:
        await engine.dispose()


async def warm_up(args: argparse.Namespace, fleet: Fleet, fixtures: list[int], started: float) -> list[str]:
    """Wait until every match polls steadily (or `--warmup-max`); a note if some never did."""
    while True:
        polls = await fleet.refresh()
        if all(polls.steady(fixture_id) for fixture_id in fixtures):
            break
        if time.time() - started > args.warmup_max:
            unsteady = sum(not polls.steady(fixture_id) for fixture_id in fixtures)
            return [f"{unsteady} of {len(fixtures)} matches were not polling steadily after the warm-up"]
        await asyncio.sleep(1)
    await asyncio.sleep(args.interval)  # let the last hand-backs settle into their rhythm
    return []


async def _window(
    args: argparse.Namespace,
    settings: Settings,
    client: Client,
    provider: Provider,
    handles: list[WorkflowHandle[Any, Any]],
    fixtures: list[int],
    fleet: Fleet,
    roles: dict[str, list[int]],
    urls: tuple[str, str, str],
) -> Result:
    database_url, redis_url, metrics_url = urls
    started = time.time()
    print(f"starting {len(fixtures)} match workflows...", flush=True)
    await start_matches(client, settings, fixtures, args.ramp, handles)
    notes = await warm_up(args, fleet, fixtures, started)
    warmup = time.time() - started
    print(f"warm after {warmup:.0f} s; measuring {args.duration:g} s...", flush=True)

    roles = {**roles, "postgres": await postgres_pids(database_url)}
    events_before, events_at = await history_events(handles), time.time()
    await reset_sim_requests(provider)
    meter = WorkerMeter(fleet.pids)
    meter.start()
    before = await read_counters(roles, database_url, redis_url, metrics_url, settings.temporal_namespace)
    killed_at = await _run_window(args, fleet, meter, before.at, notes)
    requests = await sim_requests(provider)
    roles = {**roles, "postgres": await postgres_pids(database_url)}
    meter.sample()
    after = await read_counters(roles, database_url, redis_url, metrics_url, settings.temporal_namespace)
    events_after = await history_events(handles)
    events_seconds = time.time() - events_at
    polls = await fleet.final()
    idle = (settings.poll_interval_idle or timedelta(seconds=5)).total_seconds()
    measured = gaps(polls, fixtures, before.at, after.at, args.interval, idle, cut=killed_at)
    kill = None
    if killed_at is not None:
        victims = polled_by(polls, fixtures, KILLED_WORKER, killed_at)
        kill = Kill(
            worker=KILLED_WORKER,
            after=killed_at - before.at,
            matches=len(victims),
            gaps=gaps(polls, victims, before.at, after.at, args.interval, idle, cut=killed_at),
        )
    notes.extend(
        f"worker {number} exited by itself (code {code}) during the run"
        for number, code in fleet.gone().items()
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
        workers=args.workers,
        interval=args.interval,
        seconds=after.at - before.at,
        warmup=warmup,
        gaps=measured,
        requests=requests,
        cpu=cpu,
        used=worker_uses(fleet, meter, polls, before.at, after.at, killed_at is not None),
        machine=after.machine - before.machine,
        events=events_after - events_before,
        events_seconds=events_seconds,
        rpcs=rpcs,
        xacts=after.xacts - before.xacts,
        changes=after.changes - before.changes,
        heartbeat_timeout=settings.watch_heartbeat_timeout.total_seconds(),
        budget=settings.provider_hourly_budget,
        kill=kill,
        notes=notes,
    )


async def _run_window(
    args: argparse.Namespace, fleet: Fleet, meter: WorkerMeter, began: float, notes: list[str]
) -> float | None:
    """Wait out the window, sampling worker CPU, killing a worker if asked; when it was killed."""
    deadline = began + args.duration
    kill_at = None if args.kill_worker_at is None else began + args.kill_worker_at
    killed_at: float | None = None
    disturbed: set[str] = set()
    last_report = 0
    while (now := time.time()) < deadline:
        wake = min(deadline, now + SAMPLE_SECONDS)
        if kill_at is not None and killed_at is None:
            wake = min(wake, kill_at)
        await asyncio.sleep(max(0.0, wake - now))
        if kill_at is not None and killed_at is None and time.time() >= kill_at:
            meter.freeze(KILLED_WORKER)
            fleet.kill(KILLED_WORKER)
            killed_at = time.time()
            print(f"  killed worker {KILLED_WORKER} (SIGKILL) {killed_at - began:.0f} s in", flush=True)
        meter.sample()
        disturbed.update(busy_with())
        elapsed = time.time() - began
        if int(elapsed) // 30 > last_report and deadline - time.time() > 5:
            last_report = int(elapsed) // 30
            print(f"  {elapsed:.0f} s of {args.duration:g} s", flush=True)
    if disturbed:
        notes.append(
            f"a test run (pytest, pids {', '.join(sorted(disturbed))}) ran during the measurement: "
            "these figures were taken on a shared machine"
        )
    return killed_at


def worker_uses(
    fleet: Fleet, meter: WorkerMeter, polls: Polls, since: float, until: float, with_kill: bool
) -> list[WorkerUse]:
    """Each worker's share of the matches and of the CPU over the window."""
    shares = spread(polls, since, until)
    used = meter.used()
    return [
        WorkerUse(
            number=number,
            pid=pid,
            fixtures=shares.get(number, (0, 0))[0],
            polls=shares.get(number, (0, 0))[1],
            cpu=used.get(number, CpuSample(0.0, {})).total,
            threads=used.get(number, CpuSample(0.0, {})).threads,
            killed=with_kill and number == KILLED_WORKER,
        )
        for number, pid in fleet.pids.items()
    ]


# --- figures ---------------------------------------------------------------------------------


def worker_name(number: int) -> str:
    """Worker processes are numbered from 1; the in-process worker is 0."""
    return f"worker {number}" if number else "the worker"


def pct(seconds: float, over: float) -> str:
    """CPU seconds over a wall span as % of one core."""
    return f"{seconds / over * 100:.0f}"


def missed_cell(result: Result) -> str:
    g = result.gaps
    cell = f"{g.missed} of {g.polls:,} polls ({g.missed_at_restart} at a watch restart, {g.stalled} stalled watches)"
    if result.kill is not None:
        own = result.kill.gaps.missed_at_cut
        cell += (
            f"; {g.missed_at_cut} of them the kill's (gap across it: {own} of the killed worker's "
            f"matches, {g.missed_at_cut - own} of the others), {g.missed - g.missed_at_cut} without it"
        )
    return cell


def kill_rows(result: Result) -> list[tuple[str, str]]:
    kill = result.kill
    if kill is None:
        return []
    k = kill.gaps
    timeout = result.heartbeat_timeout
    within = sum(gap <= timeout for gap in k.cut_gaps)
    return [
        (
            "worker killed (SIGKILL)",
            f"worker {kill.worker}, {kill.after:.0f} s into the window, polling {kill.matches} matches then",
        ),
        (
            f"takeover: its matches' gap between polls across the kill p50 / max, s (heartbeat timeout {timeout:g} s)",
            f"{percentile(k.cut_gaps, 50):.1f} / {max(k.cut_gaps, default=float('nan')):.1f}; "
            f"{within} of {kill.matches} within the timeout, {k.not_resumed} not polled again by the end",
        ),
        (
            "its matches' missed polls (across the kill / otherwise)",
            f"{k.missed} of {k.polls:,} ({k.missed_at_cut} / {k.missed - k.missed_at_cut})",
        ),
    ]


def worker_rows(result: Result) -> list[tuple[str, str]]:
    seconds, intervals = result.seconds, result.intervals
    g = result.gaps
    threads: Counter[str] = Counter()
    for use in result.used:
        threads.update(use.threads)
    where = "in the bench's process" if result.workers == 1 else "processes"
    return [
        (
            "matches per worker: distinct fixtures each polled in the window (polls; a match whose "
            "next watch another worker took counts at both)",
            ", ".join(
                f"{worker_name(use.number)}{' (killed)' if use.killed else ''}: {use.fixtures:,} ({use.polls:,})"
                for use in result.used
            ),
        ),
        (
            f"worker CPU, all {result.workers} ({where})",
            f"{result.worker_cpu:.1f} s = {pct(result.worker_cpu, seconds)} % of one core; "
            f"{result.worker_cpu / intervals * 1000:.0f} ms per poll interval",
        ),
        (
            "worker CPU per process, % of one core (ms per poll interval)"
            + ("; a killed worker's until the kill" if result.kill is not None else ""),
            ", ".join(
                f"{worker_name(use.number)}: {pct(use.cpu, seconds)} ({use.cpu / intervals * 1000:.0f})"
                for use in result.used
            ),
        ),
        ("worker CPU per poll, ms", f"{result.worker_cpu / max(g.polls, 1) * 1000:.1f}"),
        (
            "worker CPU by thread, all workers, % of one core",
            ", ".join(f"{group} {pct(value, seconds)}" for group, value in threads.items()),
        ),
    ]


def temporal_rows(result: Result) -> list[tuple[str, str]]:
    minutes = result.seconds / 60
    heartbeats = result.rpcs.get(HEARTBEAT_OPERATION, 0.0) / minutes
    events = result.per_minute(result.events, result.events_seconds)
    return [
        (
            "Temporal history events per minute (all workflows; per match)",
            f"{events:,.0f} ({events / result.matches:.1f})",
        ),
        (
            f"Temporal activity heartbeats per minute (`{HEARTBEAT_OPERATION}`; per match)",
            f"{heartbeats:,.0f} ({heartbeats / result.matches:.1f})",
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
    ]


def table(result: Result) -> str:
    g = result.gaps
    hourly = result.per_hour()
    others = ("simulator", "temporal", "postgres", "redis", *(("bench",) if "bench" in result.cpu else ()))
    rows = [
        (
            "matches in play / workers / measured",
            f"{result.matches:,} / {result.workers} / {result.seconds:.0f} s after a {result.warmup:.0f} s warm-up",
        ),
        (
            "upstream `livescores/inplay` per poll interval (the deployment)",
            f"{result.per_interval('livescores/inplay'):.2f} "
            f"({result.requests.get('livescores/inplay', 0)} in {result.intervals:.1f})",
        ),
        (
            "upstream requests per hour per endpoint (all of entity `Fixture`)",
            ", ".join(f"`{name}` {value:,}" for name, value in hourly.items()),
        ),
        (
            "upstream requests per hour, all endpoints (goal at 500 matches / budget)",
            f"{sum(hourly.values()):,} ({HOURLY_GOAL:,} / {result.budget:,})",
        ),
        (
            "upstream requests per poll interval, all endpoints",
            f"{sum(result.requests.values()) / result.intervals:.2f}",
        ),
        (f"missed polls (gap > {MISS_FACTOR:g}x interval)", missed_cell(result)),
        *kill_rows(result),
        (
            "poll gap p50 / p99 / max, s",
            f"{percentile(g.gaps, 50):.2f} / {percentile(g.gaps, 99):.2f} / {max(g.gaps, default=float('nan')):.2f}",
        ),
        (
            "gap across a watch restart p50 / max, s (count)",
            f"{percentile(g.restart_gaps, 50):.2f} / {max(g.restart_gaps, default=float('nan')):.2f} ({g.restarts})",
        ),
        (
            "polls done / expected at the interval",
            f"{g.polls:,} / {g.expected:,.0f} ({g.failed} failed, {g.deferred} reconciles deferred for the budget)",
        ),
        (
            "watch's wait for its snapshot p50 / p99, ms",
            f"{percentile(g.waits, 50) * 1000:.1f} / {percentile(g.waits, 99) * 1000:.0f}",
        ),
        *worker_rows(result),
        (
            f"other CPU: {' / '.join(others)}, % of one core",
            " / ".join(pct(result.cpu.get(role, 0.0), result.seconds) for role in others),
        ),
        (
            "whole machine busy",
            f"{pct(result.machine, result.seconds)} % of one core (of {(os.cpu_count() or 1) * 100} %)",
        ),
        *temporal_rows(result),
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
    """Each part of the goal, plainly."""
    inplay = result.per_interval("livescores/inplay")
    board_ok = inplay <= (round(result.intervals) + 1) / result.intervals
    hourly = sum(result.per_hour().values())
    allowed = HOURLY_GOAL if result.matches <= HOURLY_GOAL_MATCHES else result.budget
    missed = result.gaps.missed - result.gaps.missed_at_cut
    spread_ok = all(use.fixtures > 0 for use in result.used)
    parts = [
        f"Live board: {inplay:.2f} `livescores/inplay` requests per interval for the deployment "
        f"({'one' if board_ok else 'more than one'}).",
        f"Requests: {hourly:,} per hour per entity, {'within' if hourly <= allowed else 'over'} "
        f"{allowed:,} ({'the goal at 500 matches' if allowed == HOURLY_GOAL else 'the budget'}); "
        f"{result.gaps.deferred} reconciles deferred for the budget.",
        f"Missed polls: {result.gaps.missed} of {result.gaps.polls:,}"
        + (f", {missed} without the kill." if result.kill is not None else "."),
    ]
    met = board_ok and hourly <= allowed and missed == 0
    if result.workers > 1:
        parts.append(
            "Spread: " + ", ".join(f"{use.fixtures}" for use in result.used) + " matches per worker"
            f" ({'every worker polled' if spread_ok else 'a worker polled none'})."
        )
        met = met and spread_ok
    if result.kill is not None:
        longest = max(result.kill.gaps.cut_gaps, default=math.inf)
        within = longest <= result.heartbeat_timeout
        parts.append(
            f"Takeover: the killed worker's {result.kill.matches} matches polled again after at most "
            f"{longest:.1f} s ({'within' if within else 'beyond'} the {result.heartbeat_timeout:g} s "
            "heartbeat timeout)."
        )
        met = met and within
    size = f"{result.matches} matches on {result.workers} worker{'s' if result.workers > 1 else ''}"
    return f"Goal {'met' if met else 'NOT met'} at {size}. " + " ".join(parts)


def summary_line(result: Result, args: argparse.Namespace) -> str:
    """The bench's last line, which other tools read (the issue fixes its shape)."""
    minutes = args.minutes if args.minutes is not None else args.duration / 60
    return (
        f"many_matches: {result.matches} matches on {result.workers} workers over {minutes:g} min: "
        f"missed {result.gaps.missed} of {result.gaps.polls} polls; "
        f"board requests per interval {result.per_interval('livescores/inplay'):.2f}; "
        f"requests per hour {json.dumps(result.per_hour())}"
    )


def append_results(result: Result, args: argparse.Namespace) -> None:
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    notes = [f"Note: {note}." for note in result.notes]
    workers = (
        "one in-process worker"
        if result.workers == 1
        else f"{result.workers} worker processes (`bench/many_matches_worker.py`)"
    )
    kill = (
        f" Worker {result.kill.worker} was SIGKILLed {result.kill.after:.0f} s into the window."
        if result.kill is not None
        else ""
    )
    append_section(
        [
            f"## {now} — {result.matches} live matches on {result.workers} worker"
            f"{'s' if result.workers > 1 else ''} (`bench/many_matches.py`)",
            "",
            f"Goal: *{GOAL}*.",
            "",
            f"Setup: the three bundled matches cloned to {result.matches} fixtures (new ids and names), "
            f"each shifted by up to {args.stagger:g} s and cut to the second half, so all are in play; "
            "the simulator (child process) replays them at real speed (about one change per match per "
            f"minute). {result.matches} `MatchWorkflow`s, started over {args.ramp:g} s, on {workers} "
            f"with production settings (live poll {args.interval:g} s, reconcile 60 s, heartbeat "
            f"timeout {result.heartbeat_timeout:g} s, hourly budget {result.budget:,}; the board shared "
            "through Redis, per-fixture calls batched); Temporal dev server (in memory), Postgres and "
            f"Redis on this machine. Measured for {result.seconds:.0f} s after every match polled "
            f"steadily.{kill} A missed poll is a gap between two polls of a match above "
            f"{MISS_FACTOR:g}x the interval (hand-backs to the workflow included). {machine_note()}.",
            "",
            table(result),
            "",
            *notes,
            *([""] if notes else []),
            warning_line(result),
            "",
            verdict(result),
            "",
            f"`{summary_line(result, args)}`",
            "",
        ]
    )


def main() -> None:
    args = parse_args()
    warnings = configure_bench_logging(args.log_level)
    if not args.no_wait and not wait_until_quiet():
        sys.exit("pytest still running after 15 minutes; not measuring on a busy machine")
    with tempfile.TemporaryDirectory(prefix="scoreline-bench-") as workdir:
        result = asyncio.run(measure(args, Path(workdir), warnings))
    print(summary_line(result, args), flush=True)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--matches", type=int, default=500, help="Live matches (MatchWorkflows) to run.")
    parser.add_argument(
        "--workers", type=int, default=1, help="Worker processes (1: in the bench's own process)."
    )
    parser.add_argument(
        "--minutes", type=float, help="Measured minutes after the warm-up (wins over --duration)."
    )
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
    parser.add_argument(
        "--kill-worker-at",
        type=float,
        help="SIGKILL worker 1 this many seconds into the measured window (--workers 2 or more).",
    )
    parser.add_argument(
        "--hourly-budget",
        type=int,
        default=Settings.model_fields["provider_hourly_budget"].default,
        help="PROVIDER_HOURLY_BUDGET of the workers (calls per entity per hour).",
    )
    parser.add_argument("--no-wait", action="store_true", help="Do not wait for a running pytest to finish.")
    parser.add_argument("--no-write", action="store_true", help="Do not append to bench/results.md.")
    parser.add_argument(
        "--log-level", default="error", help="Worker log level on stderr (warnings are counted either way)."
    )
    args = parser.parse_args()
    if args.minutes is not None:
        args.duration = args.minutes * 60
    if args.matches < 1 or args.workers < 1 or args.duration <= 0:
        parser.error("--matches, --workers and the measured time must be positive")
    if args.kill_worker_at is not None:
        if args.workers < 2:
            parser.error("--kill-worker-at needs --workers 2 or more (someone must take the matches over)")
        if not 0 <= args.kill_worker_at < args.duration:
            parser.error("--kill-worker-at must fall inside the measured window")
    return args


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
    """The workers' warnings and errors over the whole run, most frequent first."""
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
