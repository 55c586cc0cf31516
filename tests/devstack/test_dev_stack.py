"""`scoreline dev` as a user runs it: a real process tree, ready line, env file, Ctrl-C, restart."""

from __future__ import annotations

import asyncio
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import asyncpg
import httpx
import psutil
import pytest
from temporalio.client import Client

from devkit.devstack.envfile import read_env_file
from scoreline.db.urls import asyncpg_dsn

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

ROOT = Path(__file__).resolve().parents[2]
RECORDING = ROOT / "recordings" / "football-basic.jsonl"
READY_TIMEOUT = 240.0


@dataclass
class RunningStack:
    process: subprocess.Popen[str]
    addresses: dict[str, str]

    def descendants(self) -> list[psutil.Process]:
        return psutil.Process(self.process.pid).children(recursive=True)


def _clean_env() -> dict[str, str]:
    """No DATABASE_URL / REDIS_URL / TEMPORAL_ADDRESS: the stack must start its own services."""
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL", "TEMPORAL_ADDRESS"}}
    return {**env, "LOG_FORMAT": "json"}


def _start(data_dir: Path, *extra: str, command: str = "dev") -> subprocess.Popen[str]:
    """Start the stack; its stderr goes to a file beside the data dir so a full pipe never blocks it."""
    argv = [sys.executable, "-m", "scoreline", command, "--data-dir", str(data_dir), *extra]
    data_dir.parent.mkdir(parents=True, exist_ok=True)
    with _stderr_path(data_dir).open("w") as stderr:
        return subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=stderr, text=True, env=_clean_env(), cwd=ROOT
        )


def _stderr_path(data_dir: Path) -> Path:
    return data_dir.parent / f"{data_dir.name}.stderr"


def _wait_ready(process: subprocess.Popen[str], data_dir: Path) -> dict[str, str]:
    assert process.stdout is not None
    deadline = time.monotonic() + READY_TIMEOUT
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            tail = _stderr_path(data_dir).read_text(errors="replace")[-3000:]
            code = process.wait()
            # Closed here: left to the collector, the pipe's ResourceWarning failed whichever test
            # ran next in this process.
            process.stdout.close()
            raise AssertionError(f"dev exited ({code}) before ready; its stderr ends:\n{tail}")
        if line.startswith("ready "):
            return dict(pair.split("=", 1) for pair in line.split()[1:])
    raise AssertionError("no ready line in time")


def _processes_using(data_dir: Path) -> list[psutil.Process]:
    """Every live process started for this data dir: by its command line or its environment."""
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        try:
            if proc.info["status"] == psutil.STATUS_ZOMBIE:
                continue
            in_args = any(str(data_dir) in arg for arg in proc.info["cmdline"] or ())
            if in_args or proc.environ().get("SCORELINE_DATA_DIR") == str(data_dir):
                found.append(proc)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return found


def _interrupt(stack: RunningStack) -> list[psutil.Process]:
    children = stack.descendants()
    stack.process.send_signal(signal.SIGINT)
    stack.process.communicate(timeout=90)
    assert stack.process.returncode == 0
    return children


@pytest.fixture
def data_dir() -> Iterator[Path]:
    """Outside pytest's tmp tree, which concurrent pytest runs reset to 0700 (Postgres runs as another user)."""
    scratch = Path(tempfile.mkdtemp(prefix="scoreline-dev-test-"))
    scratch.chmod(0o755)
    directory = scratch / "stack"
    yield directory
    for leftover in _processes_using(directory):
        leftover.kill()
    shutil.rmtree(scratch, ignore_errors=True)


async def _count_fixture_rows(database_url: str) -> int:
    connection = await asyncpg.connect(asyncpg_dsn(database_url))
    try:
        count: int = await connection.fetchval("SELECT count(*) FROM fixture WHERE id = 424242")
    finally:
        await connection.close()
    return count


async def _insert_fixture(database_url: str) -> None:
    connection = await asyncpg.connect(asyncpg_dsn(database_url))
    try:
        await connection.execute("INSERT INTO fixture (id, name) VALUES (424242, 'kept across restarts')")
    finally:
        await connection.close()


async def _probe_runs(temporal: str) -> int:
    client = await Client.connect(temporal)
    return (await client.count_workflows("WorkflowType = 'WorkerProbeWorkflow'")).count


async def test_dev_starts_everything_stops_cleanly_and_keeps_data(data_dir: Path) -> None:
    """Ready line names every part; each answers; Ctrl-C leaves no process; a restart finds the data."""
    first = RunningStack(
        _start(data_dir, "--recording", str(RECORDING), "--speed", "60", "--start-in", "5"), {}
    )
    first.addresses = _wait_ready(first.process, data_dir)
    assert {
        "api",
        "temporal",
        "temporal-ui",
        "provider",
        "apns-admin",
        "postgres",
        "redis",
    } <= first.addresses.keys()

    async with httpx.AsyncClient(timeout=10) as http:
        api_ready = await http.get(f"{first.addresses['api']}/readyz")
        assert api_ready.json()["checks"] == {"postgres": "ok", "redis": "ok", "temporal": "ok"}
        for part in ("provider", "apns-admin"):
            assert (await http.get(f"{first.addresses[part]}/readyz")).status_code == 200, part
        assert (await http.get(first.addresses["temporal-ui"])).status_code == 200
        inplay = await http.get(
            f"{first.addresses['provider']}/v3/football/fixtures/81000001",
            params={"api_token": "dev-provider-token"},
        )
        assert inplay.json()["data"]["id"] == 81000001

    env = read_env_file(data_dir / "env")
    assert env["DATABASE_URL"] == first.addresses["postgres"]
    assert env["TEMPORAL_ADDRESS"] == first.addresses["temporal"]
    assert env["PROVIDER_URL"] == first.addresses["provider"]
    await _insert_fixture(env["DATABASE_URL"])
    assert await _probe_runs(first.addresses["temporal"]) >= 1

    children = _interrupt(first)
    assert len(children) >= 7
    await asyncio.sleep(0.5)
    assert [c.pid for c in children if c.is_running() and c.status() != psutil.STATUS_ZOMBIE] == []
    assert _processes_using(data_dir) == []

    # The API's old port is now taken by someone else: the stack must pick another, not crash.
    api_port = int(first.addresses["api"].rsplit(":", 1)[1])
    with socket.socket() as squatter:
        squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        squatter.bind(("127.0.0.1", api_port))
        squatter.listen()
        second = RunningStack(_start(data_dir, "--api-port", str(api_port), "--start-in", "5"), {})
        second.addresses = _wait_ready(second.process, data_dir)
        try:
            assert second.addresses["api"] != first.addresses["api"]
            database_url = read_env_file(data_dir / "env")["DATABASE_URL"]
            assert await _count_fixture_rows(database_url) == 1
            assert await _probe_runs(second.addresses["temporal"]) >= 2
        finally:
            _interrupt(second)
    assert _processes_using(data_dir) == []


async def test_a_part_that_fails_stops_the_rest_and_is_named(data_dir: Path, tmp_path: Path) -> None:
    """A broken recording makes the provider simulator fail: exit 1, message names it, nothing left."""
    broken = tmp_path / "broken.jsonl"
    broken.write_text(
        '{"recording": 1, "sport": "football", "start": "2026-03-14T15:00:00Z"}\n{"t": "soon"\n'
    )
    process = _start(data_dir, "--recording", str(broken), "--start-in", "5")
    process.communicate(timeout=READY_TIMEOUT)
    assert process.returncode == 1
    assert "provider failed to start" in _stderr_path(data_dir).read_text()
    await asyncio.sleep(0.5)
    assert _processes_using(data_dir) == []


def test_demo_shows_the_matches_being_played(data_dir: Path) -> None:
    """`scoreline demo` reaches ready and prints Scoreline's own view of each goal, with progress bars,
    for the provider's matches and the one its scripted desk scores over the command API."""
    process = _start(data_dir, command="demo")
    stack = RunningStack(process, _wait_ready(process, data_dir))
    goals: dict[str, bool] = {"provider": False, "desk": False}

    def both_scored(line: str) -> bool:
        if "pushes=" in line and _shows_a_goal(line):
            goals["desk" if DESK_MATCH in line else "provider"] = True
        return all(goals.values())

    try:
        seen = _lines_until(process, both_scored, within=150)
        assert seen[0].startswith("watching 5 match(es) at 60x (1 scored by a desk)")
        assert any("live_first_half" in line and DESK_MATCH not in line for line in seen)
        desk_lines = [line for line in seen if DESK_MATCH in line]
        assert "Oakwood School 1-0 Brookside College" in desk_lines[-1]
        assert "live_first_half" in desk_lines[-1]
        assert not [line for line in seen if "  desk: " in line]  # no refused or unexpected answer
    finally:
        _interrupt(stack)


def test_demo_plays_every_match_to_its_end(data_dir: Path) -> None:
    """`scoreline demo` (here at 120x, to keep it short) ends all five matches as recorded or
    scripted and says `all matches are over`.

    Before, the demo's 0.5 s live board outspent the default hourly budget and the board took
    every call it refilled: the three football matches stayed live at 91'-93' for good, their
    confirming call never sent."""
    process = _start(data_dir, "--speed", "120", command="demo")
    stack = RunningStack(process, _wait_ready(process, data_dir))
    try:
        seen = _lines_until(process, lambda line: line.startswith("all matches are over"), within=360)
    finally:
        _interrupt(stack)
    assert seen[0].startswith("watching 5 match(es) at 120x (1 scored by a desk)")
    finished = [line for line in seen if " finished " in line]
    assert any("Riverside FC 3-1 Harbour United" in line for line in finished)
    assert any("Eastfield Town 3-1 Westbrook City" in line for line in finished)
    assert any("Northgate Athletic 1-1 Southbank Rovers" in line for line in finished)
    assert any(DESK_MATCH in line for line in finished)
    assert any("Chennai Super Kings v Royal Challengers Bengaluru" in line for line in finished)


DESK_MATCH = "Oakwood School "


def _shows_a_goal(line: str) -> bool:
    return any(f" {home}-{away} " in line for home in range(9) for away in range(9) if home + away > 0)


def _lines_until(process: subprocess.Popen[str], wanted: Callable[[str], bool], within: float) -> list[str]:
    """stdout lines up to the first `wanted` one; fails after `within` seconds even if none come."""
    assert process.stdout is not None
    seen: list[str] = []
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        ready, _, _ = select.select([process.stdout], [], [], 1.0)
        if not ready:
            continue
        line = process.stdout.readline()
        if not line:
            break
        seen.append(line)
        if wanted(line):
            return seen
    raise AssertionError("not shown in time:\n" + "".join(seen[-20:]))
