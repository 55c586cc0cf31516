"""Writes a token's death to Postgres as soon as APNs answers it, not with the rest of its batch.

A batch's outcomes are written once its last request is answered: seconds later under slow
answers or a throttling burst. A worker SIGKILLed meanwhile took the 410 with it; the relay had
not told the other workers either, its first PUBLISH after a Redis restart failing on a connection
Redis had closed (the soak of 2026-12-03, seed 17: an activity token got another alert 40 s after
its 410, from the other worker). Each death is written at once, in one statement with every other
that came while the previous statement ran. The batch's write stays the attempt's record (it
writes the deaths again, to no effect); a death this write could not make is left to it.
"""

from __future__ import annotations

import asyncio

from sqlalchemy.exc import SQLAlchemyError

from activities.push.dead_tokens import DeadTokens
from activities.push.delivery import Delivery
from activities.push.store import PushStore, Target
from scoreline.logging import get_logger

log = get_logger(__name__)


class DeathWriter:
    """One fan-out attempt's early writes of the deaths APNs answered it."""

    def __init__(self, store: PushStore, dead: DeadTokens) -> None:
        self._store = store
        self._dead = dead
        self._pending: list[tuple[Target, Delivery]] = []
        self._writing: asyncio.Task[None] | None = None

    def died(self, target: Target, delivery: Delivery) -> None:
        """APNs answered `target`'s token dead: have it switched off in Postgres now (never waits)."""
        self._pending.append((target, delivery))
        if self._writing is None or self._writing.done():
            self._writing = asyncio.create_task(self._write_pending(), name="push-death-writer")

    async def finish(self) -> None:
        """Wait for the write under way, if any (before the batch's own write, or the end)."""
        if self._writing is not None:
            await asyncio.wait({self._writing})

    async def _write_pending(self) -> None:
        while self._pending:
            deaths, self._pending = self._pending, []
            try:
                await self._store.switch_off(deaths)
            except (OSError, SQLAlchemyError) as error:
                # Postgres is out of reach: the batch's write, tried through the outage, has them.
                log.warning("push.death_write_failed", deaths=len(deaths), error=str(error)[:200])
                return
            self._dead.settled(target.token for target, _ in deaths)
