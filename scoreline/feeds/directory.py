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

from scoreline.db.listen import DATABASE_ERRORS, listening
from scoreline.db.urls import asyncpg_dsn
from scoreline.feeds.partners import PARTNERS_CHANNEL, Partner, hash_api_key, load_partners
from scoreline.logging import get_logger
from scoreline.service import BackgroundService, Loop, run_forever

log = get_logger(__name__)

APPLICATION_NAME = "scoreline-partners"
RETRY_AFTER = 1.0
"""Seconds before reconnecting after the connection failed (one connection per process: no storm)."""


class PartnerDirectory(BackgroundService):
    """Start once per API process; `find` is a dictionary lookup."""

    name = "partner-directory"

    def __init__(self, database_url: str, *, reload_interval: timedelta = timedelta(seconds=30)) -> None:
        super().__init__()
        self._dsn = asyncpg_dsn(database_url)
        self._reload = reload_interval.total_seconds()
        self._by_hash: dict[str, Partner] = {}
        self._loaded = asyncio.Event()
        self._changed = asyncio.Event()

    @property
    def loaded(self) -> bool:
        return self._loaded.is_set()

    def find(self, api_key: str) -> Partner | None:
        """The partner this key belongs to (revoked ones too), or None for a key never issued."""
        return self._by_hash.get(hash_api_key(api_key))

    async def start_and_load(self, *, wait: timedelta = timedelta(seconds=5)) -> None:
        """Start following the table; wait up to `wait` for the first load (the API starts anyway)."""
        self.start()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(wait.total_seconds()):
                await self._loaded.wait()

    def loops(self) -> list[Loop]:
        async def follow_forever() -> None:
            await run_forever(
                self._follow,
                expected=DATABASE_ERRORS,
                event="feeds.partners_reload_failed",
                retry_after=RETRY_AFTER,
            )

        return [follow_forever]

    async def _follow(self) -> None:
        # A closed connection wakes the loop too; the reload on it then fails and reconnects.
        async with listening(
            self._dsn, PARTNERS_CHANNEL, self._changed.set, application_name=APPLICATION_NAME
        ) as listened:
            while True:
                self._changed.clear()
                self._by_hash = await load_partners(listened.connection)
                self._loaded.set()
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(self._reload):
                        await self._changed.wait()
