"""The `scoreline` command."""

from __future__ import annotations

import typer

from scoreline.cli.dev import demo, dev
from scoreline.cli.provider import provider_app
from scoreline.cli.replay import replay
from scoreline.cli.services import api, migrate, worker
from scoreline.cli.sim import sim_app

app = typer.Typer(
    name="scoreline",
    help="Scoreline: live scores from providers and scorer desks, one ordered log per match, pushed out once.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.command()(dev)
app.command()(demo)
app.command()(worker)
app.command()(api)
app.command()(migrate)
app.command()(replay)
app.add_typer(sim_app, name="sim")
app.add_typer(provider_app, name="provider")


def main() -> None:
    app()
