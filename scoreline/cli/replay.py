"""`scoreline replay FIXTURE_ID`: re-run one fixture's ingest through ReplayFixtureWorkflow."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from datetime import timedelta
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from scoreline.cli.common import DataDirOption, prepare

if TYPE_CHECKING:
    from domain.replay import ReplayResult


def replay(
    fixture_id: Annotated[int, typer.Argument(help="The provider's fixture id.", min=1)],
    data_dir: DataDirOption = None,
    rebuild: Annotated[bool, typer.Option(help="Also rewrite the Redis read copies from Postgres.")] = True,
    timeout: Annotated[float, typer.Option(help="Seconds to wait for the replay to finish.")] = 300.0,
) -> None:
    """Start ReplayFixtureWorkflow for FIXTURE_ID, wait, and print what changed (normally nothing)."""
    from domain.replay import ReplayInput
    from scoreline.temporal.client import connect_from
    from scoreline.tracing import bound_trace
    from workflows.replay import ReplayFixtureWorkflow

    settings = prepare(data_dir)

    async def start_and_wait() -> ReplayResult:
        client = await connect_from(settings)
        with bound_trace() as trace_id:
            typer.echo(f"replaying fixture {fixture_id} (trace_id={trace_id})", err=True)
            return await client.execute_workflow(
                ReplayFixtureWorkflow.run,
                ReplayInput(fixture_id=fixture_id, rebuild=rebuild),
                id=f"replay-{fixture_id}-{trace_id[:12]}",
                task_queue=settings.temporal_task_queue,
                execution_timeout=timedelta(seconds=timeout),
            )

    result = asyncio.run(start_and_wait())
    typer.echo(json.dumps(result.model_dump(mode="json"), indent=2, sort_keys=True))
    if not result.found:
        typer.echo(f"the provider has no fixture {fixture_id}", err=True)
        _exit_now(2)
    typer.echo(
        "nothing changed" if result.entries_added == 0 else f"{result.entries_added} new log entries",
        err=True,
    )
    _exit_now(0)


def _exit_now(code: int) -> NoReturn:
    """Exit without interpreter finalization once the work is done and printed.

    The Temporal client's runtime keeps native threads; now and then one of them releases the GIL
    while the interpreter is finalizing and the process aborts (SIGABRT) after a successful replay,
    which a script would read as a failure. Nothing is left to clean up here, so skip finalization.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
