"""`scoreline soak`: the chaos soak (`devkit.soak`) on this machine, ending in one verdict line."""

from __future__ import annotations

import asyncio
import secrets
import shutil
import tempfile
import time
from pathlib import Path
from typing import Annotated

import typer

from scoreline.cli.common import refuse_in_production
from scoreline.logging import configure_logging
from scoreline.settings import Settings

DEFAULT_RECORDINGS = (
    "football-three-matches.jsonl",
    "cricket-t20.jsonl.gz",
    "cricket-rain-reduced.jsonl.gz",
    "cricket-super-over.jsonl.gz",
    "cricket-abandoned-no-ball.jsonl.gz",
    "cricket-abandoned-after-toss.jsonl.gz",
    "cricket-edits.jsonl.gz",
    "cricket-missing-balls.jsonl.gz",
)
"""The bundled recordings one simulator can serve together: `football-basic` and
`football-correction` are two of the three matches' fixtures on their own (the same ids), and the
two-day Test would set the replay speed for all the others (a day of play per soak)."""


def _bundled() -> tuple[Path, ...]:
    from devkit.simulators.provider.config import BUNDLED_RECORDINGS_DIR

    return tuple(BUNDLED_RECORDINGS_DIR / name for name in DEFAULT_RECORDINGS)


def _say(line: str) -> None:
    print(f"{time.strftime('%H:%M:%S')}  {line}", flush=True)


def soak(
    seed: Annotated[
        int | None, typer.Option(help="The fault plan's and the load's seed (default: random, printed).")
    ] = None,
    minutes: Annotated[float, typer.Option(help="Length of the load window.", min=1)] = 30.0,
    recording: Annotated[
        list[Path] | None,
        typer.Option(
            "--recording", help="A recording to play (repeatable; default: the bundled ones).", exists=True
        ),
    ] = None,
    desks: Annotated[int, typer.Option(help="Scorer desks, each scoring its own match.", min=0)] = 20,
    devices: Annotated[int, typer.Option(help="Simulated phones following matches.", min=0)] = 10_000,
    data_dir: Annotated[
        Path | None,
        typer.Option("--data-dir", help="Where the run's services and logs go (default: a temporary dir)."),
    ] = None,
) -> None:
    """Run the whole stack under load while a seeded plan breaks it; exit 1 on any violation."""
    from devkit.soak.report import render
    from devkit.soak.run import SoakOptions, run_soak

    environment = Settings()
    refuse_in_production(environment, "scoreline soak")
    configure_logging("warning", "console")
    chosen = seed if seed is not None else secrets.randbelow(2**31)
    print(f"soak: seed {chosen}", flush=True)
    directory = (data_dir or Path(tempfile.mkdtemp(prefix="scoreline-soak-"))).resolve()
    recordings = tuple(path.resolve() for path in recording) if recording else _bundled()
    options = SoakOptions(chosen, minutes, recordings, directory, desks=desks, devices=devices)
    verdict = asyncio.run(run_soak(options, environment, _say))
    for line in render(verdict):
        print(line, flush=True)
    if verdict.passed and data_dir is None:
        shutil.rmtree(directory, ignore_errors=True)
    elif not verdict.passed:
        print(f"soak: logs and data kept in {directory}", flush=True)
    raise typer.Exit(0 if verdict.passed else 1)
