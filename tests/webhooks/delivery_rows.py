"""Rows of the webhook tables as the delivery engine leaves them, for the API tests to read.

Written with SQL because these tests are about what the API shows: the engine that writes them
for real is tested on its own, with real receivers.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import timedelta

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine


async def endpoint(engine: AsyncEngine, partner: str, url: str, *, paused_reason: str | None = None) -> int:
    """An endpoint of `partner` (paused with `paused_reason` when given); its id."""
    async with engine.begin() as conn:
        found = await conn.execute(
            text(
                """INSERT INTO webhook_endpoint (partner_id, url, secret, paused_at, paused_reason)
                SELECT id, :url, 'whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0', CASE WHEN
                    CAST(:reason AS text) IS NULL THEN NULL ELSE now() END, :reason
                FROM partner WHERE name = :partner RETURNING id"""
            ),
            {"partner": partner, "url": url, "reason": paused_reason},
        )
        return int(found.scalar_one())


async def messages(
    engine: AsyncEngine,
    endpoint_id: int,
    fixture_id: int,
    seqs: Iterable[int],
    *,
    delivered: bool,
    committed_ago: timedelta = timedelta(minutes=5),
) -> None:
    """Messages owed to the endpoint for these seqs of the match, delivered or still owed."""
    async with engine.begin() as conn:
        for seq in seqs:
            await conn.execute(
                text(
                    """INSERT INTO webhook_message (endpoint_id, fixture_id, seq, body, committed_at,
                        attempts, next_attempt_at, delivered_at)
                    VALUES (:endpoint, :fixture, :seq, CAST(:body AS jsonb), now() - make_interval(secs => :ago),
                        1, now() - make_interval(secs => :ago),
                        CASE WHEN :delivered THEN now() ELSE NULL END)"""
                ),
                {
                    "endpoint": endpoint_id,
                    "fixture": fixture_id,
                    "seq": seq,
                    "body": json.dumps({"fixture_id": fixture_id, "seq": seq}),
                    "ago": committed_ago.total_seconds(),
                    "delivered": delivered,
                },
            )


async def attempt(
    engine: AsyncEngine,
    endpoint_id: int,
    fixture_id: int,
    seq: int,
    *,
    status: int | None = 200,
    error: str | None = None,
    days_ago: float = 0,
) -> int:
    """One attempt in the delivery log; its id."""
    async with engine.begin() as conn:
        found = await conn.execute(
            text(
                """INSERT INTO webhook_attempt (endpoint_id, fixture_id, seq, message_id, status,
                    latency_ms, answer_head, error, created_at)
                VALUES (:endpoint, :fixture, :seq, :message_id, :status, 42, :head, :error,
                    now() - make_interval(secs => :ago))
                RETURNING id"""
            ),
            {
                "endpoint": endpoint_id,
                "fixture": fixture_id,
                "seq": seq,
                "message_id": f"msg_{endpoint_id}_{fixture_id}_{seq}",
                "status": status,
                "head": "" if status is None else f'{{"ok": {str(status < 300).lower()}}}',
                "error": error,
                "ago": days_ago * 86_400,
            },
        )
        return int(found.scalar_one())
