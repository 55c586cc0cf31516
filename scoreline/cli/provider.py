"""`scoreline provider ...`: look at provider data the way the ingest sees it."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from activities.provider.cricket.normaliser import normalise_cricket_fixture
from activities.provider.normaliser import ProviderPayloadError, normalise_fixture
from domain.cricket.board import cricket_fixture_id
from domain.snapshot import Snapshot, Sport
from scoreline.cli.common import DataDirOption, prepare

provider_app = typer.Typer(
    help="Provider (SportMonks) tools: normalise fixture JSON into Scoreline snapshots.",
    no_args_is_help=True,
)

EXIT_BAD_INPUT = 2

SportOption = Annotated[
    Sport, typer.Option("--sport", help="Which API the fixture comes from: Football v3 or Cricket v2.")
]


@provider_app.callback()
def _provider() -> None:
    """Provider (SportMonks) tools."""
    # A callback keeps `normalize` a subcommand even while it is the only one.


@provider_app.command("normalize")
def normalize(
    file: Annotated[
        str,
        typer.Argument(
            help="A fixture JSON file: a bare fixture, a {'data': {...}} response or a recording line "
            "{'t': ..., 'fixture': {...}}. '-' reads stdin.",
        ),
    ] = "-",
    sport: SportOption = Sport.FOOTBALL,
) -> None:
    """Print the fixture as a normalised snapshot (JSON); exit 2 if it is not a fixture."""
    try:
        text = sys.stdin.read() if file == "-" else Path(file).read_text(encoding="utf-8")
        payload = json.loads(text)
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        typer.echo(f"error: cannot read a JSON document from {file}: {exc}", err=True)
        raise typer.Exit(EXIT_BAD_INPUT) from None
    if isinstance(payload, dict) and "fixture" in payload and "id" not in payload:
        payload = payload["fixture"]  # a recording line
    try:
        snapshot = (
            normalise_cricket_fixture(payload) if sport is Sport.CRICKET else normalise_fixture(payload)
        )
    except ProviderPayloadError as exc:
        typer.echo(f"error: not a fixture: {exc}", err=True)
        raise typer.Exit(EXIT_BAD_INPUT) from None
    _print(snapshot)


@provider_app.command("fetch")
def fetch(
    fixture_id: Annotated[int, typer.Argument(help="The provider's fixture id.", min=1)],
    data_dir: DataDirOption = None,
    sport: SportOption = Sport.FOOTBALL,
) -> None:
    """Fetch one fixture from the configured provider (`PROVIDER_URL`, or `CRICKET_PROVIDER_URL`
    with `--sport cricket`) and print it as a normalised snapshot."""
    from activities.provider.client import SportMonksClient
    from activities.provider.cricket.client import CricketClient
    from activities.provider.errors import ProviderError

    settings = prepare(data_dir)

    async def fetch_one() -> Snapshot | None:
        if sport is Sport.CRICKET:
            async with CricketClient.from_settings(settings) as cricket:
                return await cricket.fixture(cricket_fixture_id(fixture_id))
        async with SportMonksClient.from_settings(settings) as client:
            return await client.fixture(fixture_id)

    try:
        snapshot = asyncio.run(fetch_one())
    except ProviderError as exc:
        typer.echo(f"error: {type(exc).__name__}: {exc}", err=True)
        raise typer.Exit(EXIT_BAD_INPUT) from None
    if snapshot is None:
        typer.echo(f"error: the provider has no fixture {fixture_id}", err=True)
        raise typer.Exit(EXIT_BAD_INPUT)
    _print(snapshot)


def _print(snapshot: Snapshot) -> None:
    typer.echo(json.dumps(snapshot.model_dump(mode="json"), indent=2, ensure_ascii=False))
