"""Bench: partner feed requests per second from one API process, answered 304 and 200.

Run: `.venv/bin/python bench/feeds.py [--seconds 10] [--connections 32] [--no-wait]`

Setup: a fresh migrated database and a Redis database of its own on the tests' servers; one match
with 40 events (a typical finished football match's document, about 12 kB of JSON), published the
way the builder publishes it (Postgres, then Redis); one partner key. The API is the production
entry point, `python -m scoreline api`, in a child process (one uvicorn worker, so one process on
one core). The load comes from a second child process: `--connections` HTTP/1.1 keep-alive
connections on plain asyncio streams, each sending its next request when the previous answer is
in. A hand-written client rather than httpx, because on a two-core machine the client's own CPU is
what limits the figure otherwise (httpx costs several times the server's work per request).

Phases, `--seconds` each after a one-second warm-up: conditional GETs with the current ETag (304,
the partner polling loop), then full GETs with gzip, then full GETs without. For each: answers per
second, latency percentiles, unexpected statuses, and the CPU of the API and load processes.

It prints a table and appends a dated section to `bench/results.md`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import httpx
import redis.asyncio as aioredis

from bench._common import (
    append_section,
    bench_database,
    bench_redis,
    cancel_on_sigterm,
    machine_note,
    ms,
    percentile,
    process_cpu,
    wait_until_quiet,
)
from devkit.devstack.ports import free_port
from scoreline.db.engine import create_engine
from scoreline.feeds.build import build_document
from scoreline.feeds.keys import MatchDoc
from scoreline.feeds.partners import create_partner
from scoreline.feeds.store import store_if_newer
from tests.feeds.changes import PREMIER_LEAGUE
from tests.readmodel.rows import MatchLog

GOAL = "feeds: ≥ 3,000 conditional GETs/s answered 304 by one API process"
GOAL_RATE = 3000.0
SCRIPT = Path(__file__).resolve()
ROOT = SCRIPT.parent.parent
FIXTURE_ID = 81000001
EVENTS = 40
WARM_UP = 1.0
API_READY_SECONDS = 60.0
MEASURING = "measuring"
"""What the load process prints when its measured window starts (after its warm-up)."""


@dataclass(frozen=True)
class Phase:
    name: str
    expected: int
    headers: dict[str, str]


@dataclass(frozen=True)
class Figures:
    phase: Phase
    answers: int
    seconds: float
    statuses: dict[int, int]
    latencies: list[float]
    api_cpu: float
    load_cpu: float
    body_bytes: int

    @property
    def rate(self) -> float:
        return self.statuses.get(self.phase.expected, 0) / self.seconds


# --- the load generator (child process) -------------------------------------------------------


async def _connection(
    port: int, request: bytes, until: float, latencies: list[float], statuses: Counter[int]
) -> int:
    """One keep-alive connection sending `request` back to back; returns the body bytes of the last answer."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    size = 0
    try:
        while time.monotonic() < until:
            started = time.perf_counter()
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            if length:
                await reader.readexactly(length)
            latencies.append(time.perf_counter() - started)
            statuses[int(head[9:12])] += 1
            size = length
    finally:
        writer.close()
    return size


async def load(port: int, connections: int, seconds: float, headers: dict[str, str]) -> None:
    """Drive the API for `seconds` (after a warm-up) and print one JSON line of what happened."""
    lines = [f"GET /v1/feeds/match/{FIXTURE_ID} HTTP/1.1", "Host: 127.0.0.1"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    request = ("\r\n".join(lines) + "\r\n\r\n").encode()
    warm: list[float] = []
    await asyncio.gather(
        *(_connection(port, request, time.monotonic() + WARM_UP, warm, Counter()) for _ in range(connections))
    )
    latencies: list[float] = []
    statuses: Counter[int] = Counter()
    print(MEASURING, flush=True)
    started = time.monotonic()
    sizes = await asyncio.gather(
        *(_connection(port, request, started + seconds, latencies, statuses) for _ in range(connections))
    )
    took = time.monotonic() - started
    print(
        json.dumps({"seconds": took, "statuses": statuses, "latencies": latencies, "body_bytes": max(sizes)})
    )


# --- the run ---------------------------------------------------------------------------------


async def _seed(database_url: str, redis_url: str) -> tuple[str, str]:
    """One match with `EVENTS` events, published; returns a partner key and the document's ETag."""
    engine = create_engine(database_url, pool_size=2)
    redis = aioredis.Redis.from_url(redis_url)
    try:
        log = await MatchLog.create(engine, FIXTURE_ID, state="finished")
        for number in range(EVENTS):
            kind = "goal" if number % 10 == 0 else "substitution" if number % 3 else "yellow_card"
            await log.event(
                500_000 + number, kind, 2 + number * 2, player=(9000 + number, f"Player {number}")
            )
        await log.board("finished", 3, 1, minute=90)
        result = await build_document(engine, MatchDoc(FIXTURE_ID))
        assert result is not None
        await store_if_newer(redis, result[0])
        _, api_key = await create_partner(engine, "bench-partner", [PREMIER_LEAGUE])
        return api_key, result[0].etag
    finally:
        await redis.aclose()
        await engine.dispose()


async def _start_api(
    database_url: str, redis_url: str, port: int, data_dir: Path
) -> asyncio.subprocess.Process:
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "SCORELINE_DATA_DIR": str(data_dir),
        "LOG_LEVEL": "warning",
        "LOG_FORMAT": "json",
    }
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "scoreline",
        "api",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        cwd=ROOT,
        env=env,
    )
    deadline = time.monotonic() + API_READY_SECONDS
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as probe:
        while time.monotonic() < deadline:
            if process.returncode is not None:
                raise RuntimeError(f"the API exited with {process.returncode}")
            try:
                if (await probe.get("/healthz")).status_code == 200:
                    return process
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.2)
    process.terminate()
    await process.wait()
    raise RuntimeError("the API did not start")


async def _phase(phase: Phase, port: int, api_pid: int, connections: int, seconds: float) -> Figures:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(SCRIPT),
        "--load",
        json.dumps({"port": port, "connections": connections, "seconds": seconds, "headers": phase.headers}),
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
    )
    assert process.stdout is not None
    if (await process.stdout.readline()).strip() != MEASURING.encode():
        raise RuntimeError("the load generator did not start")
    api_before = process_cpu([api_pid]).get(api_pid, 0.0)
    load_before = process_cpu([process.pid]).get(process.pid, 0.0)
    await asyncio.sleep(seconds)
    api_after = process_cpu([api_pid]).get(api_pid, 0.0)
    load_after = process_cpu([process.pid]).get(process.pid, load_before)
    output, _ = await process.communicate()
    if process.returncode != 0:
        raise RuntimeError(f"the load generator failed ({process.returncode})")
    result = json.loads(output)
    statuses = {int(status): count for status, count in result["statuses"].items()}
    return Figures(
        phase=phase,
        answers=sum(statuses.values()),
        seconds=result["seconds"],
        statuses=statuses,
        latencies=result["latencies"],
        api_cpu=(api_after - api_before) / seconds,
        load_cpu=(load_after - load_before) / seconds,
        body_bytes=int(result["body_bytes"]),
    )


async def measure(connections: int, seconds: float) -> list[Figures]:
    cancel_on_sigterm()
    async with bench_database("scoreline_bench_feeds") as database_url, bench_redis() as redis_url:
        api_key, etag = await _seed(database_url, redis_url)
        port = free_port()
        with tempfile.TemporaryDirectory(prefix="scoreline-bench-feeds-") as data_dir:
            api = await _start_api(database_url, redis_url, port, Path(data_dir))
            try:
                phases = [
                    Phase(
                        "conditional GET, If-None-Match current → 304",
                        304,
                        {"X-Api-Key": api_key, "If-None-Match": etag},
                    ),
                    Phase(
                        "GET, Accept-Encoding: gzip → 200",
                        200,
                        {"X-Api-Key": api_key, "Accept-Encoding": "gzip"},
                    ),
                    Phase("GET, identity → 200", 200, {"X-Api-Key": api_key}),
                ]
                return [await _phase(phase, port, api.pid, connections, seconds) for phase in phases]
            finally:
                api.terminate()
                await api.wait()


def report(figures: list[Figures], connections: int, seconds: float) -> list[str]:
    conditional = figures[0]
    met = conditional.rate >= GOAL_RATE
    lines = [
        f"## {datetime.now(UTC):%Y-%m-%d %H:%M} UTC — partner feeds: 304s and 200s per second, one API process (`bench/feeds.py`)",
        "",
        f"Goal: *{GOAL}*.",
        "",
        "Setup: `python -m scoreline api` (one uvicorn process, h11, asyncio loop, the whole app with its middleware) "
        f"in a child process; a load process with {connections} HTTP/1.1 keep-alive connections on plain asyncio "
        f"streams, each sending its next request as soon as the answer is in; {seconds:g} s per phase after a "
        f"{WARM_UP:g} s warm-up. Document `match/{FIXTURE_ID}`: {EVENTS} events, published to Postgres and Redis "
        "by the builder's code; one partner key. Postgres and Redis on this machine. "
        f"{machine_note()}.",
        "",
        "| phase | answers / s | p50 ms | p99 ms | other statuses | body bytes | API CPU (% of a core) | load CPU |",
        "|---|---:|---:|---:|---|---:|---:|---:|",
    ]
    for item in figures:
        others = {status: count for status, count in item.statuses.items() if status != item.phase.expected}
        lines.append(
            f"| {item.phase.name} | **{item.rate:,.0f}** | {ms(percentile(item.latencies, 50))} | "
            f"{ms(percentile(item.latencies, 99))} | {others or 'none'} | {item.body_bytes:,} | "
            f"{item.api_cpu * 100:.0f} | {item.load_cpu * 100:.0f} |"
        )
    lines += [
        "",
        f"Goal {'met' if met else 'not met'}: {conditional.rate:,.0f} conditional GETs/s answered 304 "
        f"against {GOAL_RATE:,.0f}.",
    ]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--no-wait", action="store_true", help="Do not wait for running test suites to end.")
    parser.add_argument("--load", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.load is not None:
        options = json.loads(args.load)
        asyncio.run(load(options["port"], options["connections"], options["seconds"], options["headers"]))
        return
    if not args.no_wait and not wait_until_quiet():
        sys.exit("gave up waiting for a quiet machine")
    figures = asyncio.run(measure(args.connections, args.seconds))
    lines = report(figures, args.connections, args.seconds)
    print("\n".join(lines))
    append_section(lines)


if __name__ == "__main__":
    main()
