"""The development commands, added to `scoreline` when the devkit is installed."""

from __future__ import annotations

import typer

from devkit.cli.dev import demo, dev
from devkit.cli.sim import sim_app
from devkit.cli.soak import soak


def register(app: typer.Typer) -> None:
    """Add `dev`, `demo`, `soak` and `sim` (the `scoreline.commands` entry point)."""
    app.command()(dev)
    app.command()(demo)
    app.command()(soak)
    app.add_typer(sim_app, name="sim")
