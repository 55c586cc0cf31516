"""A drainer of the test's own, in the test's process, for tests that publish without a match workflow."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from sqlalchemy.ext.asyncio import AsyncEngine

from activities.push.apns import ApnsClient
from activities.push.drain import DrainConfig, Drainer
from activities.push.publish import publish
from domain.pushes import Published, PushInput

ROUTINE_INTERVAL_S = 0.5
"""`push_settings`' `LA_MIN_UPDATE_INTERVAL`."""


@asynccontextmanager
async def running_drainer(
    engine: AsyncEngine, apns: ApnsClient, config: DrainConfig, *, dsn: str | None = None
) -> AsyncIterator[Drainer]:
    """A started `Drainer` (woken by NOTIFY when `dsn` is given, else by its poll), stopped after."""
    drainer = Drainer(engine, apns, config, dsn=dsn)
    drainer.start()
    try:
        yield drainer
    finally:
        await drainer.stop()


async def published(engine: AsyncEngine, push: PushInput) -> Published:
    """Publish `push` as the match workflow's activity does."""
    return await publish(engine, push, ROUTINE_INTERVAL_S)
