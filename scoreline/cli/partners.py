"""`scoreline partners create|revoke`: partner API keys for the feeds (`GET /v1/feeds/{doc}`).

`create` explains itself on stderr and prints the key alone on stdout, so the key is the last line
of the output and `KEY=$(scoreline partners create acme --competitions 8)` captures just the key.
The key is shown once: only its sha-256 is kept (see `scoreline.feeds.partners` for why that hash).
"""

from __future__ import annotations

from typing import Annotated

import typer

from scoreline.cli.common import DataDirOption, with_database
from scoreline.feeds.partners import PartnerError, create_partner, revoke_partner

partners_app = typer.Typer(
    help="Partners: API keys that read the feeds of granted competitions.", no_args_is_help=True
)

KEY_HINT = "API key shown once; store it now (only its hash is kept)"

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


def _competition_ids(text: str) -> list[int]:
    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise typer.BadParameter("expected competition ids like 8,564", param_hint="--competitions") from None
