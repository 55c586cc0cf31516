"""Partner webhooks: one `scoreline feeds` process delivering to 50 receivers on 127.0.0.1.

Setup: a fresh migrated database, the real `scoreline feeds` process (child), 50 endpoints of one
partner, each a port of one receiver child process (a minimal asyncio HTTP/1.1 server: its CPU is
not the feeds process's). Matches commit the way the ingest does (entries, board, outbox row and
NOTIFY in one transaction). A receiver measures each delivery's commit → arrival time from the
body's `committed_at` (same machine, same clock).

Phases:
1. latency: a steady trickle of changes, no delay: commit → receiver p95 (goal ≤ 100 ms).
2. throughput: a burst of changes over many matches: deliveries per second from the first commit
   to the last arrival (goal ≥ 2,000/s).
3. one receiver answers 500 for `--fail-seconds` (the issue's 10 minutes: `--fail-seconds 600`)
   while the trickle goes on: the other 49's commit → arrival p95 (goal: unchanged from phase 1).

Prints its figures (it does not write bench/results.md) and ends with one line
`webhooks: receivers=N p95_ms=X per_s=X others_lag_p95_ms=X`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

from bench._common import (
    bench_database,
    bench_redis,
    cancel_on_sigterm,
    machine_note,
    percentile,
    wait_until_quiet,
)
from devkit.devstack.ports import free_port
from scoreline.db.engine import create_engine
from scoreline.feeds.partners import create_partner
from scoreline.webhooks.endpoints import create_endpoint
from scoreline.webhooks.urls import UrlPolicy
from tests.feeds.partner_matches import match_in
from tests.outbox.writer import MatchWriter

ROOT = Path(__file__).resolve().parent.parent
LEAGUE = 8
FIRST_MATCH = 97000001
BURST_MATCHES = 20
BURST_COMMITS = 10
"""Per match, one entry each: 20 x 10 x 50 receivers = 10,000 deliveries in the burst."""


# --- the receiver child ----------------------------------------------------------------------


class Receivers:
    """In the child: every receiver port's latencies; the control port reads and steers them."""

    def __init__(self) -> None:
        self.latencies: dict[int, list[float]] = {}
        self.failing: set[int] = set()
        self.count = 0
        self.last_arrival = 0.0

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, port: int) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                body = await reader.readexactly(length) if length else b""
                status, answer = self.answer(head, body, port)
                writer.write(
                    b"HTTP/1.1 %d X\r\ncontent-length: %d\r\ncontent-type: application/json\r\n\r\n%s"
                    % (status, len(answer), answer)
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    def answer(self, head: bytes, body: bytes, port: int) -> tuple[int, bytes]:
        path = head.split(b" ", 2)[1]
        if path == b"/stats":
            return 200, json.dumps(
                {"latencies": self.latencies, "count": self.count, "last": self.last_arrival}
            ).encode()
        if path.startswith(b"/fail"):
            self.failing = {int(p) for p in body.decode().split(",") if p}
            return 200, b"{}"
        if path == b"/reset":
            self.latencies, self.count = {}, 0
            return 200, b"{}"
        if port in self.failing:
            return 500, b'{"error":"down"}'
        now = time.time()
        change = json.loads(body)
        committed = datetime.fromisoformat(change["committed_at"]).timestamp()
        self.latencies.setdefault(port, []).append(now - committed)
        self.count += 1
        self.last_arrival = now
        return 200, b"{}"


async def receivers_main(ports: list[int], control: int) -> None:
    state = Receivers()
    servers = [
        await asyncio.start_server(lambda r, w, p=port: state.serve(r, w, p), "127.0.0.1", port)
        for port in [*ports, control]
    ]
    print("ready", flush=True)
    await asyncio.gather(*(server.serve_forever() for server in servers))


# --- the bench -------------------------------------------------------------------------------


async def _control(client: httpx.AsyncClient, path: str, body: str = "") -> dict[str, Any]:
    answer = await client.post(path, content=body)
    result: dict[str, Any] = answer.json()
    return result


async def _trickle(writers: list[MatchWriter], seconds: float, rate: float) -> int:
    """Commit one-entry changes round-robin over the matches at `rate` per second."""
    commits = 0
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        await writers[commits % len(writers)].change(entries=1)
        commits += 1
        await asyncio.sleep(max(0.0, started + commits / rate - time.monotonic()))
    return commits


async def _drained(client: httpx.AsyncClient, expected: int, within: float) -> dict[str, Any]:
    deadline = time.monotonic() + within
    while True:
        stats = await _control(client, "/stats")
        if stats["count"] >= expected or time.monotonic() > deadline:
            return stats
        await asyncio.sleep(0.1)


def _p95_ms(latencies: dict[str, list[float]], skip: frozenset[int] = frozenset()) -> float:
    values = [v for port, vs in latencies.items() if int(port) not in skip for v in vs]
    return percentile(values, 95) * 1000


async def measure(
    receivers: int, trickle_seconds: float, rate: float, fail_seconds: float
) -> dict[str, float]:
    cancel_on_sigterm()
    chosen: set[int] = set()
    while len(chosen) < receivers + 1:  # the kernel may offer one free port twice
        chosen.add(free_port())
    *ports, control = sorted(chosen)
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        __file__,
        "--receivers-child",
        json.dumps({"ports": ports, "control": control}),
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
    )
    assert child.stdout is not None
    await child.stdout.readline()
    async with bench_database("scoreline_bench_webhooks") as database_url, bench_redis() as redis_url:
        engine = create_engine(database_url, pool_size=4)
        await create_partner(engine, "bench", [LEAGUE])
        for port in ports:
            await create_endpoint(
                engine, "bench", f"http://127.0.0.1:{port}/hook", UrlPolicy(development=True)
            )
        writers = [await match_in(engine, FIRST_MATCH + i, LEAGUE) for i in range(BURST_MATCHES)]
        with tempfile.TemporaryDirectory(prefix="scoreline-bench-webhooks-") as data_dir:
            env = {
                **os.environ,
                "DATABASE_URL": database_url,
                "REDIS_URL": redis_url,
                "SCORELINE_DATA_DIR": data_dir,
                "FEEDS_METRICS_ADDRESS": "",
                "LOG_LEVEL": "warning",
                "LOG_FORMAT": "json",
            }
            feeds = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "scoreline", "feeds", cwd=ROOT, env=env
            )
            try:
                async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{control}", timeout=30) as client:
                    # 0. warm-up: one change per match, all delivered, so the feeds process is up
                    # (its start takes seconds on a busy machine: a fixed sleep let the first
                    # trickle commits wait for it and counted that wait as delivery latency).
                    await asyncio.gather(*(writer.change(entries=1) for writer in writers))
                    stats = await _drained(client, len(writers) * receivers, 120)
                    print(f"warm-up: {stats['count']}/{len(writers) * receivers} delivered", flush=True)
                    await _control(client, "/reset")
                    # 1. latency
                    commits = await _trickle(writers, trickle_seconds, rate)
                    stats = await _drained(client, commits * receivers, 30)
                    p95 = _p95_ms(stats["latencies"])
                    print(
                        f"latency: {commits} changes x {receivers} receivers "
                        f"({stats['count']}/{commits * receivers} delivered), p95 {p95:.1f} ms",
                        flush=True,
                    )
                    await _control(client, "/reset")
                    # 2. throughput
                    started = time.time()
                    for _ in range(BURST_COMMITS):
                        await asyncio.gather(*(writer.change(entries=1) for writer in writers))
                    committed = time.time()
                    at_commit = (await _control(client, "/stats"))["count"]
                    expected = BURST_COMMITS * len(writers) * receivers
                    stats = await _drained(client, expected, 120)
                    per_s = stats["count"] / max(stats["last"] - started, 1e-6)
                    # Delivery cannot outrun the commits: once they are all in, what was left
                    # drains at the deliverer's own pace.
                    drain = (stats["count"] - at_commit) / max(stats["last"] - committed, 1e-6)
                    print(
                        f"throughput: {stats['count']}/{expected} deliveries, {per_s:.0f}/s from the "
                        f"first commit (its {BURST_COMMITS * len(writers)} commits took "
                        f"{committed - started:.2f} s; the {expected - at_commit} left then: {drain:.0f}/s)",
                        flush=True,
                    )
                    await _control(client, "/reset")
                    # 3. one receiver down
                    await _control(client, "/fail", str(ports[0]))
                    commits = await _trickle(writers, fail_seconds, rate)
                    stats = await _drained(client, commits * (receivers - 1), 30)
                    others = _p95_ms(stats["latencies"], frozenset({ports[0]}))
                    print(
                        f"one receiver answering 500 for {fail_seconds:.0f} s: others' p95 {others:.1f} ms "
                        f"({stats['count']}/{commits * (receivers - 1)} delivered)",
                        flush=True,
                    )
                    await _control(client, "/fail", "")
            finally:
                feeds.terminate()
                await feeds.wait()
                child.terminate()
                await child.wait()
                await engine.dispose()
    return {"p95_ms": p95, "per_s": per_s, "others_lag_p95_ms": others}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--receivers", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=10.0, help="Length of the latency trickle.")
    parser.add_argument(
        "--rate", type=float, default=10.0, help="Changes committed per second in the trickles."
    )
    parser.add_argument("--fail-seconds", type=float, default=30.0, help="How long one receiver answers 500.")
    parser.add_argument("--no-wait", action="store_true", help="Do not wait for running test suites to end.")
    parser.add_argument("--receivers-child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.receivers_child is not None:
        options = json.loads(args.receivers_child)
        asyncio.run(receivers_main(options["ports"], options["control"]))
        return
    if not 1 <= args.receivers <= 200:
        sys.exit("--receivers is 1 to 200")
    if not args.no_wait and not wait_until_quiet():
        sys.exit("gave up waiting for a quiet machine")
    figures = asyncio.run(measure(args.receivers, args.seconds, args.rate, args.fail_seconds))
    print(machine_note())
    print(
        f"webhooks: receivers={args.receivers} p95_ms={figures['p95_ms']:.1f} per_s={figures['per_s']:.0f} "
        f"others_lag_p95_ms={figures['others_lag_p95_ms']:.1f}"
    )


if __name__ == "__main__":
    main()
