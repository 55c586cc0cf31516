"""The API process's snapshot of the partner table, so a key is checked without a database read.

The table is small (one row per partner), so the snapshot is simply reloaded whole: at start, on
every `pg_notify(PARTNERS_CHANNEL)` (a partner created or revoked), after a reconnect, and every
`reload_interval` in case a notification was lost. A revocation therefore takes effect within
milliseconds, and within `reload_interval` at worst. Until the first load succeeds, `loaded` is
False and the API answers 503 rather than calling every key invalid.
"""

from __future__ import annotations

import asyncio
import contextlib
from datetime import timedelta
from typing import Any

import asyncpg

from scoreline.db.urls import asyncpg_dsn
from scoreline.feeds.partners import PARTNERS_CHANNEL, Partner, hash_api_key, load_partners
from scoreline.logging import get_logger

log = get_logger(__name__)

APPLICATION_NAME = "scoreline-partners"
RETRY_AFTER = 1.0
"""Seconds before reconnecting after the connection failed (one connection per process: no storm)."""
CLOSE_TIMEOUT = 5.0

_DATABASE_ERRORS = (OSError, TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError)


class PartnerDirectory:
    """Start once per API process; `find` is a dictionary lookup."""

    def __init__(self, database_url: str, *, reload_interval: timedelta = timedelta(seconds=30)) -> None:
        self._dsn = asyncpg_dsn(database_url)
        self._reload = reload_interval.total_seconds()
        self._by_hash: dict[str, Partner] = {}
        self._loaded = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    @property
    def loaded(self) -> bool:
        return self._loaded.is_set()

    def find(self, api_key: str) -> Partner | None:
        """The partner this key belongs to (revoked ones too), or None for a key never issued."""
        return self._by_hash.get(hash_api_key(api_key))

    async def start(self, *, wait: timedelta = timedelta(seconds=5)) -> None:
        """Start following the table; wait up to `wait` for the first load (the API starts anyway)."""
        if self._task is not None:
            raise RuntimeError("the partner directory is already running")
        self._task = asyncio.create_task(self._follow_forever(), name="partner-directory")
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(wait.total_seconds()):
                await self._loaded.wait()

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is None:
            return
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    async def _follow_forever(self) -> None:
        while True:
            try:
                await self._follow()
            except _DATABASE_ERRORS as error:
                log.warning(
                    "feeds.partners_reload_failed",
                    error=f"{type(error).__name__}: {error}",
                    retry_in=RETRY_AFTER,
                )
            await asyncio.sleep(RETRY_AFTER)

    async def _follow(self) -> None:
        connection = await asyncpg.connect(self._dsn, server_settings={"application_name": APPLICATION_NAME})
        changed = asyncio.Event()

        def wake(*_args: Any) -> None:
            changed.set()

        try:
            # A closed connection wakes the loop too; the reload on it then fails and reconnects.
            connection.add_termination_listener(wake)
            await connection.add_listener(PARTNERS_CHANNEL, wake)
            while True:
                changed.clear()
                self._by_hash = await load_partners(connection)
                self._loaded.set()
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(self._reload):
                        await changed.wait()
        finally:
            with contextlib.suppress(*_DATABASE_ERRORS):
                await asyncio.wait_for(connection.close(), CLOSE_TIMEOUT)
