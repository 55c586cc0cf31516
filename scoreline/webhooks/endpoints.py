"""A partner's webhook endpoints: create (the secret is shown once), list, rotate, pause, resume, delay.

The operator API and the CLI both come through here, so the URL rules (`urls.check_url`), the
delay bounds and the secret handling are the same whichever way an endpoint is made or changed.
Pausing stops sending and nothing else: what the endpoint is owed keeps being written while it is
paused, and resuming sends it in order from the first undelivered change. A resume also starts
each owed message's failure clock afresh, so an endpoint paused after a day of failures gets a new
day rather than being paused again by its next failure.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine

from scoreline.db.tables import partner, webhook_endpoint, webhook_message
from scoreline.feeds.partner_delay import MAX_DELAY_SECONDS
from scoreline.webhooks.signing import new_secret
from scoreline.webhooks.urls import UrlPolicy, UrlRefusedError, check_url

ROTATION_OVERLAP: Final = timedelta(hours=24)
"""How long the secret before a rotation keeps signing beside the new one."""
OPERATOR_PAUSE: Final = "paused by an operator"


class EndpointError(Exception):
    """An endpoint command that cannot be carried out (the message says why)."""


@dataclass(frozen=True, slots=True)
class Endpoint:
    id: int
    partner: str
    url: str
    delay_seconds: int
    paused_at: datetime | None
    paused_reason: str | None
    created_at: datetime
    previous_secret_until: datetime | None


def signing_secrets(
    secret: str, previous: str | None, previous_until: datetime | None, now: datetime
) -> list[str]:
    """The secrets a message sent at `now` is signed with: the current one, and the one before a
    rotation until its overlap ends."""
    if previous is not None and previous_until is not None and now < previous_until:
        return [secret, previous]
    return [secret]


_COLUMNS = (
    webhook_endpoint.c.id,
    partner.c.name.label("partner"),
    webhook_endpoint.c.url,
    webhook_endpoint.c.delay_seconds,
    webhook_endpoint.c.paused_at,
    webhook_endpoint.c.paused_reason,
    webhook_endpoint.c.created_at,
    webhook_endpoint.c.previous_secret_until,
)
_SELECT = select(*_COLUMNS).select_from(
    webhook_endpoint.join(partner, partner.c.id == webhook_endpoint.c.partner_id)
)


def _checked_delay(delay_seconds: int) -> int:
    if not 0 <= delay_seconds <= MAX_DELAY_SECONDS:
        raise EndpointError(f"a delay is 0 to {MAX_DELAY_SECONDS} seconds")
    return delay_seconds


async def create_endpoint(
    engine: AsyncEngine, partner_name: str, url: str, policy: UrlPolicy, *, delay_seconds: int = 0
) -> tuple[Endpoint, str]:
    """A new endpoint of an active partner; returns it with its signing secret (shown once).

    It is owed every change committed from its creation on.
    """
    try:
        check_url(url, policy)
    except UrlRefusedError as error:
        raise EndpointError(str(error)) from None
    secret = new_secret()
    async with engine.begin() as conn:
        owner = (
            await conn.execute(select(partner.c.id, partner.c.active).where(partner.c.name == partner_name))
        ).first()
        if owner is None:
            raise EndpointError(f"there is no partner named {partner_name!r}")
        if not owner.active:
            raise EndpointError(f"partner {partner_name!r} is revoked")
        try:
            async with conn.begin_nested():
                created = (
                    await conn.execute(
                        webhook_endpoint.insert()
                        .values(
                            partner_id=owner.id,
                            url=url,
                            secret=secret,
                            delay_seconds=_checked_delay(delay_seconds),
                            # The statement's clock, not the transaction's: the filler compares it
                            # with commit times, and nothing committed before now is owed.
                            created_at=func.clock_timestamp(),
                        )
                        .returning(webhook_endpoint.c.id)
                    )
                ).scalar_one()
        except IntegrityError:
            raise EndpointError(f"partner {partner_name!r} already has an endpoint at {url}") from None
        endpoint = (await conn.execute(_SELECT.where(webhook_endpoint.c.id == created))).one()
    return Endpoint(**endpoint._mapping), secret


async def list_endpoints(engine: AsyncEngine, partner_name: str | None = None) -> list[Endpoint]:
    query = _SELECT.order_by(webhook_endpoint.c.id)
    if partner_name is not None:
        query = query.where(partner.c.name == partner_name)
    async with engine.connect() as conn:
        return [Endpoint(**row._mapping) for row in await conn.execute(query)]


async def get_endpoint(engine: AsyncEngine, endpoint_id: int) -> Endpoint:
    async with engine.connect() as conn:
        row = (await conn.execute(_SELECT.where(webhook_endpoint.c.id == endpoint_id))).first()
    if row is None:
        raise EndpointError(f"there is no webhook endpoint {endpoint_id}")
    return Endpoint(**row._mapping)


async def rotate_secret(engine: AsyncEngine, endpoint_id: int) -> str:
    """A new secret; the one it replaces keeps signing beside it for `ROTATION_OVERLAP`."""
    secret = new_secret()
    async with engine.begin() as conn:
        done = (
            await conn.execute(
                webhook_endpoint.update()
                .where(webhook_endpoint.c.id == endpoint_id)
                .values(
                    previous_secret=webhook_endpoint.c.secret,
                    previous_secret_until=func.now() + ROTATION_OVERLAP,
                    secret=secret,
                )
                .returning(webhook_endpoint.c.id)
            )
        ).first()
    if done is None:
        raise EndpointError(f"there is no webhook endpoint {endpoint_id}")
    return secret


async def pause_endpoint(engine: AsyncEngine, endpoint_id: int, reason: str = OPERATOR_PAUSE) -> Endpoint:
    """Stop sending (owed changes keep accumulating); an endpoint already paused keeps its reason."""
    async with engine.begin() as conn:
        await conn.execute(
            webhook_endpoint.update()
            .where(webhook_endpoint.c.id == endpoint_id, webhook_endpoint.c.paused_at.is_(None))
            .values(paused_at=func.now(), paused_reason=reason)
        )
    return await get_endpoint(engine, endpoint_id)


async def resume_endpoint(engine: AsyncEngine, endpoint_id: int) -> Endpoint:
    """Send again from the first undelivered change of each match, at once, with a fresh retry clock."""
    async with engine.begin() as conn:
        await conn.execute(
            webhook_endpoint.update()
            .where(webhook_endpoint.c.id == endpoint_id)
            .values(paused_at=None, paused_reason=None)
        )
        await conn.execute(
            webhook_message.update()
            .where(webhook_message.c.endpoint_id == endpoint_id, webhook_message.c.delivered_at.is_(None))
            .values(next_attempt_at=func.now(), failing_since=None)
        )
    return await get_endpoint(engine, endpoint_id)
