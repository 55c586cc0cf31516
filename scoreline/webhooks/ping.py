"""A signed ping to a partner's endpoints (`scoreline partners webhooks test`), to check a receiver.

Signed exactly like a change (same secrets, rotation included) so a receiver's verification code is
what gets tested; its `type` is `webhook.ping`, so a receiver can tell it from a change. The ping
is sent even to a paused endpoint: checking a receiver before resuming it is the point.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from scoreline.db.tables import partner, webhook_endpoint
from scoreline.webhooks.endpoints import EndpointError, signing_secrets
from scoreline.webhooks.sender import Answer, Sender
from scoreline.webhooks.urls import UrlPolicy

PING_TYPE = "webhook.ping"


@dataclass(frozen=True, slots=True)
class Pinged:
    endpoint_id: int
    url: str
    answer: Answer


async def ping(
    engine: AsyncEngine,
    partner_name: str,
    policy: UrlPolicy,
    timeout: timedelta,
    endpoint_id: int | None = None,
) -> list[Pinged]:
    """Ping each endpoint of the partner (or the one given), one after another."""
    query = (
        select(
            webhook_endpoint.c.id,
            webhook_endpoint.c.url,
            webhook_endpoint.c.secret,
            webhook_endpoint.c.previous_secret,
            webhook_endpoint.c.previous_secret_until,
        )
        .select_from(webhook_endpoint.join(partner, partner.c.id == webhook_endpoint.c.partner_id))
        .where(partner.c.name == partner_name)
        .order_by(webhook_endpoint.c.id)
    )
    if endpoint_id is not None:
        query = query.where(webhook_endpoint.c.id == endpoint_id)
    async with engine.connect() as conn:
        rows = (await conn.execute(query)).all()
    if not rows:
        raise EndpointError(f"partner {partner_name!r} has no such webhook endpoint")
    sender = Sender(policy, timeout, max_connections=1)
    try:
        pinged = []
        for row in rows:
            now = datetime.now(UTC)
            body = json.dumps(
                {"type": PING_TYPE, "endpoint_id": row.id, "sent_at": now.isoformat()}, separators=(",", ":")
            ).encode()
            keys = signing_secrets(row.secret, row.previous_secret, row.previous_secret_until, now)
            answer = await sender.post(row.url, f"msg_ping_{row.id}_{secrets.token_hex(8)}", body, keys)
            pinged.append(Pinged(endpoint_id=row.id, url=row.url, answer=answer))
        return pinged
    finally:
        await sender.aclose()
