"""Webhooks inside the `scoreline feeds` process: the filler, the deliverer and their gauges.

- The filler leads: one per database (its own session advisory lock, `LOCK_KEY`), woken by the
  outbox NOTIFY on its lock connection and by a poll every `poll_interval` that also covers a lost
  wake-up. A standby takes over when the leader's connection goes.
- The deliverer runs in every feeds process: leases make several of them safe (`claims`), and more
  processes deliver more. The filler wakes the deliverer of its own process; another process's
  deliverer finds new messages at its next idle check.
- Every `REPORT_EVERY` the leader reports what is owed, how late the most overdue message is, and
  how many endpoints failures paused (the alert `WebhookEndpointPaused` reads that gauge).
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Final

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from scoreline.db.listen import DATABASE_ERRORS, Listening, listening
from scoreline.db.urls import asyncpg_dsn
from scoreline.logging import get_logger
from scoreline.metrics.instruments import metrics
from scoreline.outbox.writer import CHANNEL
from scoreline.service import BackgroundService, Loop, run_forever
from scoreline.settings import Settings
from scoreline.webhooks.delivery import Deliverer, DeliveryOptions
from scoreline.webhooks.endpoints import OPERATOR_PAUSE
from scoreline.webhooks.filling import fill, start_position
from scoreline.webhooks.sender import Sender
from scoreline.webhooks.urls import UrlPolicy

log = get_logger(__name__)

LOCK_KEY: Final = 0x5C0_B00C
"""The session advisory lock that makes one filler per database the leader."""
APPLICATION_NAME: Final = "scoreline-webhook-filler"
RETRY_AFTER: Final = 2.0
REPORT_EVERY: Final = 5.0
HELD_RETRY_FIRST: Final = 0.005
HELD_RETRY_CAP: Final = 0.1
"""While committed changes wait behind an older open transaction (a claim, a record, another
commit: a few ms), the filler reads again after 5 ms, doubling up to 100 ms while they stay held."""

_GAUGES = text(
    """
    SELECT count(*) AS owed,
           coalesce(max(EXTRACT(epoch FROM now() - m.committed_at - make_interval(secs => e.delay_seconds)))
                    FILTER (WHERE e.paused_at IS NULL), 0)::float8 AS lag,
           (SELECT count(*) FROM webhook_endpoint
            WHERE paused_at IS NOT NULL AND paused_reason IS DISTINCT FROM :operator) AS paused
    FROM webhook_message m JOIN webhook_endpoint e ON e.id = m.endpoint_id
    WHERE m.delivered_at IS NULL
    """
)


def delivery_options(settings: Settings, idle_check: timedelta) -> DeliveryOptions:
    return DeliveryOptions(
        retry_for=settings.webhook_retry_for,
        backoff_first=settings.webhook_backoff_first,
        backoff_cap=settings.webhook_backoff_cap,
        timeout=settings.webhook_timeout,
        concurrency=settings.webhook_concurrency,
        per_endpoint=settings.webhook_endpoint_concurrency,
        idle_check=idle_check,
    )


class WebhookService(BackgroundService):
    """Long-running service: `start()` once, `await stop()` on shutdown."""

    name = "webhooks"

    def __init__(
        self,
        engine: AsyncEngine,
        settings: Settings,
        *,
        poll_interval: timedelta = timedelta(seconds=2),
    ) -> None:
        super().__init__()
        self._engine = engine
        self._dsn = asyncpg_dsn(settings.require_database_url())
        self._poll = poll_interval.total_seconds()
        self._wake = asyncio.Event()
        options = delivery_options(settings, poll_interval)
        self._sender = Sender(
            UrlPolicy(development=not settings.is_production), options.timeout, options.concurrency
        )
        self.deliverer = Deliverer(engine, self._sender, options)
        self.leading = asyncio.Event()
        """Set while this process's filler leads (tests wait on it)."""

    def loops(self) -> list[Loop]:
        async def fill_forever() -> None:
            await run_forever(
                self._lead,
                expected=DATABASE_ERRORS,
                event="webhooks.filler_interrupted",
                retry_after=RETRY_AFTER,
            )

        async def deliver_forever() -> None:
            await run_forever(
                self.deliverer.run,
                expected=DATABASE_ERRORS,
                event="webhooks.delivery_interrupted",
                retry_after=RETRY_AFTER,
            )

        return [fill_forever, deliver_forever, self._report_forever]

    async def stop(self) -> None:
        await super().stop()
        await self._sender.aclose()

    async def _lead(self) -> None:
        async with listening(
            self._dsn, CHANNEL, self._wake.set, application_name=APPLICATION_NAME, lead_lock=LOCK_KEY
        ) as connection:
            self.leading.set()
            log.info("webhooks.filler_leading")
            try:
                await self._fill(connection)
            finally:
                self.leading.clear()

    async def _fill(self, connection: Listening) -> None:
        async with self._engine.connect() as conn:
            position, durable = await start_position(conn)
        held_retry = HELD_RETRY_FIRST
        while True:
            if connection.gone:
                raise ConnectionError("the webhook filler's lock connection closed")
            self._wake.clear()
            # One snapshot for the page: the grants and endpoints it is owed to, and its changes.
            async with self._engine.connect() as conn:
                snapshot = await conn.execution_options(isolation_level="REPEATABLE READ")
                async with snapshot.begin():
                    filled = await fill(snapshot, position, durable)
            position, durable = filled.position, filled.durable
            if filled.owed:
                self.deliverer.wake()
            if filled.full:
                continue
            wait = self._poll
            if filled.held:
                wait, held_retry = held_retry, min(held_retry * 2, HELD_RETRY_CAP)
            else:
                held_retry = HELD_RETRY_FIRST
            try:
                async with asyncio.timeout(wait):
                    await self._wake.wait()
            except TimeoutError:
                if not filled.held:
                    await connection.ping()

    async def _report_forever(self) -> None:
        instruments = metrics()
        while True:
            await asyncio.sleep(REPORT_EVERY)
            if not self.leading.is_set():
                # The leader speaks; a process that lost the lead must not keep its old figures.
                instruments.webhook_owed.set(0)
                instruments.webhook_lag.set(0.0)
                instruments.webhook_endpoints_paused.set(0)
                continue
            try:
                async with self._engine.connect() as conn:
                    row = (await conn.execute(_GAUGES, {"operator": OPERATOR_PAUSE})).one()
            except DATABASE_ERRORS:
                continue
            instruments.webhook_owed.set(int(row.owed))
            instruments.webhook_lag.set(float(row.lag))
            instruments.webhook_endpoints_paused.set(int(row.paused))
