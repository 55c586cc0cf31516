"""`scoreline worker`, `scoreline feeds`, `scoreline api`, `scoreline migrate`: the production processes.

The long-running ones run on uvloop, and the API parses HTTP with httptools (uvicorn's standard
production setup rather than asyncio's own loop and the pure-Python h11). On the command road the
gain is within the bench's run-to-run spread (`bench/command_latency.py --what-if asyncio`).
"""

from __future__ import annotations

from typing import Annotated

import typer
import uvloop

from scoreline.cli.common import DataDirOption, prepare
from scoreline.metrics.exporter import leave_now

API_KEEP_ALIVE_S = 75
"""How long the API keeps an idle HTTP connection open. A client that reuses a connection just as
the server closes it gets a reset instead of an answer, so the server must outlast the idle limit of
everything in front of it: httpx's 5 s, and the 60 s of common load balancers and proxies."""


def worker(data_dir: DataDirOption = None) -> None:
    """Run a Temporal worker: every match workflow and activity, until SIGINT/SIGTERM."""
    from workers.main import run

    settings = prepare(data_dir)
    uvloop.run(run(settings))
    if settings.worker_metrics_address:
        leave_now()


def feeds(data_dir: DataDirOption = None) -> None:
    """Run the partner feed builder: rebuild feed documents as matches change, until SIGINT/SIGTERM.

    Run one or more anywhere the database is reachable; one leads, the others stand by."""
    from workers.feeds import run

    settings = prepare(data_dir)
    uvloop.run(run(settings))
    if settings.feeds_metrics_address:
        leave_now()


def api(
    data_dir: DataDirOption = None,
    host: Annotated[str | None, typer.Option(help="Interface to bind (default API_HOST).")] = None,
    port: Annotated[int | None, typer.Option(help="Port to bind (default API_PORT).")] = None,
) -> None:
    """Serve the HTTP API (commands, reads, streams, devices, feeds) with uvicorn."""
    import uvicorn

    from api.app import create_app
    from api.live.ws import MAX_FRAME_BYTES

    settings = prepare(data_dir)
    uvicorn.run(
        create_app(settings),
        host=host or settings.api_host,
        port=port or settings.api_port,
        log_config=None,
        access_log=False,
        lifespan="on",
        loop="uvloop",
        http="httptools",
        timeout_keep_alive=API_KEEP_ALIVE_S,
        # uvicorn's default (16 MiB) would buffer a whole frame only for the protocol's
        # 8,192-character check to refuse it; this refuses it from the frame's header (close 1009).
        ws_max_size=MAX_FRAME_BYTES,
    )


def migrate(
    data_dir: DataDirOption = None,
    revision: Annotated[str, typer.Option(help="Target revision.")] = "head",
    down: Annotated[bool, typer.Option("--down", help="Downgrade to --revision instead.")] = False,
) -> None:
    """Apply the Alembic migrations to DATABASE_URL (upgrade to head by default)."""
    from scoreline.db import migrate as migrations

    settings = prepare(data_dir)
    database_url = settings.require_database_url()
    if down:
        migrations.downgrade(database_url, revision)
    else:
        migrations.upgrade(database_url, revision)
    typer.echo(f"database at {'downgraded to' if down else 'upgraded to'} {revision}")
