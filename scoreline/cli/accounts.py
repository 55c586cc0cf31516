"""`scoreline desks|operators|fixtures ...`: scorer accounts and desk-scored fixtures, in Postgres.

Every `create` explains itself on stderr and prints what it made (a token or a fixture id) alone on
stdout, so `TOKEN=$(scoreline desks create north --fixtures 81000001)` captures just the token and
the token is the last line of the output either way. A token is shown once: only its hash is kept.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError

from domain.rules import Mode, Sport
from scoreline.accounts.desk_fixtures import FixtureDraft, create_fixture
from scoreline.accounts.store import (
    AccountError,
    create_desk,
    create_operator,
    revoke_desk,
    revoke_operator,
)
from scoreline.cli.common import DataDirOption, fail, with_database

desks_app = typer.Typer(
    help="Scorer desks: tokens that may score the fixtures they were given.", no_args_is_help=True
)
operators_app = typer.Typer(
    help="Operators: tokens that create fixtures and may act on every fixture.", no_args_is_help=True
)
fixtures_app = typer.Typer(help="Fixtures no provider knows, scored by desks.", no_args_is_help=True)

TOKEN_HINT = "token shown once; store it now (only its hash is kept)"

NameArgument = Annotated[str, typer.Argument(help="The account's unique name.", show_default=False)]


@fixtures_app.callback()
def _fixtures() -> None:
    """Fixtures no provider knows, scored by desks."""
    # A callback keeps `create` a subcommand while it is the only one.


@desks_app.command("create")
def desks_create(
    name: NameArgument,
    fixtures: Annotated[
        str,
        typer.Option("--fixtures", help="Fixture ids this desk may score: ID[,ID...].", show_default=False),
    ],
    data_dir: DataDirOption = None,
) -> None:
    """Create a desk for the given fixtures and print its bearer token (last line)."""
    ids = _fixture_ids(fixtures)
    desk, token = with_database(data_dir, lambda engine: create_desk(engine, name, ids), AccountError)
    scope = ", ".join(str(i) for i in sorted(desk.fixtures))
    typer.echo(f"desk {desk.name!r} (id {desk.id}) may score fixtures {scope}", err=True)
    typer.echo(TOKEN_HINT, err=True)
    typer.echo(token)


@desks_app.command("revoke")
def desks_revoke(name: NameArgument, data_dir: DataDirOption = None) -> None:
    """Revoke a desk's token (API processes forget it within a few seconds)."""
    desk = with_database(data_dir, lambda engine: revoke_desk(engine, name), AccountError)
    typer.echo(f"desk {desk.name!r} (id {desk.id}) revoked: its token no longer authenticates")


@operators_app.command("create")
def operators_create(name: NameArgument, data_dir: DataDirOption = None) -> None:
    """Create an operator and print its bearer token (last line)."""
    operator, token = with_database(data_dir, lambda engine: create_operator(engine, name), AccountError)
    typer.echo(f"operator {operator.name!r} (id {operator.id}) created", err=True)
    typer.echo(TOKEN_HINT, err=True)
    typer.echo(token)


@operators_app.command("revoke")
def operators_revoke(name: NameArgument, data_dir: DataDirOption = None) -> None:
    """Revoke an operator's token (API processes forget it within a few seconds)."""
    operator = with_database(data_dir, lambda engine: revoke_operator(engine, name), AccountError)
    typer.echo(f"operator {operator.name!r} (id {operator.id}) revoked: its token no longer authenticates")


@fixtures_app.command("create")
def fixtures_create(
    sport: Annotated[Sport, typer.Option(help="The sport.", show_default=False)],
    home: Annotated[str, typer.Option(help="The home team's name.", show_default=False)],
    away: Annotated[str, typer.Option(help="The away team's name.", show_default=False)],
    kickoff: Annotated[
        str,
        typer.Option(help="ISO 8601 with a UTC offset, e.g. 2026-03-14T15:00:00+00:00.", show_default=False),
    ],
    mode: Annotated[Mode, typer.Option(help="Who owns the score at first.")] = "desk",
    competition: Annotated[str | None, typer.Option(help="The competition's name.")] = None,
    name: Annotated[str | None, typer.Option(help="The fixture's name (default 'HOME vs AWAY').")] = None,
    squads: Annotated[
        Path | None,
        typer.Option(
            help='A JSON file with "home" and "away" lists of players, each '
            '{"name", "shirt_number", "starting", "id"?}.',
            dir_okay=False,
        ),
    ] = None,
    data_dir: DataDirOption = None,
) -> None:
    """Create a fixture for desks to score and print its id (last line)."""
    players = _squads_file(squads) if squads is not None else {}
    payload: dict[str, Any] = {
        "sport": sport,
        "home": {"name": home, "players": players.get("home", [])},
        "away": {"name": away, "players": players.get("away", [])},
        "kickoff": kickoff,
        "mode": mode,
        "competition": competition,
        "name": name,
    }
    try:
        draft = FixtureDraft.model_validate(payload)
    except ValidationError as error:
        fail(*(f"{'.'.join(str(p) for p in e['loc']) or 'fixture'}: {e['msg']}" for e in error.errors()))
    fixture_id = with_database(data_dir, lambda engine: create_fixture(engine, draft), AccountError)
    typer.echo(f"fixture {draft.title!r} ({draft.sport}, {draft.mode}-scored) created", err=True)
    typer.echo(fixture_id)


def _fixture_ids(text: str) -> list[int]:
    try:
        ids = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise typer.BadParameter(
            "expected fixture ids like 81000001,81000002", param_hint="--fixtures"
        ) from None
    if not ids or min(ids) < 1:
        raise typer.BadParameter("expected one or more positive fixture ids", param_hint="--fixtures")
    return ids


def _squads_file(path: Path) -> dict[str, Any]:
    try:
        content = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as error:
        fail(f"cannot read a JSON document from {path}: {error}")
    if not isinstance(content, dict) or not set(content) <= {"home", "away"}:
        fail(f'{path}: expected {{"home": [players], "away": [players]}}')
    return content
