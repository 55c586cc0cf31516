"""Options and helpers every `scoreline` command shares."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Annotated, Any, NoReturn, TypeVar

import typer
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine

from scoreline.db.engine import create_engine
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


EXIT_FAILED = 1
T = TypeVar("T")


def fail(*lines: str) -> NoReturn:
    """End the command: each line as `error: …` on stderr, exit 1."""
    for line in lines:
        typer.echo(f"error: {line}", err=True)
    raise typer.Exit(EXIT_FAILED)


def with_database(
    data_dir: Path | None,
    work: Callable[[AsyncEngine], Coroutine[Any, Any, T]],
    refused: type[Exception],
) -> T:
    """Run `work` against DATABASE_URL; a `refused` error or an unusable database ends the command."""
    settings = prepare(data_dir)
    try:
        database_url = settings.require_database_url()
    except RuntimeError as error:
        fail(str(error))

    async def run() -> T:
        engine = create_engine(database_url, pool_size=1)
        try:
            return await work(engine)
        finally:
            await engine.dispose()

    try:
        return asyncio.run(run())
    except refused as error:
        fail(str(error))
    except (OSError, SQLAlchemyError) as error:
        fail(f"cannot use the database: {type(error).__name__}: {error}")
