"""`scoreline partners create|revoke`: partner API keys for the feeds (`GET /v1/feeds/{doc}`).

`create` explains itself on stderr and prints the key alone on stdout, so the key is the last line
of the output and `KEY=$(scoreline partners create acme --competitions 8)` captures just the key.
The key is shown once: only its sha-256 is kept (see `scoreline.feeds.partners` for why that hash).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Annotated, Any, NoReturn, TypeVar

import typer
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine

from scoreline.cli.common import DataDirOption, prepare
from scoreline.db.engine import create_engine
from scoreline.feeds.partners import PartnerError, create_partner, revoke_partner

partners_app = typer.Typer(
    help="Partners: API keys that read the feeds of granted competitions.", no_args_is_help=True
)

EXIT_FAILED = 1
KEY_HINT = "API key shown once; store it now (only its hash is kept)"

T = TypeVar("T")
NameArgument = Annotated[str, typer.Argument(help="The partner's unique name.", show_default=False)]


@partners_app.command("create")
def create(
    name: NameArgument,
    competitions: Annotated[
        str,
        typer.Option(
            "--competitions", help="Competition ids this partner may read: ID[,ID...].", show_default=False
        ),
    ],
    data_dir: DataDirOption = None,
) -> None:
    """Create a partner for the given competitions and print its API key (last line)."""
    ids = _competition_ids(competitions)
    partner, api_key = _with_engine(data_dir, lambda engine: create_partner(engine, name, ids))
    granted = ", ".join(str(competition) for competition in sorted(partner.competitions))
    typer.echo(f"partner {partner.name!r} may read competitions {granted}", err=True)
    typer.echo(KEY_HINT)
    typer.echo(api_key)


@partners_app.command("revoke")
def revoke(name: NameArgument, data_dir: DataDirOption = None) -> None:
    """Revoke a partner's API key (API processes refuse it within moments: 403)."""
    partner = _with_engine(data_dir, lambda engine: revoke_partner(engine, name))
    typer.echo(f"partner {partner.name!r} revoked: its API key no longer reads feeds")


def _with_engine(data_dir: Path | None, work: Callable[[AsyncEngine], Coroutine[Any, Any, T]]) -> T:
    """Run `work` against DATABASE_URL; a partner error or an unusable database ends the command."""
    settings = prepare(data_dir)
    try:
        database_url = settings.require_database_url()
    except RuntimeError as error:
        _fail(str(error))

    async def run() -> T:
        engine = create_engine(database_url, pool_size=1)
        try:
            return await work(engine)
        finally:
            await engine.dispose()

    try:
        return asyncio.run(run())
    except PartnerError as error:
        _fail(str(error))
    except (OSError, SQLAlchemyError) as error:
        _fail(f"cannot use the database: {type(error).__name__}: {error}")


def _competition_ids(text: str) -> list[int]:
    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise typer.BadParameter("expected competition ids like 8,564", param_hint="--competitions") from None


def _fail(message: str) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(EXIT_FAILED)
