"""`scoreline sim provider` and `scoreline sim apns`: the simulators tests and the demo talk to."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from scoreline.cli.common import DataDirOption, prepare, refuse_in_production

sim_app = typer.Typer(help="Development simulators of the outside world (refuse to run in production).")


@sim_app.command("provider")
def provider(
    data_dir: DataDirOption = None,
    recording: Annotated[
        list[Path] | None,
        typer.Option("--recording", help="A recording to replay (repeatable).", exists=True, dir_okay=False),
    ] = None,
    speed: Annotated[float, typer.Option(help="Replay speed (1 = real time).", min=0.001)] = 1.0,
    start_in: Annotated[float, typer.Option(help="Real seconds until replay time t=0.", min=0)] = 30.0,
    host: Annotated[str, typer.Option(help="Interface to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to bind.")] = 8100,
    token: Annotated[
        str | None, typer.Option(help="API token clients must send (default PROVIDER_TOKEN).")
    ] = None,
    plan_calls: Annotated[
        int | None,
        typer.Option(help="Calls each API allows per plan window (default: SportMonks' plans).", min=1),
    ] = None,
    plan_window: Annotated[
        float,
        typer.Option(help="The plan's counting window in real seconds (an hour at SportMonks).", min=0.001),
    ] = 3600.0,
) -> None:
    """Serve a SportMonks-style API that replays recordings on a clock, with fault injection."""
    from devkit.simulators.provider.config import ProviderSimConfig
    from devkit.simulators.provider.server import run

    settings = prepare(data_dir)
    refuse_in_production(settings, "the provider simulator")
    run(
        ProviderSimConfig(
            recordings=tuple(recording or ()),
            speed=speed,
            start_in=start_in,
            token=token or settings.provider_token.get_secret_value(),
            host=host,
            port=port,
            plan=None if plan_calls is None else (plan_calls, plan_window),
        )
    )


@sim_app.command("apns")
def apns(
    data_dir: DataDirOption = None,
    host: Annotated[str, typer.Option(help="Interface to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="HTTP/2 TLS port (the APNs side).")] = 8443,
    admin_port: Annotated[int, typer.Option(help="Plain HTTP admin port (/healthz, /_sim/...).")] = 8444,
    journal_file: Annotated[
        Path | None,
        typer.Option(
            "--journal-file",
            help="Append every push answered (and every unregister) to this file, one JSON line each.",
            dir_okay=False,
        ),
    ] = None,
) -> None:
    """Serve an APNs look-alike over HTTP/2 + TLS that checks JWTs, headers and payloads like Apple."""
    from devkit.simulators.apns.config import ApnsSimConfig
    from devkit.simulators.apns.server import run

    settings = prepare(data_dir)
    refuse_in_production(settings, "the APNs simulator")
    run(
        ApnsSimConfig(
            data_dir=settings.data_dir.resolve() / "apns",
            host=host,
            port=port,
            admin_port=admin_port,
            team_id=settings.apns_team_id,
            key_id=settings.apns_key_id,
            topic=settings.apns_topic,
            journal_file=journal_file,
        )
    )
