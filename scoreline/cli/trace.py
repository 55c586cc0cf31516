"""`scoreline trace TRACE_ID`: everything one change did, in time order, as a table or as JSON.

The id is the one a change carries everywhere (`scoreline.tracing`): the `X-Trace-Id` an API answer
echoes, or the `trace_id` of any of its log lines. The rows come from DATABASE_URL (the running dev
stack's, from `<data-dir>/env`); the log lines from `<data-dir>/logs/*.log`, or the files and
directories given with `--logs`.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer
from sqlalchemy.exc import SQLAlchemyError

from scoreline.cli.common import DataDirOption, fail, prepare
from scoreline.db.engine import create_engine
from scoreline.trace.logs import log_files, read_log
from scoreline.trace.models import Trace, TraceItem, is_trace_id
from scoreline.trace.render import as_json, as_table
from scoreline.trace.rows import rows_of
from scoreline.trace.timeline import merge

EXIT_MALFORMED = 2
EXIT_NOTHING = 1


def trace(
    trace_id: Annotated[
        str,
        typer.Argument(
            help="The change's trace id: 32 lowercase hex digits (an answer's X-Trace-Id, a log line's trace_id).",
            show_default=False,
        ),
    ],
    data_dir: DataDirOption = None,
    json_output: Annotated[
        bool, typer.Option("--json", help="Print JSON ({trace_id, items: [{at, source, what, detail}]}).")
    ] = False,
    logs: Annotated[
        list[Path] | None,
        typer.Option(
            "--logs",
            help="A log file, or a directory of *.log files, to search (repeatable; default <data-dir>/logs).",
            exists=True,
        ),
    ] = None,
) -> None:
    """Show everything one change did, in time order: log lines, commands, log entries, outbox rows,
    pushes and feed builds. Exit 1 if nothing carries the trace id, 2 if it is not one."""
    if not is_trace_id(trace_id):
        typer.echo(
            f"error: {trace_id!r} is not a trace id: expected 32 lowercase hex digits "
            "(as in an X-Trace-Id header or a log line's trace_id)",
            err=True,
        )
        raise typer.Exit(EXIT_MALFORMED)
    settings = prepare(data_dir)
    try:
        database_url = settings.require_database_url()
    except RuntimeError as error:
        fail(str(error))
    files = log_files(logs or [settings.data_dir / "logs"])
    try:
        rows = asyncio.run(_rows(database_url, trace_id))
    except (OSError, SQLAlchemyError) as error:
        fail(f"cannot use the database: {type(error).__name__}: {error}")
    found = Trace(trace_id=trace_id, items=merge(rows, *(read_log(path, trace_id) for path in files)))
    if not found.items:
        typer.echo(
            f"nothing carries trace {trace_id}: no row in the database, no line in {len(files)} log file(s)",
            err=True,
        )
        raise typer.Exit(EXIT_NOTHING)
    typer.echo(as_json(found) if json_output else as_table(found))


async def _rows(database_url: str, trace_id: str) -> list[TraceItem]:
    engine = create_engine(database_url, pool_size=1)
    try:
        return await rows_of(engine, trace_id)
    finally:
        await engine.dispose()
