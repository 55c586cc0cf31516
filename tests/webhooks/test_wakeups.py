"""Wake-ups: a change is delivered promptly even when its NOTIFY came while it could not be read yet."""

from __future__ import annotations

import asyncio
import time
from datetime import timedelta

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from scoreline.settings import Settings
from scoreline.webhooks.service import WebhookService
from tests.feeds.partner_matches import match_in
from tests.support.waiting import eventually
from tests.webhooks.conftest import LEAGUE, endpoint_at
from tests.webhooks.receivers import receiver

MATCH = 93000401


async def test_a_change_committed_behind_an_open_transaction_is_not_left_to_the_poll(
    engine: AsyncEngine, webhook_settings: Settings, partner: str
) -> None:
    """The filler read once at the change's NOTIFY, found it held back behind an older open
    transaction (a claim, a record, another commit), and then slept to its next poll (2 s in
    production) before reading it: it now reads again within milliseconds while rows are held."""
    async with receiver() as seen:
        await endpoint_at(engine, seen.url)
        match = await match_in(engine, MATCH, LEAGUE)
        service = WebhookService(engine, webhook_settings, poll_interval=timedelta(seconds=10))
        service.start()
        try:
            await asyncio.wait_for(service.leading.wait(), 10)
            await asyncio.sleep(0.3)  # the filler has read once and waits for a NOTIFY
            async with engine.connect() as older:
                await older.execute(text("SELECT pg_current_xact_id()"))  # an xid, held open
                await match.change(entries=1)
                await asyncio.sleep(0.2)  # its NOTIFY came and went while it was held back
                await older.rollback()
            released = time.monotonic()

            async def delivered() -> bool:
                return len(seen.delivered()) == 1

            await eventually(delivered, within=5)
            assert time.monotonic() - released < 1.0
        finally:
            await service.stop()
