"""Options and helpers every `scoreline` command shares."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from scoreline.logging import configure_logging
from scoreline.settings import DEFAULT_DATA_DIR, Settings, load_settings

DataDirOption = Annotated[
    Path | None,
    typer.Option(
        "--data-dir",
        help=f"Data dir of a running `scoreline dev` whose addresses to use (default {DEFAULT_DATA_DIR}/).",
        envvar="SCORELINE_DATA_DIR",
        show_default=False,
    ),
]


def prepare(data_dir: Path | None) -> Settings:
    """Load settings (env over `<data-dir>/env`) and configure logging for this process."""
    settings = load_settings(data_dir)
    configure_logging(settings.log_level, settings.log_format, production=settings.is_production)
    return settings


def refuse_in_production(settings: Settings, what: str) -> None:
    if settings.is_production:
        typer.echo(
            f"error: {what} is a development tool and refuses to run with SCORELINE_ENV=production", err=True
        )
        raise typer.Exit(2)
