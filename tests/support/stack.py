"""`scoreline dev` as a child of the test: started with a recording, its ready line parsed, stopped for sure.

The stack is given this test's Postgres database and Redis, so it starts only Temporal, the
simulators and Scoreline's own processes (and Prometheus/Alertmanager where installed).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[2]
READY_TIMEOUT = 240.0


@dataclass(frozen=True)
class DevStack:
    addresses: dict[str, str]
    data_dir: Path

    @property
    def logs(self) -> Path:
        return self.data_dir / "logs"


def _ready_line(process: subprocess.Popen[str]) -> dict[str, str]:
    assert process.stdout is not None
    for line in process.stdout:
        if line.startswith("ready "):
            return dict(pair.split("=", 1) for pair in line.split()[1:])
    raise AssertionError(f"scoreline dev exited ({process.wait()}) before its ready line")


@asynccontextmanager
async def dev_stack(
    *args: str, database_url: str, redis_url: str, env: Mapping[str, str] | None = None
) -> AsyncIterator[DevStack]:
    """Run `scoreline dev ARGS` until the block ends, then SIGINT it and reap every child."""
    scratch = Path(tempfile.mkdtemp(prefix="scoreline-stack-test-"))
    scratch.chmod(0o755)
    data_dir = scratch / "stack"
    child_env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "LOG_FORMAT": "json",
        **(env or {}),
    }
    child_env.pop("TEMPORAL_ADDRESS", None)
    argv = [sys.executable, "-m", "scoreline", "dev", "--data-dir", str(data_dir), *args]
    with (scratch / "dev.stderr").open("w") as stderr:
        process = await asyncio.to_thread(
            subprocess.Popen, argv, stdout=subprocess.PIPE, stderr=stderr, text=True, env=child_env, cwd=ROOT
        )
    try:
        async with asyncio.timeout(READY_TIMEOUT):
            addresses = await asyncio.to_thread(_ready_line, process)
        yield DevStack(addresses=addresses, data_dir=data_dir)
    finally:
        descendants = _descendants(process)
        process.send_signal(signal.SIGINT)
        try:
            await asyncio.to_thread(process.communicate, timeout=90)
        except subprocess.TimeoutExpired:
            process.kill()
        for leftover in descendants:
            if leftover.is_running():
                leftover.kill()
        shutil.rmtree(scratch, ignore_errors=True)


def _descendants(process: subprocess.Popen[str]) -> list[psutil.Process]:
    try:
        return psutil.Process(process.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []
