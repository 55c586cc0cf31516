"""`scoreline replay FIXTURE_ID`: rebuild one fixture's log and documents through its workflow."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta
from typing import Annotated, Any

import typer

from scoreline.cli.common import DataDirOption, prepare

REPLAY_WORKFLOW = "ReplayFixtureWorkflow"


def replay(
    fixture_id: Annotated[int, typer.Argument(help="The provider's fixture id.", min=1)],
    data_dir: DataDirOption = None,
    rebuild: Annotated[bool, typer.Option(help="Also rebuild derived rows and documents.")] = True,
    timeout: Annotated[float, typer.Option(help="Seconds to wait for the replay to finish.")] = 300.0,
) -> None:
    """Start ReplayFixtureWorkflow for FIXTURE_ID, wait, and print what changed (normally nothing)."""
    from scoreline.temporal.client import connect_from
    from scoreline.tracing import bound_trace

    settings = prepare(data_dir)

    async def start_and_wait() -> Any:
        client = await connect_from(settings)
        with bound_trace() as trace_id:
            typer.echo(f"replaying fixture {fixture_id} (trace_id={trace_id})", err=True)
            return await client.execute_workflow(
                REPLAY_WORKFLOW,
                {"fixture_id": fixture_id, "rebuild": rebuild},
                id=f"replay-{fixture_id}-{trace_id[:12]}",
                task_queue=settings.temporal_task_queue,
                execution_timeout=timedelta(seconds=timeout),
            )

    result = asyncio.run(start_and_wait())
    typer.echo(json.dumps(result, indent=2, sort_keys=True, default=str))
