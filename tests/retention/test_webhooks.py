"""Retention of the webhook tables: the delivery log for 30 days, delivered messages for the outbox's age."""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from activities.retention import RetentionActivities
from domain.retention import RetentionTable
from scoreline.feeds.partners import create_partner
from tests.readmodel.rows import MatchLog
from tests.retention.rows import AGES, FIXTURE_ID
from tests.webhooks import delivery_rows

ATTEMPT_AGE = AGES.webhook_attempt_age_seconds
MESSAGE_AGE = AGES.outbox_age_seconds
DAY = 86_400


async def _endpoint(engine: AsyncEngine) -> int:
    await create_partner(engine, "acme", [8])
    await MatchLog.create(engine, FIXTURE_ID)
    return await delivery_rows.endpoint(engine, "acme", "https://hooks.acme.example/scores")


async def _left(engine: AsyncEngine, query: str) -> list[int]:
    async with engine.connect() as conn:
        return list((await conn.execute(text(query))).scalars())


async def test_attempts_past_30_days_go_in_batches_and_younger_ones_stay(
    engine: AsyncEngine, retention: RetentionActivities
) -> None:
    """Three attempts of 31 days go (two, then one: the second batch is short); 29 days and today stay."""
    assert ATTEMPT_AGE == 30 * DAY
    endpoint_id = await _endpoint(engine)
    for seq, days in ((1, 31), (2, 31), (3, 31), (4, 29), (5, 0)):
        await delivery_rows.attempt(engine, endpoint_id, FIXTURE_ID, seq, days_ago=days)

    first = await retention.delete_batch(RetentionTable.WEBHOOK_ATTEMPT, ATTEMPT_AGE, 2)
    second = await retention.delete_batch(RetentionTable.WEBHOOK_ATTEMPT, ATTEMPT_AGE, 2)
    third = await retention.delete_batch(RetentionTable.WEBHOOK_ATTEMPT, ATTEMPT_AGE, 2)

    assert [(b.deleted, b.full) for b in (first, second, third)] == [(2, True), (1, False), (0, False)]
    assert await _left(engine, "SELECT seq FROM webhook_attempt ORDER BY seq") == [4, 5]


async def test_delivered_messages_past_the_outbox_age_go_owed_ones_never(
    engine: AsyncEngine, retention: RetentionActivities
) -> None:
    """Delivered 8 days ago goes; delivered yesterday stays; owed since 8 days ago stays (the engine's work)."""
    assert MESSAGE_AGE == 7 * DAY
    endpoint_id = await _endpoint(engine)
    await delivery_rows.messages(engine, endpoint_id, FIXTURE_ID, [1, 2, 3], delivered=True)
    await delivery_rows.messages(engine, endpoint_id, FIXTURE_ID, [4], delivered=False)
    async with engine.begin() as conn:
        await conn.execute(
            text(
                """UPDATE webhook_message SET committed_at = now() - interval '8 days',
                    delivered_at = CASE WHEN seq IN (1, 2) THEN now() - interval '8 days'
                                        WHEN seq = 3 THEN now() - interval '1 day' END"""
            )
        )

    batch = await retention.delete_batch(RetentionTable.WEBHOOK_MESSAGE, MESSAGE_AGE, 1000)

    assert (batch.deleted, batch.full) == (2, False)
    assert await _left(engine, "SELECT seq FROM webhook_message ORDER BY seq") == [3, 4]
