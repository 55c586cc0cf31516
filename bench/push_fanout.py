"""Bench: Live Activity pushes per second from one worker's drainer, and how fast one goal reaches every follower.

Run: `.venv/bin/python bench/push_fanout.py [--sizes 1000,10000] [--hot-token]`

Goal (docs/live-activities.md): *≥ 5,000 pushes/s to the simulator from one worker; a goal reaches
the last of 10,000 followers within 3 s — and the other 9,999 just as fast while one follower's
token answers 429 all run long (`--hot-token`)*.

Setup: the APNs simulator (HTTP/2 over TLS, JWT checks, its push journal) in a child process, so its
CPU is not the worker's; a fresh migrated database on the tests' Postgres. The real `Drainer` runs
in-process with the production settings (`PUSH_CONCURRENCY`, `PUSH_BATCH_SIZE`,
`APNS_MAX_CONNECTIONS`), woken by NOTIFY. For each size N: N followers with a running Live
Activity (update token reported), one goal (priority 10, with an alert) published for all of them
by the real `publish` (as the match workflow's activity does). With `--hot-token`, one follower's
token is answered 429 for the whole run (a simulator fault with no deadline, then 500s).

Timed on the wall clock (one machine): *goal* = the publish call; *device has it* = the simulator
journal's `received_at` of that device's accepted push. Pushes/s: delivered over the span between
the first and the last push received; last_s: goal → last device. A warm-up goal to 200 devices
runs first (TLS, provider token), as a running worker would have.

It prints a table; its last line is `push_fanout: kind=token followers=N hot=0|1 per_s=X last_s=Y`
for the largest size. `bench/results.md` is edited by hand.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import asyncpg
import httpx
from sqlalchemy.ext.asyncio import AsyncEngine

from activities.push.apns import ApnsClient
from activities.push.drain import DrainConfig, Drainer
from activities.push.publish import publish
from bench._common import CpuMeter, bench_database, busy_with, cancel_on_sigterm, percentile, wait_until_quiet
from devkit.devstack.ports import free_port
from devkit.simulators.apns.config import ApnsSimConfig
from devkit.simulators.apns.keys import ensure_signing_key, ensure_tls_certificate
from domain.moments import KeyMoment
from domain.pushes import LiveState, PushInput
from scoreline.db.engine import create_engine
from scoreline.db.urls import asyncpg_dsn
from scoreline.logging import configure_logging
from scoreline.settings import Settings
from tests.push import seed

GOAL_RATE = 5000.0
GOAL_SECONDS = 3.0
WARM_UP_DEVICES = 200
SIM_READY_SECONDS = 60.0
SETTLE_TIMEOUT_S = 60.0
"""How long a run waits for every follower's push before it reports what arrived."""
HOT_FAULT_COUNT = 1_000_000
"""Requests the hot token's faults answer: more than any run makes (no deadline)."""
ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Run:
    """One goal to `devices` followers (`hot`: one of them the hot token, not counted)."""

    devices: int
    hot: bool
    delivered: int
    latencies: list[float]
    """Seconds from the goal to the simulator receiving each (other) device's push."""
    spread: float
    """Seconds between the first and the last push received."""
    cpu: dict[str, float]
    disturbed: list[str]
    """Pids of test runs (pytest) seen on the machine around the measurement."""

    @property
    def expected(self) -> int:
        return self.devices - 1 if self.hot else self.devices

    @property
    def rate(self) -> float:
        return self.delivered / self.spread if self.spread > 0 else float("nan")

    @property
    def last(self) -> float:
        return max(self.latencies, default=float("nan"))


SIM_SCRIPT = """
import sys
from pathlib import Path
from devkit.simulators.apns.config import ApnsSimConfig
from devkit.simulators.apns.server import run
run(ApnsSimConfig(data_dir=Path(sys.argv[1]), port=int(sys.argv[2]), admin_port=int(sys.argv[3])))
"""


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
    engine: AsyncEngine, sim: Simulator, db: asyncpg.Connection, fixture_id: int, devices: int, *, hot: bool
) -> Run:
    """Seed `devices` running activities on a new fixture, publish one goal, read the journal."""
    await seed.fixture(db, fixture_id)
    activities = await seed.running_activities(db, devices, fixture_id)
    (await sim.admin.delete("/_sim/pushes")).raise_for_status()
    (await sim.admin.delete("/_sim/faults")).raise_for_status()
    hot_token = activities[0].push_token if hot else None
    if hot_token is not None:
        for status in (429, 500):
            fault = {"status": status, "token": hot_token, "count": HOT_FAULT_COUNT}
            (await sim.admin.post("/_sim/faults", json=fault)).raise_for_status()
    meter = CpuMeter({"worker": [os.getpid()], "simulator": [sim.process.pid]})
    disturbed = set(busy_with())
    await meter.start()
    started = time.time()
    await publish(engine, goal(fixture_id), 5.0)
    expected = devices - 1 if hot else devices
    deadline = time.monotonic() + SETTLE_TIMEOUT_S
    while True:
        pushes = (await sim.admin.get("/_sim/pushes", params={"limit": 100_000})).json()["pushes"]
        received = sorted(
            datetime.fromisoformat(p["received_at"]).timestamp()
            for p in pushes
            if p["status"] == 200 and p["token"] != hot_token
        )
        if len(received) >= expected or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.5)
    cpu = await meter.used()
    took = time.time() - started
    disturbed.update(busy_with())
    return Run(
        devices=devices,
        hot=hot,
        delivered=len(received),
        latencies=[at - started for at in received],
        spread=(received[-1] - received[0]) if received else 0.0,
        cpu={role: seconds / took * 100 for role, seconds in cpu.items()},
        disturbed=sorted(disturbed),
    )


async def measure(sizes: list[int], *, hot: bool) -> list[Run]:
    with tempfile.TemporaryDirectory(prefix="bench-push-") as scratch:
        sim = await running_simulator(Path(scratch) / "apns")
        try:
            async with bench_database("bench_push") as database_url:
                settings = Settings(
                    database_url=database_url,
                    apns_url=f"https://127.0.0.1:{sim.config.port}",
                    apns_ca_file=sim.cert,
                    apns_key_path=sim.key,
                    apns_team_id=sim.config.team_id,
                    apns_key_id=sim.config.key_id,
                    apns_topic=sim.config.topic,
                )
                engine = create_engine(database_url, pool_size=settings.db_pool_pushes, pre_ping=False)
                apns = ApnsClient.from_settings(settings)
                db = await asyncpg.connect(asyncpg_dsn(database_url))
                drainer = Drainer(
                    engine, apns, DrainConfig.from_settings(settings), dsn=asyncpg_dsn(database_url)
                )
                drainer.start()
                try:
                    await one_goal(engine, sim, db, 90_000_000, WARM_UP_DEVICES, hot=False)
                    runs = []
                    for index, size in enumerate(sizes, start=1):
                        print(
                            f"one goal to {size:,} followers{' (one hot token)' if hot else ''}...",
                            flush=True,
                        )
                        runs.append(await one_goal(engine, sim, db, 90_000_000 + index, size, hot=hot))
                finally:
                    await drainer.stop()
                    await db.close()
                    await apns.aclose()
                    await engine.dispose()
                return runs
        finally:
            await sim.admin.aclose()
            if sim.process.returncode is None:
                sim.process.terminate()
                await sim.process.wait()


def table(runs: list[Run]) -> str:
    lines = [
        "| followers | hot token | delivered (of expected) | goal → device p50 / p99 / last, ms "
        "| pushes/s (first → last push) | CPU % of a core: worker / simulator |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for run in runs:
        p50, p99, top = (percentile(run.latencies, q) * 1000 for q in (50, 99, 100))
        lines.append(
            f"| {run.devices:,} | {'yes' if run.hot else 'no'} | {run.delivered:,} of {run.expected:,} "
            f"| {p50:.0f} / {p99:.0f} / {top:.0f} | {run.rate:,.0f} "
            f"| {run.cpu.get('worker', 0):.0f} / {run.cpu.get('simulator', 0):.0f} |"
        )
    return "\n".join(lines)


def verdict(run: Run) -> str:
    met = run.rate >= GOAL_RATE and run.delivered == run.expected and run.last <= GOAL_SECONDS
    others = "other " if run.hot else ""
    return (
        f"Goal {'met' if met else 'NOT met'}: {run.rate:,.0f} pushes/s (goal ≥ {GOAL_RATE:,.0f}); "
        f"{run.delivered:,} of {run.expected:,} {others}followers had the goal, the last at {run.last:.2f} s "
        f"(goal ≤ {GOAL_SECONDS:g} s)."
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", default="1000,10000", help="Comma list of follower counts.")
    parser.add_argument("--hot-token", action="store_true", help="One follower's token answers 429 all run.")
    parser.add_argument("--no-wait", action="store_true", help="Do not wait for a running pytest to finish.")
    args = parser.parse_args()
    configure_logging("warning", "console")
    if not args.no_wait and not wait_until_quiet():
        sys.exit("pytest still running after 15 minutes; not measuring on a busy machine")
    sizes = [int(size) for size in args.sizes.split(",")]

    async def run() -> list[Run]:
        cancel_on_sigterm()
        return await measure(sizes, hot=args.hot_token)

    runs = asyncio.run(run())
    largest = max(runs, key=lambda run: run.devices)
    print()
    print(table(runs))
    pids = sorted({pid for run in runs for pid in run.disturbed})
    if pids:
        print(f"Note: other test runs (pytest, pids {', '.join(pids)}) shared the machine.")
    print(verdict(largest))
    print(
        f"push_fanout: kind=token followers={largest.devices} hot={int(largest.hot)} "
        f"per_s={largest.rate:.0f} last_s={largest.last:.2f}"
    )


if __name__ == "__main__":
    main()
