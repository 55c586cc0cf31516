"""Refreshing the fans' read copy after desk commits, off the commit's path, coalesced and small.

A desk sends dozens of commands a second, and a refresh costs a Postgres read and a Redis write on
the worker's event loop, which the next command then waits behind. So a commit only asks for a
refresh; the first ask for a match waits `COALESCE_SECONDS`, and every commit of that match
meanwhile shares it; and only the match view is refreshed (`cache.refresh_view`), since a desk
command never changes the events page (it lists provider events). Nothing is served stale for it:
a read whose process heard of a newer version than the cached one asks Postgres, and the copy is
written only if newer, so refreshes finishing out of order are harmless.
"""

from __future__ import annotations

import asyncio
import contextlib

import redis.asyncio as aioredis
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncEngine

from scoreline.logging import get_logger
from scoreline.readmodel.cache import refresh_view

log = get_logger(__name__)

COALESCE_SECONDS = 1.0
"""How long a match's refresh waits for more of its commits to share it: at most one refresh a
second per match. A desk sends a command every 100-200 ms, so at a 50 ms wait nearly every command
gets its own refresh, each competing with the next commands for the worker's CPU
(`bench/command_latency.py`, 20 desks: 121 accepted/s with a 0.25 s wait, 156 with this one, 167
with no refresh at all). While desks score that fast the copy is behind the announced version most
of the time whatever the wait, and reads then ask Postgres (see above); the copy serves the quiet
spells, and the partner documents gather for a second too."""


CLOSE_SECONDS = 2.0
"""How long shutdown waits for the refreshes it runs at once."""


class ReadCopyRefresher:
    """One per worker process; `aclose()` at shutdown runs the waiting refreshes at once."""

    def __init__(self, engine: AsyncEngine, redis: aioredis.Redis) -> None:
        self._engine = engine
        self._redis = redis
        self._tasks: set[asyncio.Task[None]] = set()
        self._waiting: set[int] = set()
        """Matches whose refresh is waiting for more commits to share it."""
        self._closing = asyncio.Event()
        """Set by `aclose`: waiting refreshes stop waiting."""

    def refresh_soon(self, fixture_id: int) -> None:
        """Refresh this match's view within `COALESCE_SECONDS`, sharing the refresh already waiting."""
        if fixture_id in self._waiting:
            return
        self._waiting.add(fixture_id)
        task = asyncio.create_task(self._refresh(fixture_id))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def aclose(self) -> None:
        """Refresh what is waiting now, for up to `CLOSE_SECONDS`; cancel what is still running then.

        Dropping them would leave a copy up to a second of commits behind for good: a process
        started after this one has heard of no newer version, so it would serve that copy.
        """
        self._closing.set()
        tasks = list(self._tasks)
        if not tasks:
            return
        _, running = await asyncio.wait(tasks, timeout=CLOSE_SECONDS)
        for task in running:
            task.cancel()
        for task in running:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _refresh(self, fixture_id: int) -> None:
        try:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(COALESCE_SECONDS):
                    await self._closing.wait()
        finally:
            # Commits from here on ask for a refresh of their own: this one may not see them.
            self._waiting.discard(fixture_id)
        try:
            await refresh_view(self._engine, self._redis, fixture_id)
        except (DBAPIError, OSError) as error:
            # The copy stays as it was; the reads notice it is behind and ask Postgres.
            log.warning("read copy not refreshed", fixture_id=fixture_id, error=str(error))
