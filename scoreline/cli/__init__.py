"""The `scoreline` command: the service's commands, and the devkit's where it is installed."""

from __future__ import annotations

from importlib.metadata import entry_points

import typer

from scoreline.cli.accounts import desks_app, fixtures_app, operators_app
from scoreline.cli.partners import partners_app
from scoreline.cli.provider import provider_app
from scoreline.cli.replay import replay
from scoreline.cli.services import api, feeds, migrate, worker
from scoreline.cli.trace import trace

app = typer.Typer(
    name="scoreline",
    help="Scoreline: live scores from providers and scorer desks, one ordered log per match, pushed out once.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.command()(worker)
app.command()(feeds)
app.command()(api)
app.command()(migrate)
app.command()(replay)
app.command()(trace)
app.add_typer(provider_app, name="provider")
app.add_typer(partners_app, name="partners")
app.add_typer(desks_app, name="desks")
app.add_typer(operators_app, name="operators")
app.add_typer(fixtures_app, name="fixtures")
for plugin in entry_points(group="scoreline.commands"):
    plugin.load()(app)


def main() -> None:
    app()
