"""Webhook fixtures: a partner granted the league, settings with short backoff, a running service."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from scoreline.feeds.partners import create_partner
from scoreline.settings import Settings
from scoreline.webhooks.endpoints import Endpoint, create_endpoint
from scoreline.webhooks.service import WebhookService
from scoreline.webhooks.urls import UrlPolicy

LEAGUE = 8
OTHER_LEAGUE = 9
RECORDED_LEAGUE = 501
"""The league of the recorded match (`recordings/football-basic.jsonl`)."""
PARTNER = "acme"
DEV = UrlPolicy(development=True)


@pytest.fixture
def webhook_settings(database_url: str, redis_url: str) -> Settings:
    """Backoff capped at 0.2 s and a 0.5 s timeout, so minutes of failures take a second or two."""
    return Settings(
        database_url=database_url,
        redis_url=redis_url,
        log_format="json",
        webhook_backoff_first=timedelta(milliseconds=20),
        webhook_backoff_cap=timedelta(milliseconds=200),
        webhook_timeout=timedelta(milliseconds=500),
        webhook_concurrency=32,
        webhook_endpoint_concurrency=4,
    )


@pytest.fixture
async def partner(engine: AsyncEngine) -> str:
    await create_partner(engine, PARTNER, [LEAGUE, RECORDED_LEAGUE])
    return PARTNER


async def endpoint_at(engine: AsyncEngine, url: str, *, delay: int = 0) -> tuple[Endpoint, str]:
    return await create_endpoint(engine, PARTNER, url, DEV, delay_seconds=delay)


@asynccontextmanager
async def running(engine: AsyncEngine, settings: Settings) -> AsyncIterator[WebhookService]:
    service = WebhookService(engine, settings, poll_interval=timedelta(milliseconds=100))
    service.start()
    try:
        yield service
    finally:
        await service.stop()
