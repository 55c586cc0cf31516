"""A Postgres connection that LISTENs on a channel, for the loops woken by NOTIFY.

A notification only says "look now": whoever listens always reads the rows themselves, so a lost
or repeated notification delays but never loses. What every listener needs is the same, and is
here: a dedicated connection (named in `pg_stat_activity`), optionally the lead (a session advisory
lock, so one process per database does the work while the others stand by), the channel's wake-up,
and the knowledge that the connection is gone — a closed socket or a server that stopped
answering the ping.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import asyncpg
from sqlalchemy.exc import DBAPIError

from scoreline.logging import get_logger

log = get_logger(__name__)

DATABASE_ERRORS = (OSError, TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError, DBAPIError)
"""What Postgres going away (or never answering) raises, through asyncpg or SQLAlchemy."""
PING_TIMEOUT = 5.0
"""Seconds the connection has to answer a ping before it counts as gone."""
STANDBY_RETRY = 5.0
"""Seconds between a standby's attempts to take the lead."""


@dataclass
class Listening:
    """One open LISTEN connection."""

    connection: asyncpg.Connection
    lost: asyncio.Event

    @property
    def gone(self) -> bool:
        return self.lost.is_set() or self.connection.is_closed()

    async def ping(self) -> None:
        """Raise `ConnectionError` (or a database error) if the connection no longer answers."""
        if self.gone:
            raise ConnectionError("the LISTEN connection closed")
        async with asyncio.timeout(PING_TIMEOUT):
            await self.connection.fetchval("SELECT 1")

    async def watch(self, every: float) -> None:
        """Return never: ping every `every` seconds, raise once the connection is gone."""
        while True:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(every):
                    await self.lost.wait()
            await self.ping()


@asynccontextmanager
async def listening(
    dsn: str,
    channel: str,
    wake: Callable[[], None],
    *,
    application_name: str,
    lead_lock: int | None = None,
) -> AsyncIterator[Listening]:
    """Connect, take the lead if `lead_lock` is given (waiting as a standby meanwhile), LISTEN on
    `channel` calling `wake` for each notification, and close the connection on exit."""
    connection = await asyncpg.connect(dsn, server_settings={"application_name": application_name})
    try:
        lost = asyncio.Event()

        def closed(_connection: Any) -> None:
            lost.set()
            wake()

        connection.add_termination_listener(closed)
        if lead_lock is not None:
            await _take_the_lead(connection, lead_lock, application_name)
        await connection.add_listener(channel, lambda *_args: wake())
        yield Listening(connection, lost)
    finally:
        with contextlib.suppress(*DATABASE_ERRORS):
            async with asyncio.timeout(PING_TIMEOUT):
                await connection.close()


async def _take_the_lead(connection: asyncpg.Connection, key: int, who: str) -> None:
    logged = False
    while not await connection.fetchval("SELECT pg_try_advisory_lock($1)", key):
        if not logged:
            log.info("db.standby", who=who, retry_every=STANDBY_RETRY)
            logged = True
        await asyncio.sleep(STANDBY_RETRY)
