"""Bench: how the provider client's live-poll coalescing scales with the number of watched matches.

Run: `.venv/bin/python bench/provider_coalescing.py [--sizes 50,500,2000] [--intervals 10] [--interval 2.5]`

For each size N it starts the provider simulator in a child process on a free port (so its CPU is
not counted here), replaying the bundled `recordings/football-three-matches.jsonl` with its three
matches cloned N/3 times under new fixture ids, from mid-match on: N fixtures are in play. N watcher
tasks, one per fixture, each ask the shared `SportMonksClient` for their fixture's live snapshot once
per poll interval, at a random phase, for `--intervals` intervals. Measured:

- upstream `livescores/inplay` requests per interval (the simulator's `/_sim/stats`);
- this process's CPU time per interval (`time.process_time`: HTTP, JSON, normalisation, watchers);
- how long a watcher waits for its snapshot (p50/p99);
- missed polls: a poll that failed, did not find its fixture, or took longer than one interval.

It prints a table and appends a dated section to `bench/results.md`.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
from pydantic import SecretStr

from activities.provider import ProviderError, SportMonksClient
from activities.provider.config import DEFAULT_INCLUDES
from devkit.devstack.ports import free_port
from devkit.simulators.provider.recording_file import read_recording
from scoreline.logging import configure_logging
from scoreline.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
RECORDING = ROOT / "recordings" / "football-three-matches.jsonl"
RESULTS = ROOT / "bench" / "results.md"
GOAL = "500 live matches on one worker: one upstream request per poll interval, no missed polls"
TOKEN = "bench-token"
LIVE = "livescores/inplay"
# Replay time at which all three bundled matches are in play.
MID_MATCH_T = 3000.0
CLONE_BASE_ID = 95_000_000
SIM_READY_SECONDS = 180.0


@dataclass(frozen=True)
class Result:
    """One size's figures."""

    fixtures: int
    intervals: float
    requests: int
    cpu_seconds: float
    p50_ms: float
    p99_ms: float
    polls: int
    missed: int
    body_bytes: int

    @property
    def requests_per_interval(self) -> float:
        return self.requests / self.intervals

    @property
    def cpu_ms_per_interval(self) -> float:
        return self.cpu_seconds / self.intervals * 1000


def cloned_recording(directory: Path, count: int, window: float) -> Path:
    """The bundled recording's matches cloned to `count` fixtures, from `MID_MATCH_T` to `+window`."""
    lines = [json.loads(line) for line in read_recording(RECORDING).splitlines() if line.strip()]
    header, body = lines[0], lines[1:]
    originals: list[int] = header["fixtures"]
    frames: dict[int, list[dict[str, Any]]] = {fixture_id: [] for fixture_id in originals}
    for line in body:
        if "fixture" not in line:
            continue
        fixture_id, t = line["fixture"]["id"], float(line["t"])
        if t <= MID_MATCH_T:
            frames[fixture_id][:] = [line]  # the state shown at MID_MATCH_T
        elif t <= MID_MATCH_T + window:
            frames[fixture_id].append(line)
    ids = [CLONE_BASE_ID + index for index in range(count)]
    out: list[dict[str, Any]] = []
    for index, clone_id in enumerate(ids):
        for line in frames[originals[index % len(originals)]]:
            fixture = copy.deepcopy(line["fixture"])
            fixture["id"] = clone_id
            fixture["name"] = f"{fixture.get('name', 'Match')} #{index}"
            for relation in ("scores", "events", "periods", "timeline"):
                for item in fixture.get(relation) or ():
                    if isinstance(item, dict) and "fixture_id" in item:
                        item["fixture_id"] = clone_id
            out.append({"t": line["t"], "fixture": fixture})
    out.sort(key=lambda line: line["t"])
    path = directory / f"bench-{count}.jsonl"
    with path.open("w") as handle:
        for line in [{**header, "name": f"bench x{count}", "fixtures": ids}, *out]:
            handle.write(json.dumps(line, separators=(",", ":")) + "\n")
    return path


SIM_SCRIPT = """
import sys
from pathlib import Path
from devkit.simulators.provider.config import ProviderSimConfig
from devkit.simulators.provider.server import run
run(ProviderSimConfig(recordings=(Path(sys.argv[1]),), token=sys.argv[2], port=int(sys.argv[3]), start_in=0))
"""


async def start_simulator(recording: Path, port: int) -> asyncio.subprocess.Process:
    """The simulator in a child process, once it answers `/readyz`."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        SIM_SCRIPT,
        str(recording),
        TOKEN,
        str(port),
        cwd=ROOT,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    deadline = time.monotonic() + SIM_READY_SECONDS
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as probe:
        while time.monotonic() < deadline:
            if process.returncode is not None:
                raise RuntimeError(f"the simulator exited with {process.returncode}")
            try:
                if (await probe.get("/readyz")).status_code == 200:
                    return process
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.2)
    await stop(process)
    raise RuntimeError("the simulator did not become ready")


async def stop(process: asyncio.subprocess.Process) -> None:
    """SIGTERM (the simulator shuts down cleanly on it) and reap."""
    if process.returncode is None:
        process.terminate()
        await process.wait()


async def measure(count: int, intervals: int, interval: float, workdir: Path) -> Result:
    """Run `count` watchers for `intervals` poll intervals against a fresh simulator."""
    recording = cloned_recording(workdir, count, window=intervals * interval + 60)
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    process = await start_simulator(recording, port)
    settings = Settings(
        provider_url=base_url,
        provider_token=SecretStr(TOKEN),
        poll_interval_live=timedelta(seconds=interval),
        provider_timeout=timedelta(seconds=max(5.0, 2 * interval)),
    )
    try:
        async with httpx.AsyncClient(base_url=base_url, timeout=60) as control:
            (await control.post("/_sim/clock", json={"t": MID_MATCH_T})).raise_for_status()
            async with SportMonksClient.from_settings(settings) as client:
                board = await client.live()  # warm the pool and the code paths
                assert len(board.fixtures) == count, (
                    f"expected {count} live fixtures, got {len(board.fixtures)}"
                )
                raw = await control.get(
                    f"/v3/football/{LIVE}", params={"api_token": TOKEN, "include": DEFAULT_INCLUDES}
                )
                await asyncio.sleep(interval)
                (await control.post("/_sim/stats/reset")).raise_for_status()
                latencies, missed, cpu, elapsed = await _watch(client, count, intervals, interval)
            stats = (await control.get("/_sim/stats")).json()["requests"]
    finally:
        await stop(process)
    return Result(
        fixtures=count,
        intervals=elapsed / interval,
        requests=int(stats.get(LIVE, 0)),
        cpu_seconds=cpu,
        p50_ms=statistics.median(latencies) * 1000,
        p99_ms=statistics.quantiles(latencies, n=100)[98] * 1000,
        polls=len(latencies),
        missed=missed,
        body_bytes=len(raw.content),
    )


async def _watch(
    client: SportMonksClient, count: int, intervals: int, interval: float
) -> tuple[list[float], int, float, float]:
    loop = asyncio.get_running_loop()
    latencies: list[float] = []
    missed = 0
    start = loop.time() + 0.05

    async def watcher(fixture_id: int) -> None:
        nonlocal missed
        phase = random.uniform(0, interval)
        for poll in range(intervals):
            await asyncio.sleep(max(0.0, start + poll * interval + phase - loop.time()))
            began = time.perf_counter()
            try:
                snapshot = await client.live_snapshot(fixture_id)
            except ProviderError:
                snapshot = None
            waited = time.perf_counter() - began
            latencies.append(waited)
            if snapshot is None or waited > interval:
                missed += 1

    cpu, wall = time.process_time(), time.perf_counter()
    await asyncio.gather(*(watcher(CLONE_BASE_ID + index) for index in range(count)))
    return latencies, missed, time.process_time() - cpu, time.perf_counter() - wall


def table(results: list[Result], interval: float) -> str:
    """The figures as a markdown table."""
    rows = [
        "| watched fixtures | upstream requests / interval | CPU ms / interval (% of a core) "
        "| watcher wait p50 / p99 ms | missed polls | inplay body |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for result in results:
        share = result.cpu_ms_per_interval / (interval * 1000) * 100
        rows.append(
            f"| {result.fixtures:,} | {result.requests_per_interval:.2f} ({result.requests} in "
            f"{result.intervals:.1f}) | {result.cpu_ms_per_interval:.0f} ({share:.0f} %) "
            f"| {result.p50_ms:.1f} / {result.p99_ms:.0f} | {result.missed} of {result.polls:,} "
            f"| {result.body_bytes / 1e6:.1f} MB |"
        )
    return "\n".join(rows)


def verdict(results: list[Result]) -> str:
    """Whether the 500-match goal held."""
    at_500 = [result for result in results if result.fixtures == 500]
    if not at_500:
        return "Goal not measured (no 500-fixture run)."
    result = at_500[0]
    ok = result.requests <= round(result.intervals) + 1 and result.missed == 0
    return (
        f"Goal {'met' if ok else 'NOT met'} at 500: {result.requests_per_interval:.2f} upstream requests "
        f"per interval, {result.missed} missed polls."
    )


def append_results(results: list[Result], interval: float, intervals: int) -> None:
    """Append a dated section to `bench/results.md`."""
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    section = "\n".join(
        [
            f"## {now} — provider client: live-poll coalescing (`bench/provider_coalescing.py`)",
            "",
            f"Goal: *{GOAL}*.",
            "",
            f"Setup: poll interval {interval:g} s, {intervals} intervals; the three bundled matches "
            "cloned to N fixtures in play (full includes), simulator in a child process; one worker "
            f"process, Python {platform.python_version()}, {os.cpu_count()} CPUs, "
            f"load average {os.getloadavg()[0]:.1f} at the end. CPU is this process only "
            "(client, JSON decoding, normalisation, watcher tasks).",
            "",
            table(results, interval),
            "",
            verdict(results),
            "",
        ]
    )
    existing = RESULTS.read_text() if RESULTS.exists() else "# Bench results\n"
    RESULTS.write_text(existing.rstrip("\n") + "\n\n" + section)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", default="50,500,2000", help="Comma-separated numbers of watched fixtures.")
    parser.add_argument("--intervals", type=int, default=10, help="Poll intervals to run per size.")
    default_interval = (Settings().poll_interval_live or timedelta(seconds=2.5)).total_seconds()
    parser.add_argument("--interval", type=float, default=default_interval, help="Poll interval, seconds.")
    parser.add_argument("--no-write", action="store_true", help="Do not append to bench/results.md.")
    args = parser.parse_args()
    # Request and breaker lines are a few per interval; keep them out of the table's way.
    configure_logging("warning", "console")

    results: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="scoreline-bench-") as workdir:
        for size in (int(part) for part in args.sizes.split(",")):
            print(f"measuring {size} watched fixtures...", flush=True)
            results.append(await measure(size, args.intervals, args.interval, Path(workdir)))
    print()
    print(table(results, args.interval))
    print()
    print(verdict(results))
    if not args.no_write:
        append_results(results, args.interval, args.intervals)
        print(f"appended to {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    asyncio.run(main())
