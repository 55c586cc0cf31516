"""Scale out (issue 14): the workers of one deployment share one live board, and a worker killed
during many live matches has its watches taken over with nothing lost or doubled.

Two real `scoreline worker` processes poll the same task queues with the test's settings and a
Redis of the test's own (the shared board and the hourly budget live there, under fixed keys); the
budget is set far beyond anything these runs spend, so only the sharing decides what is sent. The
matches are the bundled three cloned under new fixture ids, each clone following its original.
"""

from __future__ import annotations

import asyncio
import copy
import json
import math
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client, WorkflowHandle

from activities.ingest.store import IngestStore
from devkit.simulators.provider.recording_file import read_recording
from domain.match_run import MatchOutcome
from scoreline.settings import Settings
from scoreline.temporal.match_runs import MatchRuns, match_workflow_id
from tests.match.harness import end_leftover_run, fast_settings, stored_outcome
from tests.support.provider import expected, line_times, recording, running_provider
from tests.support.worker import WorkerProcess, worker_processes
from workers.dependencies import worker_dependencies
from workflows.match import MatchWorkflow

pytestmark = [pytest.mark.timeout(240), pytest.mark.own_redis]

SOURCE = "football-three-matches"
UNLIMITED = 10_000_000
"""Calls per hour: a budget these runs never reach, so it refuses nothing."""
SECOND_HALF_T = 4500.0
"""Replay time at which all three bundled matches are in their second half (until 6750)."""
END_OF_RECORDING = 10_000.0


def cloned(directory: Path, count: int, *, base: int, since: float) -> tuple[Path, dict[int, int]]:
    """The bundled three matches cloned to fixtures `base`, `base + 1`, ...: clone i plays exactly
    what original `i % 3` played, from the state it showed at replay time `since` on. Returns the
    recording and each clone's original."""
    lines = [json.loads(line) for line in read_recording(recording(SOURCE)).splitlines() if line.strip()]
    header, body = lines[0], [line for line in lines[1:] if "fixture" in line]
    originals: list[int] = header["fixtures"]
    of = {base + index: originals[index % len(originals)] for index in range(count)}
    out: list[dict[str, Any]] = []
    for clone_id, original in of.items():
        for line in _cut([line for line in body if line["fixture"]["id"] == original], since):
            fixture = copy.deepcopy(line["fixture"])
            fixture["id"] = clone_id
            fixture["name"] = f"{fixture['name']} #{clone_id - base}"
            for relation in ("scores", "events", "periods", "timeline"):
                for item in fixture.get(relation) or ():
                    if isinstance(item, dict) and "fixture_id" in item:
                        item["fixture_id"] = clone_id
            out.append({"t": line["t"], "fixture": fixture})
    out.sort(key=lambda line: float(line["t"]))
    path = directory / f"clones-{count}.jsonl"
    clone_header = {**header, "name": f"{SOURCE} x{count}", "fixtures": list(of)}
    path.write_text("".join(json.dumps(line, separators=(",", ":")) + "\n" for line in [clone_header, *out]))
    return path, of


def _cut(lines: Sequence[dict[str, Any]], since: float) -> list[dict[str, Any]]:
    """The lines from `since` on, led by the one on show at `since` (moved to `since`)."""
    before = [line for line in lines if float(line["t"]) <= since]
    after = [line for line in lines if float(line["t"]) > since]
    return ([{**before[-1], "t": since}] if before else []) + after


def outcome_from(original: int, since: float) -> dict[str, Any]:
    """What a clone of `original` played from `since` must end with: the original's final events,
    score and state (`.expected.json`); retracted, the events it showed from `since` on and not at
    the end (a correction made before `since` was never shown to the clone)."""
    final = expected(SOURCE)[str(original)]
    lines = [json.loads(line) for line in read_recording(recording(SOURCE)).splitlines()[1:] if line.strip()]
    shown: set[tuple[str, int]] = set()
    for line in _cut([line for line in lines if line.get("fixture", {}).get("id") == original], since):
        for stream in ("events", "timeline"):
            shown.update((stream, item["id"]) for item in line["fixture"].get(stream) or ())
    kept = {(stream, event_id) for stream, event_id in final["events"]}
    return {**final, "retracted": sorted([list(pair) for pair in shown - kept])}


def scale_settings(
    settings: Settings, provider_url: str, *, live: timedelta, heartbeat: timedelta
) -> Settings:
    """The fast test settings at live interval `live`, heartbeat timeout `heartbeat`, no budget."""
    return fast_settings(settings, provider_url).model_copy(
        update={
            "poll_interval_live": live,
            "watch_heartbeat_timeout": heartbeat,
            "provider_hourly_budget": UNLIMITED,
        }
    )


async def start_matches(
    client: Client, settings: Settings, fixture_ids: Sequence[int]
) -> list[WorkflowHandle[Any, MatchOutcome]]:
    """`tests.match.harness.start_match` for many fixtures at once: their rows from one
    `fixtures/multi` listing, then each run started from the database's facts."""
    await asyncio.gather(*(end_leftover_run(client, fixture_id) for fixture_id in fixture_ids))
    async with worker_dependencies(settings) as deps:
        snapshots = await deps.provider.fixtures(fixture_ids)
        assert sorted(snapshot.fixture_id for snapshot in snapshots) == sorted(fixture_ids)
        await IngestStore(deps.pools.ingest).upsert_fixtures(snapshots)
        runs = MatchRuns.from_settings(client, deps.pools.ingest, settings)
        started = await asyncio.gather(*(runs.ensure_running(fixture_id) for fixture_id in fixture_ids))
    assert all(started)
    return [
        client.get_workflow_handle_for(MatchWorkflow.run, match_workflow_id(fixture_id))
        for fixture_id in fixture_ids
    ]


def watch_starts(worker: WorkerProcess) -> list[tuple[datetime, int, dict[str, Any]]]:
    """Each `watch started` line of a worker's log: when, which fixture, the line."""
    return [
        (datetime.fromisoformat(line["timestamp"]), int(line["fixture_id"]), line)
        for line in worker.logged("watch started")
    ]


def holders(workers: Sequence[WorkerProcess]) -> dict[int, int]:
    """Each fixture's current watch: the number of the worker whose log shows its latest start."""
    latest: dict[int, tuple[datetime, int]] = {}
    for number, worker in enumerate(workers):
        for at, fixture, _ in watch_starts(worker):
            if fixture not in latest or at > latest[fixture][0]:
                latest[fixture] = (at, number)
    return {fixture: number for fixture, (_, number) in latest.items()}


async def until_watched(workers: Sequence[WorkerProcess], fixture_ids: Sequence[int], within: float) -> None:
    """Until every fixture's watch has started on one of the workers."""
    async with asyncio.timeout(within):
        while not set(fixture_ids) <= {f for w in workers for _, f, _ in watch_starts(w)}:
            await asyncio.sleep(0.2)


async def until_quiet(workers: Sequence[WorkerProcess], quiet: float, within: float) -> None:
    """Until no worker has started a watch for `quiet` seconds: every match is polling the watch
    it will keep while the clock stands still."""
    async with asyncio.timeout(within):
        seen, since = -1, time.monotonic()
        while True:
            count = sum(len(worker.logged("watch started")) for worker in workers)
            if count != seen:
                seen, since = count, time.monotonic()
            elif time.monotonic() - since >= quiet:
                return
            await asyncio.sleep(0.1)


async def test_two_workers_poll_one_live_board_per_interval(
    settings: Settings, temporal_client: Client, tmp_path: Path
) -> None:
    """Twelve live matches on two worker processes, live interval 0.5 s: over a measured window of
    several seconds the provider sees at most one `livescores/inplay` per interval (one more for the
    window's edges), while both workers run watches.

    Before the change each process coalesced its own watches only, so two workers asked for the
    board twice an interval (about 24 requests in the 6 s window instead of at most 13)."""
    live = timedelta(milliseconds=500)
    window = 6.0
    path, originals = cloned(tmp_path, 12, base=97_100_000, since=SECOND_HALF_T)
    fixture_ids = list(originals)
    async with running_provider([path], t=SECOND_HALF_T) as provider:
        # Reconciles far apart: at a reconcile turn a watch asks `fixtures/multi`, not the board.
        config = scale_settings(settings, provider.url, live=live, heartbeat=timedelta(seconds=5)).model_copy(
            update={"reconcile_interval": timedelta(seconds=60)}
        )
        async with worker_processes(config, tmp_path, 2) as workers:
            await start_matches(temporal_client, config, fixture_ids)
            await until_watched(workers, fixture_ids, within=60)
            await until_quiet(workers, quiet=2 * live.total_seconds(), within=30)
            await provider.reset_stats()
            started = time.monotonic()
            await asyncio.sleep(window)
            requests = await provider.stats()
            elapsed = time.monotonic() - started
            running = [worker.process.returncode is None for worker in workers]
            held = holders(workers)

    assert running == [True, True]
    assert sorted(held) == sorted(fixture_ids)
    watching = [sum(number == worker for number in held.values()) for worker in (0, 1)]
    assert all(watching), f"one worker watched every match: {watching}"
    intervals = elapsed / live.total_seconds()
    boards = requests.get("livescores/inplay", 0)
    assert boards <= math.floor(intervals) + 1, (
        f"{boards} board requests in {elapsed:.1f} s ({intervals:.1f} intervals): {requests}"
    )
    assert boards >= intervals / 2, f"the live matches were hardly polled: {requests}"


async def test_a_worker_killed_during_50_matches_loses_and_doubles_nothing(
    settings: Settings, temporal_client: Client, database_url: str, tmp_path: Path
) -> None:
    """Fifty live matches on two worker processes; one is SIGKILLed mid-second-half. Every match
    whose watch it held is watched again by the survivor within the heartbeat timeout (plus the
    retry's 1 s and a margin for a loaded machine), and every match then plays out to exactly the
    recorded outcome: every event stored once, none retracted, the score and state right.

    Before the change the same held with each worker fetching its own board: this guards the
    takeover against the shared board (a dead worker's board lease, its in-flight batch)."""
    since, kill_at = 5400.0, 6000.0
    heartbeat = timedelta(seconds=3)
    path, originals = cloned(tmp_path, 50, base=97_200_000, since=since)
    fixture_ids = list(originals)
    times = [*line_times([path]), END_OF_RECORDING]
    before_kill = [t for t in times if t < kill_at]
    after_kill = [t for t in times if t >= kill_at]
    async with running_provider([path], t=since) as provider:
        config = scale_settings(settings, provider.url, live=timedelta(milliseconds=200), heartbeat=heartbeat)
        async with worker_processes(config, tmp_path, 2) as (doomed, survivor):
            handles = await start_matches(temporal_client, config, fixture_ids)
            await until_watched([doomed, survivor], fixture_ids, within=60)
            await provider.step_through(before_kill, timeout=60)
            await until_quiet([doomed, survivor], quiet=1.5, within=30)
            held = sorted(fixture for fixture, number in holders([doomed, survivor]).items() if number == 0)
            await doomed.kill()
            killed_at = datetime.now(UTC)
            # The server declares a watch dead after the heartbeat timeout; its retry waits 1 s.
            limit = heartbeat.total_seconds() + 1 + 3
            taken_over: dict[int, float] = {}
            give_up = time.monotonic() + limit + 10
            while len(taken_over) < len(held) and time.monotonic() < give_up:
                for at, fixture, _ in watch_starts(survivor):
                    if fixture in held and at > killed_at and fixture not in taken_over:
                        taken_over[fixture] = (at - killed_at).total_seconds()
                await asyncio.sleep(0.1)
            await provider.step_through(after_kill, timeout=60)
            results = await asyncio.wait_for(asyncio.gather(*(handle.result() for handle in handles)), 90)

    assert len(held) >= 5, f"the killed worker held only {len(held)} of the 50 watches"
    assert sorted(taken_over) == held, f"never watched again: {sorted(set(held) - set(taken_over))}"
    slowest = max(taken_over.values())
    assert slowest < limit, f"a watch was taken over {slowest:.1f} s after the kill: {taken_over}"
    assert {result.state.value for result in results} == {"finished"}
    wrong: dict[int, Any] = {}
    for fixture_id, original in originals.items():
        outcome = outcome_from(original, since)
        stored = await stored_outcome(database_url, fixture_id)
        seen = {
            key: stored[key] for key in ("events", "retracted", "score", "state", "event_entries", "gapless")
        }
        want = {
            "events": sorted(outcome["events"]),
            "retracted": outcome["retracted"],
            "score": outcome["score"],
            "state": "finished",  # the recording's FT, normalised
            "event_entries": [1],
            "gapless": True,
        }
        if seen != want:
            wrong[fixture_id] = {
                "held by the killed worker": fixture_id in held,
                "stored": seen,
                "expected": want,
            }
    assert not wrong, f"{len(wrong)} matches did not end as recorded: {wrong}"
