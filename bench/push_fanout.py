"""Bench: Live Activity pushes per second from one worker, and how fast one goal reaches every follower.

Run: `.venv/bin/python bench/push_fanout.py [--sizes 1000,10000]`

Goal (design §7): *APNs: ≥ 2,000 pushes/s to the simulator from one worker; a goal reaches 10,000
followers in ≤ 5 s*.

Setup: the APNs simulator (HTTP/2 over TLS, JWT checks, its push journal) in a child process, so its
CPU is not the worker's; a Temporal dev server of the bench's own; a fresh migrated database on the
tests' Postgres. One in-process worker runs the real `push_live_activities` activity with the
production settings (`PUSH_CONCURRENCY`, `PUSH_BATCH_SIZE`, `APNS_MAX_CONNECTIONS`), called by a
one-activity workflow exactly as MatchWorkflow calls it. For each size N: N followers with a running
Live Activity, one goal (priority 10, with an alert) for all of them.

Timed on the wall clock (one machine): *goal* = the workflow start call; *device has it* = the
simulator journal's `received_at` of that device's push. Per device: goal → simulator received it
(p50, p99, max). Pushes/s: N over the span between the first and the last push received; the whole
fan-out (goal → workflow result, ledger written) is reported too. A warm-up goal to 200 devices runs
first (TLS, provider token, worker start), as a running worker would have.

It prints a table and appends a dated section to `bench/results.md`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import asyncpg
import httpx
from temporalio.client import Client

from activities.push.apns import ApnsClient
from activities.push.fanout import FanoutConfig
from bench._common import (
    CpuMeter,
    append_section,
    bench_database,
    busy_with,
    cancel_on_sigterm,
    machine_note,
    percentile,
    temporal_server,
    wait_until_quiet,
)
from domain.moments import KeyMoment
from domain.pushes import LiveState, PushInput
from scoreline.db.engine import create_engine
from scoreline.db.urls import asyncpg_dsn
from scoreline.devstack.ports import free_port
from scoreline.logging import configure_logging
from scoreline.settings import Settings
from simulators.apns.config import ApnsSimConfig
from simulators.apns.keys import ensure_signing_key, ensure_tls_certificate
from tests.push import seed
from tests.push.workflow import PushOnceWorkflow, push_worker

GOAL = "APNs: ≥ 2,000 pushes/s to the simulator from one worker; a goal reaches 10,000 followers in ≤ 5 s"
GOAL_RATE = 2000.0
GOAL_SECONDS = 5.0
WARM_UP_DEVICES = 200
SIM_READY_SECONDS = 60.0
ROOT = Path(__file__).resolve().parent.parent

SIM_SCRIPT = """
import sys
from pathlib import Path
from simulators.apns.config import ApnsSimConfig
from simulators.apns.server import run
run(ApnsSimConfig(data_dir=Path(sys.argv[1]), port=int(sys.argv[2]), admin_port=int(sys.argv[3])))
"""


@dataclass(frozen=True)
class Fanout:
    """One goal to `devices` followers."""

    devices: int
    delivered: int
    latencies: list[float]
    """Seconds from the goal to the simulator receiving each device's push."""
    spread: float
    """Seconds between the first and the last push received."""
    total: float
    """Seconds from the goal to the workflow's result (every outcome written)."""
    cpu: dict[str, float]
    disturbed: list[str]
    """Pids of test runs (pytest) seen on the machine around the measurement."""

    @property
    def rate(self) -> float:
        return self.delivered / self.spread if self.spread > 0 else float("nan")


@dataclass(frozen=True)
class Simulator:
    process: asyncio.subprocess.Process
    config: ApnsSimConfig
    cert: Path
    key: Path
    admin: httpx.AsyncClient


async def running_simulator(data_dir: Path) -> Simulator:
    """The simulator in a child process on free ports, once `/readyz` answers."""
    config = ApnsSimConfig(data_dir=data_dir, port=free_port(), admin_port=free_port())
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        SIM_SCRIPT,
        str(data_dir),
        str(config.port),
        str(config.admin_port),
        cwd=ROOT,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    admin = httpx.AsyncClient(base_url=f"http://{config.host}:{config.admin_port}", timeout=60)
    deadline = time.monotonic() + SIM_READY_SECONDS
    while True:
        if process.returncode is not None:
            raise RuntimeError(f"the simulator exited with {process.returncode}")
        try:
            if (await admin.get("/readyz")).status_code == 200:
                break
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError("the simulator did not become ready")
        await asyncio.sleep(0.2)
    key, _ = ensure_signing_key(data_dir, config.key_id)
    cert, _ = ensure_tls_certificate(data_dir, config.host)
    return Simulator(process, config, cert, key, admin)


def goal(fixture_id: int) -> PushInput:
    return PushInput(
        fixture_id=fixture_id,
        event_key="v7",
        kind="update",
        priority=10,
        alert=True,
        moment=KeyMoment(kind="goal", side="home", minute=71),
        state=LiveState(home=2, away=1, state="live_second_half", minute=71, version=7),
        timestamp=int(time.time()),
    )


async def one_goal(
    client: Client, task_queue: str, sim: Simulator, db: asyncpg.Connection, fixture_id: int, devices: int
) -> Fanout:
    """Seed `devices` running activities on a new fixture, push one goal, read the journal."""
    await seed.fixture(db, fixture_id)
    await seed.running_activities(db, devices, fixture_id)
    (await sim.admin.delete("/_sim/pushes")).raise_for_status()
    meter = CpuMeter({"worker": [os.getpid()], "simulator": [sim.process.pid]})
    disturbed = set(busy_with())
    await meter.start()
    started = time.time()
    await client.execute_workflow(
        PushOnceWorkflow.run, goal(fixture_id), id=f"bench-push-{uuid.uuid4()}", task_queue=task_queue
    )
    total = time.time() - started
    cpu = await meter.used()
    disturbed.update(busy_with())
    pushes = (await sim.admin.get("/_sim/pushes", params={"limit": 100_000})).json()["pushes"]
    received = sorted(
        datetime.fromisoformat(p["received_at"]).timestamp() for p in pushes if p["status"] == 200
    )
    return Fanout(
        devices=devices,
        delivered=len(received),
        latencies=[at - started for at in received],
        spread=(received[-1] - received[0]) if received else 0.0,
        total=total,
        cpu={role: seconds / total * 100 for role, seconds in cpu.items()},
        disturbed=sorted(disturbed),
    )


async def measure(sizes: list[int]) -> tuple[list[Fanout], Settings]:
    with tempfile.TemporaryDirectory(prefix="bench-push-") as scratch:
        sim = await running_simulator(Path(scratch) / "apns")
        try:
            async with bench_database("bench_push") as database_url, temporal_server() as env:
                settings = Settings(
                    database_url=database_url,
                    apns_url=f"https://127.0.0.1:{sim.config.port}",
                    apns_ca_file=sim.cert,
                    apns_key_path=sim.key,
                    apns_team_id=sim.config.team_id,
                    apns_key_id=sim.config.key_id,
                    apns_topic=sim.config.topic,
                )
                engine = create_engine(database_url, pool_size=4)
                apns = ApnsClient.from_settings(settings)
                db = await asyncpg.connect(asyncpg_dsn(database_url))
                task_queue = f"bench-push-{uuid.uuid4()}"
                try:
                    async with push_worker(
                        env.client, task_queue, engine, apns, FanoutConfig.from_settings(settings)
                    ):
                        await one_goal(env.client, task_queue, sim, db, 90_000_000, WARM_UP_DEVICES)
                        runs = []
                        for index, size in enumerate(sizes, start=1):
                            print(f"one goal to {size:,} followers...", flush=True)
                            runs.append(
                                await one_goal(env.client, task_queue, sim, db, 90_000_000 + index, size)
                            )
                finally:
                    await db.close()
                    await apns.aclose()
                    await engine.dispose()
                return runs, settings
        finally:
            await sim.admin.aclose()
            if sim.process.returncode is None:
                sim.process.terminate()
                await sim.process.wait()


def table(runs: list[Fanout]) -> str:
    lines = [
        "| followers | delivered | goal → device p50 / p99 / max, ms | pushes/s (first → last push) "
        "| goal → result (ledger written), s | CPU % of a core: worker / simulator |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for run in runs:
        p50, p99, top = (percentile(run.latencies, q) * 1000 for q in (50, 99, 100))
        lines.append(
            f"| {run.devices:,} | {run.delivered:,} | {p50:.0f} / {p99:.0f} / {top:.0f} | {run.rate:,.0f} "
            f"| {run.total:.2f} | {run.cpu.get('worker', 0):.0f} / {run.cpu.get('simulator', 0):.0f} |"
        )
    return "\n".join(lines)


def verdict(runs: list[Fanout]) -> str:
    largest = max(runs, key=lambda run: run.devices)
    reach = percentile(largest.latencies, 100)
    rate_met = largest.rate >= GOAL_RATE
    reach_met = largest.delivered == largest.devices and reach <= GOAL_SECONDS and largest.devices >= 10_000
    status = "met" if rate_met and reach_met else "NOT met"
    return (
        f"Goal {status}: {largest.rate:,.0f} pushes/s (goal ≥ {GOAL_RATE:,.0f}); the goal reached all "
        f"{largest.delivered:,} of {largest.devices:,} followers in {reach:.2f} s (goal ≤ {GOAL_SECONDS:g} s)."
    )


def note(runs: list[Fanout]) -> list[str]:
    """A warning when other test runs shared the machine (the figures are then pessimistic)."""
    pids = sorted({pid for run in runs for pid in run.disturbed})
    if not pids:
        return []
    return [
        f"Note: other test runs (pytest, pids {', '.join(pids)}) shared the machine during the measurement.",
        "",
    ]


def append_results(runs: list[Fanout], settings: Settings) -> None:
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    append_section(
        [
            f"## {now} — Live Activity fan-out to the APNs simulator (`bench/push_fanout.py`)",
            "",
            f"Goal: *{GOAL}*.",
            "",
            "Setup: the APNs simulator (HTTP/2 + TLS, JWT checks, journal) in a child process; one "
            "in-process worker running the real `push_live_activities` activity through a one-activity "
            f"workflow on a Temporal dev server of its own; a fresh database on the tests' Postgres. "
            f"Production settings: {settings.push_concurrency} pushes in flight, batches of "
            f"{settings.push_batch_size}, up to {settings.apns_max_connections} HTTP/2 connections. One goal "
            f"(priority 10, alert) per size after a {WARM_UP_DEVICES}-device warm-up. {machine_note()}.",
            "",
            "Method: *goal* = the workflow start call; *device* = the simulator journal's `received_at` "
            "for that device's push (wall clock, one machine). Pushes/s = delivered over the span from the "
            "first to the last push received.",
            "",
            table(runs),
            "",
            *note(runs),
            verdict(runs),
            "",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", default="1000,10000", help="Comma list of follower counts.")
    parser.add_argument("--no-wait", action="store_true", help="Do not wait for a running pytest to finish.")
    parser.add_argument("--no-write", action="store_true", help="Do not append to bench/results.md.")
    args = parser.parse_args()
    configure_logging("warning", "console")
    if not args.no_wait and not wait_until_quiet():
        sys.exit("pytest still running after 15 minutes; not measuring on a busy machine")
    sizes = [int(size) for size in args.sizes.split(",")]

    async def run() -> tuple[list[Fanout], Settings]:
        cancel_on_sigterm()
        return await measure(sizes)

    runs, settings = asyncio.run(run())
    print()
    print(table(runs))
    print("\n".join(note(runs)), end="")
    print(verdict(runs))
    if not args.no_write:
        append_results(runs, settings)
        print("appended to bench/results.md")


if __name__ == "__main__":
    main()
