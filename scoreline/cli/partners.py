"""`scoreline partners create|revoke|delay|webhooks`: partner API keys for the feeds, and their webhooks.

`create` explains itself on stderr and prints the key alone on stdout, so the key is the last line
of the output and `KEY=$(scoreline partners create acme --competitions 8)` captures just the key.
The key is shown once: only its sha-256 is kept (see `scoreline.feeds.partners` for why that hash).
`webhooks add` and `webhooks rotate` print the endpoint's signing secret the same way, alone on the
last line (`SECRET=$(scoreline partners webhooks add acme https://…)`); it is shown once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from scoreline.cli.common import DataDirOption, with_database
from scoreline.feeds.partner_delay import set_partner_delay
from scoreline.feeds.partners import PartnerError, create_partner, revoke_partner
from scoreline.settings import load_settings
from scoreline.webhooks.endpoints import (
    Endpoint,
    EndpointError,
    create_endpoint,
    list_endpoints,
    pause_endpoint,
    resume_endpoint,
    rotate_secret,
)
from scoreline.webhooks.ping import ping
from scoreline.webhooks.urls import UrlPolicy

partners_app = typer.Typer(
    help="Partners: API keys that read the feeds of granted competitions.", no_args_is_help=True
)

KEY_HINT = "API key shown once; store it now (only its hash is kept)"
SECRET_HINT = "signing secret shown once; store it now (verify each webhook with it)"

webhooks_app = typer.Typer(
    help="A partner's webhook endpoints: signed POSTs of every change, in order per match.",
    no_args_is_help=True,
)
partners_app.add_typer(webhooks_app, name="webhooks")

NameArgument = Annotated[str, typer.Argument(help="The partner's unique name.", show_default=False)]
EndpointArgument = Annotated[int, typer.Argument(help="The endpoint's id (see `list`).", show_default=False)]


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
    partner, api_key = with_database(data_dir, lambda engine: create_partner(engine, name, ids), PartnerError)
    granted = ", ".join(str(competition) for competition in sorted(partner.competitions))
    typer.echo(f"partner {partner.name!r} may read competitions {granted}", err=True)
    typer.echo(KEY_HINT)
    typer.echo(api_key)


@partners_app.command("revoke")
def revoke(name: NameArgument, data_dir: DataDirOption = None) -> None:
    """Revoke a partner's API key (API processes refuse it within moments: 403)."""
    partner = with_database(data_dir, lambda engine: revoke_partner(engine, name), PartnerError)
    typer.echo(f"partner {partner.name!r} revoked: its API key no longer reads feeds")


@partners_app.command("delay")
def delay(
    name: NameArgument,
    seconds: Annotated[
        int, typer.Argument(help="0 to 300: what the key reads stays this far behind.", show_default=False)
    ],
    data_dir: DataDirOption = None,
) -> None:
    """Set the broadcast delay of what a partner's key reads (the change cursor), 0 for none."""
    with_database(data_dir, lambda engine: set_partner_delay(engine, name, seconds), PartnerError)
    typer.echo(f"partner {name.strip()!r} reads every change {seconds} s after its commit")


def _competition_ids(text: str) -> list[int]:
    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise typer.BadParameter("expected competition ids like 8,564", param_hint="--competitions") from None


def _policy(data_dir: Path | None) -> UrlPolicy:
    return UrlPolicy(development=not load_settings(data_dir).is_production)


def _line(endpoint: Endpoint) -> str:
    state = "active" if endpoint.paused_at is None else f"paused: {endpoint.paused_reason}"
    return f"{endpoint.id}\t{endpoint.partner}\t{endpoint.url}\tdelay={endpoint.delay_seconds}s\t{state}"


@webhooks_app.command("add")
def webhooks_add(
    name: NameArgument,
    url: Annotated[str, typer.Argument(help="https:// receiver URL.", show_default=False)],
    delay: Annotated[int, typer.Option("--delay", help="Broadcast delay in seconds (0-300).")] = 0,
    data_dir: DataDirOption = None,
) -> None:
    """Add an endpoint owed every change from now on; print its signing secret (last line)."""
    policy = _policy(data_dir)
    endpoint, secret = with_database(
        data_dir,
        lambda engine: create_endpoint(engine, name, url, policy, delay_seconds=delay),
        EndpointError,
    )
    typer.echo(f"endpoint {endpoint.id} of {endpoint.partner!r}: {endpoint.url}", err=True)
    typer.echo(SECRET_HINT)
    typer.echo(secret)


@webhooks_app.command("list")
def webhooks_list(
    name: Annotated[str | None, typer.Argument(help="Only this partner's.", show_default=False)] = None,
    data_dir: DataDirOption = None,
) -> None:
    """Every endpoint (or one partner's): id, partner, URL, delay, state."""
    for endpoint in with_database(data_dir, lambda engine: list_endpoints(engine, name), EndpointError):
        typer.echo(_line(endpoint))


@webhooks_app.command("pause")
def webhooks_pause(endpoint_id: EndpointArgument, data_dir: DataDirOption = None) -> None:
    """Stop sending to an endpoint; what it is owed keeps accumulating, nothing is dropped."""
    typer.echo(
        _line(with_database(data_dir, lambda engine: pause_endpoint(engine, endpoint_id), EndpointError))
    )


@webhooks_app.command("resume")
def webhooks_resume(endpoint_id: EndpointArgument, data_dir: DataDirOption = None) -> None:
    """Send again, from the first undelivered change of each match."""
    typer.echo(
        _line(with_database(data_dir, lambda engine: resume_endpoint(engine, endpoint_id), EndpointError))
    )


@webhooks_app.command("rotate")
def webhooks_rotate(endpoint_id: EndpointArgument, data_dir: DataDirOption = None) -> None:
    """A new signing secret (last line); the old one keeps signing beside it for 24 hours."""
    secret = with_database(data_dir, lambda engine: rotate_secret(engine, endpoint_id), EndpointError)
    typer.echo("the previous secret signs beside this one for 24 hours", err=True)
    typer.echo(SECRET_HINT)
    typer.echo(secret)


@webhooks_app.command("test")
def webhooks_test(
    name: NameArgument,
    endpoint_id: Annotated[int | None, typer.Option("--endpoint", help="Only this endpoint id.")] = None,
    data_dir: DataDirOption = None,
) -> None:
    """Send a signed `webhook.ping` to each of the partner's endpoints and print each answer."""
    settings = load_settings(data_dir)
    policy = UrlPolicy(development=not settings.is_production)
    pinged = with_database(
        data_dir,
        lambda engine: ping(engine, name, policy, settings.webhook_timeout, endpoint_id),
        EndpointError,
    )
    failed = False
    for one in pinged:
        answer = one.answer
        outcome = f"HTTP {answer.status}" if answer.status is not None else f"no answer ({answer.error})"
        typer.echo(f"{one.endpoint_id}\t{one.url}\t{outcome}\t{answer.latency_ms} ms\t{answer.head[:200]!r}")
        failed = failed or not answer.delivered
    if failed:
        raise typer.Exit(1)
