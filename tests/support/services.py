"""Where the tests find Postgres and Redis: the machine's own on the usual ports, else embedded ones.

`SCORELINE_TEST_EMBEDDED=1` forces the embedded servers, so the suite is known to pass both ways.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from devkit.devstack import embedded, health
from devkit.devstack.ports import free_port

MACHINE_POSTGRES = "postgresql://postgres@127.0.0.1:5432/postgres"
MACHINE_REDIS = "redis://127.0.0.1:6379/0"


def force_embedded() -> bool:
    return os.environ.get("SCORELINE_TEST_EMBEDDED", "") not in ("", "0", "false")


def _scratch_dir(prefix: str) -> Path:
    directory = Path(tempfile.mkdtemp(prefix=prefix))
    directory.chmod(0o755)
    return directory


@asynccontextmanager
async def postgres_server() -> AsyncIterator[str]:
    """A Postgres server URL (database `postgres`), machine's or embedded."""
    if not force_embedded() and await health.postgres_problem(MACHINE_POSTGRES) is None:
        yield MACHINE_POSTGRES
        return
    directory = _scratch_dir("scoreline-test-pg-")
    server = embedded.postgres_process(
        directory / "data", free_port(), directory / "postgres.log", durable=False
    )
    await server.process.start()
    try:
        await health.wait_until_ready(
            lambda: health.postgres_problem(server.url),
            timeout=60,
            gave_up=lambda: None if server.process.returncode is None else server.process.log_tail(),
        )
        yield server.url
    finally:
        await server.process.stop()
        shutil.rmtree(directory, ignore_errors=True)


@asynccontextmanager
async def redis_server() -> AsyncIterator[str]:
    """A Redis server URL (db 0), machine's or embedded."""
    if not force_embedded() and await health.redis_problem(MACHINE_REDIS) is None:
        yield MACHINE_REDIS
        return
    directory = _scratch_dir("scoreline-test-redis-")
    try:
        async with embedded_redis(directory) as url:
            yield url
    finally:
        shutil.rmtree(directory, ignore_errors=True)


@asynccontextmanager
async def embedded_redis(directory: Path) -> AsyncIterator[str]:
    """An embedded Redis server keeping its files in `directory`: its URL (db 0), once it answers."""
    port = free_port()
    process = embedded.redis_process(port, directory, directory / "redis.log")
    await process.start()
    url = f"redis://127.0.0.1:{port}/0"
    try:
        await health.wait_until_ready(
            lambda: health.redis_problem(url),
            timeout=20,
            gave_up=lambda: None if process.returncode is None else process.log_tail(),
        )
        yield url
    finally:
        await process.stop()
