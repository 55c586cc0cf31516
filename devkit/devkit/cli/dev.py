"""`scoreline dev` and `scoreline demo`: the whole system on this machine, in the foreground."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from scoreline.cli.common import DataDirOption, refuse_in_production
from scoreline.logging import configure_logging
from scoreline.settings import DEFAULT_DATA_DIR, Settings

if TYPE_CHECKING:
    from devkit.devstack.stack import DevStack

DEMO_RECORDINGS = ("football-three-matches.jsonl", "cricket-t20.jsonl.gz")
DEMO_SPEED = 60.0
"""A recorded match lasts about 115 minutes of replay time: at 60x it plays in about two."""
DEMO_START_IN = 10.0
DEMO_PLAN_CALLS = 2000
"""The provider plan the demo's workers spend (SportMonks' standard 2,000 calls an hour), counted
per hour of the demo's clock: at 60x an hour of play is a minute, and so is the plan's window."""
DEMO_TUNING = (
    # At 60x a real 2.5 s poll would be 150 s of match time: poll faster, settle full time sooner.
    ("POLL_INTERVAL_LIVE", "500ms"),
    ("POLL_INTERVAL_IDLE", "1s"),
    ("RECONCILE_INTERVAL", "10s"),
    ("FULL_TIME_SETTLE", "10s"),
)


def _environment(data_dir: Path) -> Settings:
    """The real environment only: `<data-dir>/env` holds the previous run's addresses, not config."""
    settings = Settings()
    refuse_in_production(settings, "scoreline dev")
    configure_logging(settings.log_level, settings.log_format)
    return settings.model_copy(update={"data_dir": data_dir})


def _bundled() -> tuple[Path, ...]:
    from devkit.simulators.provider.config import BUNDLED_RECORDINGS_DIR

    return tuple(BUNDLED_RECORDINGS_DIR / name for name in DEMO_RECORDINGS)


def dev(
    data_dir: DataDirOption = None,
    api_port: Annotated[int, typer.Option(help="API port (a free one if taken).")] = 8000,
    recording: Annotated[
        list[Path] | None,
        typer.Option(
            "--recording",
            help="A recording for the provider simulator (repeatable; default: the bundled examples).",
            exists=True,
        ),
    ] = None,
    speed: Annotated[
        float, typer.Option(help="Replay speed of the provider simulator (1 = real time).")
    ] = 1.0,
    start_in: Annotated[
        float, typer.Option(help="Seconds until the provider simulator's replay reaches t=0.")
    ] = 30.0,
) -> None:
    """Start everything (Temporal, Postgres, Redis, migrations, worker, API, simulators) until Ctrl-C."""
    from devkit.devstack.stack import DevOptions, DevStack

    directory = (data_dir or DEFAULT_DATA_DIR).resolve()
    recordings = tuple(p.resolve() for p in recording) if recording else _bundled()
    options = DevOptions(directory, api_port, recordings, speed, start_in)
    code = asyncio.run(DevStack(options, _environment(directory)).run())
    raise typer.Exit(code)


def demo(
    data_dir: DataDirOption = None,
    api_port: Annotated[int, typer.Option(help="API port (a free one if taken).")] = 8000,
    speed: Annotated[
        float, typer.Option(help="Replay speed (60: a match in about two minutes).", min=1.0)
    ] = DEMO_SPEED,
) -> None:
    """`dev` with the bundled example matches at 60x plus one scored by a scripted desk, a line per change."""
    from devkit.devstack.stack import DevOptions, DevStack, ProviderPlan

    directory = (data_dir or DEFAULT_DATA_DIR).resolve()
    plan = ProviderPlan(DEMO_PLAN_CALLS, timedelta(hours=1) / speed)
    options = DevOptions(
        directory, api_port, _bundled(), speed, DEMO_START_IN, DEMO_TUNING, provider_plan=plan
    )
    code = asyncio.run(DevStack(options, _environment(directory)).run(on_ready=_demo_view))
    raise typer.Exit(code)


async def _demo_view(stack: DevStack) -> None:
    """The live monitor and the scripted scorer desk, whose match the monitor shows too."""
    from devkit.devstack.demo_desk import run_demo_desk
    from devkit.devstack.monitor import AnnouncedMatches, watch_matches

    announced = AnnouncedMatches(expected=1)
    async with asyncio.TaskGroup() as group:
        group.create_task(watch_matches(stack, announced))
        group.create_task(run_demo_desk(stack, announced))
