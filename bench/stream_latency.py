"""Bench: from a committed change to a live screen, over SSE and WebSocket, with 1,000 clients.

Run: `.venv/bin/python bench/stream_latency.py [--clients 1000] [--matches 1] [--changes 60] [--rate 4]`

Goal (design §5, §7): *live screens: commit → screen within 0.5 s*.

Setup: the API (`api.app.create_app`, production settings: outbox safety read 5 s, Redis relay on)
in a child process served by uvicorn, so its CPU is its own; a fresh migrated database and a Redis
database of its own on the tests' servers. This process opens the clients — half SSE
(`/v1/matches/{id}/stream`), half WebSocket (`/v1/ws`, one `match:{id}` channel each), spread
evenly over `--matches` matches — as bare asyncio protocols that only stamp the arrival time of each
version (no JSON parsing, no client library), so 1,000 of them cost this process little. Server
WebSocket pings are off for the run (the bare clients do not answer them).

Then it commits `--changes` changes at `--rate` per second, round-robin over the matches, each the
way the ingest commits one (log entry, scoreboard, outbox row and NOTIFY in one transaction), and
stamps each when its COMMIT returned.

Latency of a version at a client = when the first message carrying that version (or a later one:
the hub coalesces changes that arrive together) reached the client's socket - when its COMMIT
returned. Wall clock, one machine. It prints a table and appends a dated section to
`bench/results.md`.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import re
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import httpx

from bench._common import (
    CpuMeter,
    append_section,
    bench_database,
    bench_redis,
    busy_with,
    cancel_on_sigterm,
    machine_note,
    ms,
    percentile,
    wait_until_quiet,
)
from devkit.devstack.ports import free_port
from scoreline.db.engine import create_engine
from scoreline.logging import configure_logging
from tests.outbox.writer import MatchWriter

GOAL = "live screens: commit → screen within 0.5 s (design §5)"
GOAL_SECONDS = 0.5
SCRIPT = Path(__file__).resolve()
FIRST_MATCH = 91_000_001
CONNECT_BATCH = 100
"""Clients opened at once; the next batch waits until these have their first value."""
SETTLE_SECONDS = 60.0
"""How long the clients may take to receive the last version after the last commit."""
_VERSION = re.compile(rb'"version":(\d+),"previous"')
"""The top-level version of a `LiveValue` (the match view inside has no `previous` after it)."""


# --- the API, in its own process ---------------------------------------------------------------


def serve_api(port: int, database_url: str, redis_url: str) -> None:
    """Run the API on `port` until terminated (the child process's whole job)."""
    import uvicorn

    from api.app import create_app
    from scoreline.settings import Settings

    configure_logging("warning", "console")
    # Every client of the bench comes from 127.0.0.1: the per-address cap would refuse all but
    # the first hundred, and the process cap is what a larger run is about.
    settings = Settings(
        database_url=database_url,
        redis_url=redis_url,
        log_level="warning",
        live_max_connections=10_000_000,
        live_max_connections_per_client=10_000_000,
    )
    config = uvicorn.Config(
        create_app(settings),
        host="127.0.0.1",
        port=port,
        log_config=None,
        access_log=False,
        backlog=4096,
        ws_ping_interval=None,
    )
    asyncio.run(uvicorn.Server(config).serve())


async def start_api(database_url: str, redis_url: str) -> tuple[asyncio.subprocess.Process, int]:
    port = free_port()
    process = await asyncio.create_subprocess_exec(
        sys.executable, str(SCRIPT), "--serve", str(port), database_url, redis_url, cwd=SCRIPT.parent.parent
    )
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as probe:
        for _ in range(300):
            if process.returncode is not None:
                raise RuntimeError(f"the API exited with {process.returncode}")
            try:
                if (await probe.get("/healthz")).status_code == 200:
                    return process, port
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.1)
    process.terminate()
    raise RuntimeError("the API did not start")


# --- bare clients ------------------------------------------------------------------------------


class Client(asyncio.Protocol):
    """One connection that records (version, arrival time) for every new version it is sent."""

    def __init__(self, kind: str, fixture_id: int) -> None:
        self.kind = kind
        self.fixture_id = fixture_id
        self.received: list[tuple[int, float]] = []
        self.ready = asyncio.get_running_loop().create_future()
        self.finished = asyncio.get_running_loop().create_future()
        """Set once the version `target` (the last the run commits for this match) arrived."""
        self.target: int | None = None
        self.transport: asyncio.Transport | None = None
        self._tail = b""
        self._upgraded = kind == "sse"

    def itself(self) -> Client:
        """The protocol factory `create_connection` wants, for a client made beforehand."""
        return self

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        if self.kind == "sse":
            path = f"/v1/matches/{self.fixture_id}/stream"
            transport.write(
                f"GET {path} HTTP/1.1\r\nHost: bench\r\nAccept: text/event-stream\r\n\r\n".encode()
            )
        else:
            key = base64.b64encode(os.urandom(16)).decode()
            transport.write(
                (
                    "GET /v1/ws HTTP/1.1\r\nHost: bench\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
                ).encode()
            )

    def data_received(self, data: bytes) -> None:
        now = time.time()
        if not self._upgraded:
            self._tail += data
            if b"\r\n\r\n" not in self._tail:
                return
            if not self._tail.startswith(b"HTTP/1.1 101"):
                self.ready.set_exception(RuntimeError(self._tail[:80].decode(errors="replace")))
                return
            self._upgraded = True
            data = self._tail.split(b"\r\n\r\n", 1)[1]
            self._tail = b""
            assert self.transport is not None
            self.transport.write(_text_frame(f'{{"op":"subscribe","channels":["match:{self.fixture_id}"]}}'))
        window = self._tail + data
        last = self.received[-1][0] if self.received else -1
        for found in _VERSION.finditer(window):
            version = int(found.group(1))
            if version > last:
                self.received.append((version, now))
                last = version
        self._tail = window[-64:]
        if self.received and not self.ready.done():
            self.ready.set_result(None)
        if self.target is not None and last >= self.target and not self.finished.done():
            self.finished.set_result(None)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.ready.done():
            self.ready.set_exception(ConnectionError(f"closed before the first value: {exc}"))


def _text_frame(text: str) -> bytes:
    """One masked (client-to-server frames must be) WebSocket text frame, under 126 bytes."""
    payload = text.encode()
    mask = os.urandom(4)
    masked = bytes(byte ^ mask[i % 4] for i, byte in enumerate(payload))
    return bytes([0x81, 0x80 | len(payload)]) + mask + masked


async def connect_clients(port: int, count: int, matches: Sequence[int]) -> list[Client]:
    loop = asyncio.get_running_loop()
    clients: list[Client] = []
    for start in range(0, count, CONNECT_BATCH):
        batch = [
            Client("sse" if number % 2 == 0 else "ws", matches[number % len(matches)])
            for number in range(start, min(start + CONNECT_BATCH, count))
        ]
        for client in batch:
            await loop.create_connection(client.itself, "127.0.0.1", port)
        async with asyncio.timeout(60):
            await asyncio.gather(*(client.ready for client in batch))
        clients += batch
    return clients


# --- the run -----------------------------------------------------------------------------------


@dataclass
class Run:
    clients: list[Client]
    commits: dict[tuple[int, int], float]
    seconds: float
    cpu: dict[str, float]
    rate: float
    disturbed: list[str] = field(default_factory=list)

    def latencies(self, kind: str | None = None) -> list[float]:
        """Per client and committed version of its match: first arrival at or after it - commit."""
        found: list[float] = []
        for client in self.clients:
            if kind is not None and client.kind != kind:
                continue
            for (fixture_id, version), committed in self.commits.items():
                if fixture_id != client.fixture_id:
                    continue
                arrival = next((t for v, t in client.received if v >= version), None)
                if arrival is not None:
                    found.append(arrival - committed)
        return found

    def missing(self) -> int:
        """Client-version pairs never delivered."""
        return sum(
            1
            for client in self.clients
            for (fixture_id, version) in self.commits
            if fixture_id == client.fixture_id and not any(v >= version for v, _ in client.received)
        )


async def measure(clients: int, matches: int, changes: int, rate: float) -> Run:
    fixtures = [FIRST_MATCH + number for number in range(matches)]
    async with bench_database("scoreline_bench_stream") as database_url, bench_redis() as redis_url:
        engine = create_engine(database_url, pool_size=2)
        writers = [await MatchWriter.create(engine, fixture_id) for fixture_id in fixtures]
        for writer in writers:
            await writer.change()
        api, port = await start_api(database_url, redis_url)
        connected: list[Client] = []
        try:
            connected = await connect_clients(port, clients, fixtures)
            print(f"{len(connected)} clients connected", flush=True)
            meter = CpuMeter({"api": [api.pid], "bench": [os.getpid()]}, database_url)
            await meter.start()
            for client in connected:
                writer = writers[fixtures.index(client.fixture_id)]
                client.target = writer.version + len(
                    range(fixtures.index(client.fixture_id), changes, matches)
                )
            started = time.monotonic()
            commits: dict[tuple[int, int], float] = {}
            for number in range(changes):
                writer = writers[number % len(writers)]
                due = started + number / rate
                await asyncio.sleep(max(0.0, due - time.monotonic()))
                version = await writer.change(goal="home" if number % 10 == 9 else None)
                commits[(writer.fixture_id, version)] = time.time()
            await asyncio.wait([client.finished for client in connected], timeout=SETTLE_SECONDS)
            seconds = time.monotonic() - started
            cpu = await meter.used()
            return Run(connected, commits, seconds, cpu, rate, busy_with())
        finally:
            for client in connected:
                if client.transport is not None:
                    client.transport.close()
            api.terminate()
            await api.wait()
            await engine.dispose()


# --- report ------------------------------------------------------------------------------------


def table(run: Run) -> str:
    lines = [
        "| commit → client has it | clients | samples | p50 ms | p95 ms | p99 ms | max ms |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for label, kind in (("SSE", "sse"), ("WebSocket", "ws"), ("**all**", None)):
        values = run.latencies(kind)
        count = sum(1 for client in run.clients if kind is None or client.kind == kind)
        lines.append(
            f"| {label} | {count:,} | {len(values):,} | {ms(percentile(values, 50))} | "
            f"{ms(percentile(values, 95))} | {ms(percentile(values, 99))} | {ms(max(values)) if values else '-'} |"
        )
    return "\n".join(lines)


def details(run: Run) -> list[str]:
    messages = [len(client.received) - 1 for client in run.clients]
    share = {role: seconds / run.seconds * 100 for role, seconds in run.cpu.items()}
    sent = sum(messages)
    return [
        f"{len(run.commits)} commits at {run.rate:g}/s over {len({f for f, _ in run.commits})} match(es); "
        f"{sent:,} messages reached the clients after their first value "
        f"({percentile([float(m) for m in messages], 50):.0f} per client at the median, for "
        f"{len(run.commits) // max(1, len({f for f, _ in run.commits}))} commits per match: fewer means "
        f"changes that arrived together were coalesced); {run.missing()} client-version pairs never delivered.",
        f"CPU over the run, % of one core: API process {share.get('api', 0):.0f}, Postgres "
        f"{share.get('postgres', 0):.0f}, this process (clients and writer) {share.get('bench', 0):.0f}; "
        f"whole machine {share.get('machine', 0):.0f} of {(os.cpu_count() or 1) * 100}.",
        *(
            [f"Note: a test run (pytest, pids {', '.join(run.disturbed)}) was running: a shared machine."]
            if run.disturbed
            else []
        ),
    ]


def verdict(run: Run) -> str:
    values = run.latencies()
    if not values:
        return "Goal not measured (no version reached a client)."
    p99 = percentile(values, 99)
    met = p99 <= GOAL_SECONDS and run.missing() == 0
    return (
        f"Goal {'met' if met else 'NOT met'}: commit → SSE/WebSocket client p99 = {ms(p99)} ms against "
        f"{GOAL_SECONDS * 1000:.0f} ms with {len(run.clients):,} clients connected, "
        f"{run.missing()} deliveries missing."
    )


def append_results(run: Run, matches: int) -> None:
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    append_section(
        [
            f"## {now} — live screens: commit → SSE / WebSocket client (`bench/stream_latency.py`)",
            "",
            f"Goal: *{GOAL}*.",
            "",
            f"Setup: the API in a child process (uvicorn, production live settings, Redis relay on); "
            f"{len(run.clients):,} clients in the bench process, half SSE and half WebSocket, on "
            f"{matches} match(es), as bare asyncio protocols that stamp each version's arrival; "
            f"{len(run.commits)} changes committed at {run.rate:g}/s the way the ingest commits them "
            f"(log entry, scoreboard, outbox row, NOTIFY in one transaction). Postgres and Redis on "
            f"this machine. {machine_note()}.",
            "",
            "Method: latency of a version at a client = arrival of the first message carrying it (or a "
            "newer version that covers it) - the moment its COMMIT returned. Wall clock, one machine.",
            "",
            table(run),
            "",
            *(part for line in details(run) for part in (line, "")),
            verdict(run),
            "",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--clients", type=int, default=1000, help="Connected clients, half SSE, half WebSocket."
    )
    parser.add_argument("--matches", type=int, default=1, help="Matches the clients are spread over.")
    parser.add_argument("--changes", type=int, default=60, help="Changes to commit.")
    parser.add_argument("--rate", type=float, default=4.0, help="Changes committed per second.")
    parser.add_argument("--no-wait", action="store_true", help="Do not wait for a running pytest to finish.")
    parser.add_argument("--no-write", action="store_true", help="Do not append to bench/results.md.")
    parser.add_argument(
        "--serve", nargs=3, metavar=("PORT", "DATABASE_URL", "REDIS_URL"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.serve:
        serve_api(int(args.serve[0]), args.serve[1], args.serve[2])
        return
    configure_logging("warning", "console")
    if not args.no_wait and not wait_until_quiet():
        sys.exit("pytest still running after 15 minutes; not measuring on a busy machine")
    print(f"{args.clients} clients on {args.matches} match(es), {args.changes} changes at {args.rate:g}/s...")

    async def run() -> Run:
        cancel_on_sigterm()
        return await measure(args.clients, args.matches, args.changes, args.rate)

    result = asyncio.run(run())
    print()
    print(table(result))
    print()
    print("\n".join(details(result)))
    print(verdict(result))
    if not args.no_write:
        append_results(result, args.matches)
        print("appended to bench/results.md")


if __name__ == "__main__":
    main()
