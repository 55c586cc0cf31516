"""The partner feed builder's process (`scoreline feeds`): not a Temporal worker, a reader of the outbox.

It keeps the partner documents current (`scoreline.feeds.builder`) and delivers partner webhooks
(`scoreline.webhooks.service`). Run as many as you like: one builder and one webhook filler lead
per database (advisory locks), the others stand by and take over when they go; every process
delivers webhooks (leases keep them from sending one message twice at once).
"""

from __future__ import annotations

import asyncio
import signal

from scoreline.db.engine import create_engine
from scoreline.feeds.builder import FeedBuilder
from scoreline.logging import get_logger
from scoreline.metrics.exporter import start_exporter
from scoreline.redis_client import shared_redis
from scoreline.settings import Settings
from scoreline.webhooks.service import WebhookService

log = get_logger(__name__)


async def run(settings: Settings) -> None:
    """Build documents until SIGINT/SIGTERM; documents still gathering are rebuilt after a restart."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    if settings.feeds_metrics_address:
        # Only for its exporter: the builder itself never talks to Temporal.
        start_exporter("scoreline-feeds", settings.feeds_metrics_address)
    engine = create_engine(settings.require_database_url(), pool_size=settings.db_pool_feeds)
    redis = shared_redis(settings.require_redis_url())
    builder = FeedBuilder(engine, redis, settings.require_database_url())
    # Its own small pool: the filler, the deliverer's claims, its recorder and its gauges.
    webhook_engine = create_engine(settings.require_database_url(), pool_size=3)
    webhooks = WebhookService(webhook_engine, settings)
    builder.start()
    webhooks.start()
    log.info("feed builder running")
    try:
        await stop.wait()
    finally:
        log.info("feed builder stopping")
        await webhooks.stop()
        await builder.stop()
        await redis.aclose()
        await webhook_engine.dispose()
        await engine.dispose()
