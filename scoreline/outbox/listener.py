"""One LISTEN connection per process that wakes the outbox reader, and the consumers it feeds.

A commit that writes `domain_event` also sends `pg_notify('scoreline_changes', …)`. The
notification only says "look now": the rows themselves always come from `reader.read_after`, so a
lost, duplicated or reordered notification can delay a change but never lose or repeat one.

- Wake-ups coalesce: a notification only sets an event, and the read loop runs one read cycle
  per wake-up however many notifications arrived meanwhile.
- A safety read runs every `safety_interval` even when nothing was heard (a notification sent while
  the LISTEN connection was down, a missed wake-up).
- Rows held back behind an older open transaction (`Batch.held`), and a consumer or read that
  failed, are retried soon with a growing delay rather than at the next safety read.
- The LISTEN connection is watched and re-opened when Postgres goes away (logged, backed off);
  reads keep running on the engine's pool meanwhile, so the process keeps serving.

Each consumer has its own in-memory cursor. One read cycle starts at the lowest cursor and gives
every consumer only the rows after its own. A consumer that raises keeps its cursor and gets the
same rows again on the next cycle (so delivery is at least once, and consumers drop what they
already hold). A new consumer starts at the current end (`reader.current_end`): it takes current
values from the read model, not history.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy.ext.asyncio import AsyncEngine

from scoreline.db.listen import DATABASE_ERRORS, PING_TIMEOUT, listening
from scoreline.logging import get_logger
from scoreline.outbox.reader import Cursor, OutboxEvent, current_end, read_after
from scoreline.outbox.writer import CHANNEL
from scoreline.service import BackgroundService, Loop

log = get_logger(__name__)

FIRST_RETRY = 0.02
"""Seconds before the first quick re-read (held-back rows, a failed read); doubles each time."""
HELD_RETRY_CAP = 1.0
"""Seconds; the slowest re-read while rows wait behind an open transaction."""
APPLICATION_NAME = "scoreline-outbox-listen"
"""How the LISTEN connection shows in `pg_stat_activity`."""

Consumer = Callable[[Sequence[OutboxEvent]], Awaitable[None]]
"""Takes a batch of new events in `(xid, id)` order; raising means "give me these again"."""

STEADY_CONNECTION = 1.0
"""Seconds a LISTEN connection must have lasted for its loss to be retried at once; one that drops
sooner is retried with a growing delay (a server that closes every new connection is not hammered)."""


class ConsumerFailedError(Exception):
    """A consumer raised; its cursor stayed put and the rows are offered again soon."""


@dataclass(eq=False)
class Subscription:
    """One consumer and its cursor; None until the first read that can find the current end."""

    name: str
    consumer: Consumer
    cursor: Cursor | None = None
    failed: bool = False
    """The consumer raised during the current read cycle; it gets nothing more until the next."""

    async def offer(self, events: Sequence[OutboxEvent]) -> None:
        """Hand over the events after this cursor; the cursor moves only if the consumer succeeds."""
        if self.failed or self.cursor is None:
            return
        cursor = self.cursor
        fresh = [event for event in events if event.cursor > cursor]
        if not fresh:
            return
        try:
            await self.consumer(fresh)
        except Exception as error:  # noqa: BLE001 - any consumer failure is retried, never fatal
            # One consumer must not stop the others, nor pass over rows it did not take.
            self.failed = True
            log.warning(
                "outbox.consumer_failed", consumer=self.name, error=f"{type(error).__name__}: {error}"
            )
            return
        self.cursor = fresh[-1].cursor


class OutboxListener(BackgroundService):
    """The process's outbox listener: start once, subscribe consumers, stop at shutdown."""

    name = "outbox-listener"

    def __init__(
        self,
        dsn: str,
        engine: AsyncEngine,
        *,
        safety_interval: timedelta = timedelta(seconds=5),
        batch_size: int = 500,
        reconnect_cap: timedelta = timedelta(seconds=5),
    ) -> None:
        super().__init__()
        self._dsn = dsn
        self._engine = engine
        self._safety = safety_interval.total_seconds()
        self._batch_size = batch_size
        self._reconnect_cap = reconnect_cap.total_seconds()
        self._subscriptions: list[Subscription] = []
        self._wake = asyncio.Event()
        self.reads = 0
        """Completed read cycles, for tests and the bench (one per wake-up, however many NOTIFYs)."""
        self.rereads = 0
        """Read cycles run to retry (rows held back, a failed read or consumer), not on a wake-up."""
        self.listening = asyncio.Event()
        """Set while the LISTEN connection is open."""
        self._lag: dict[str, float] = {}
        self._last_read: float | None = None

    async def subscribe(self, consumer: Consumer, *, name: str) -> Subscription:
        """Add a consumer that starts at the current end; if Postgres cannot say where that is
        now, the first read that succeeds decides."""
        subscription = Subscription(name=name, consumer=consumer)
        with contextlib.suppress(*DATABASE_ERRORS):
            async with asyncio.timeout(PING_TIMEOUT), self._engine.connect() as conn:
                subscription.cursor = await current_end(conn)
        self._subscriptions.append(subscription)
        return subscription

    def loops(self) -> list[Loop]:
        """Reading (woken, or every safety interval) and listening, each in the background."""
        self._wake.set()
        return [self._read_forever, self._listen_forever]

    # --- reading ------------------------------------------------------------------------------

    async def _read_forever(self) -> None:
        retry: float | None = None
        while True:
            try:
                async with asyncio.timeout(self._safety if retry is None else retry):
                    await self._wake.wait()
            except TimeoutError:
                if retry is not None:
                    self.rereads += 1
            self._wake.clear()
            try:
                held = await self._read_once()
            except ConsumerFailedError:
                retry = min(_grow(retry), self._safety)
                continue
            except Exception as error:
                expected = isinstance(error, DATABASE_ERRORS)
                log.warning(
                    "outbox.read_failed", error=f"{type(error).__name__}: {error}", exc_info=not expected
                )
                retry = min(_grow(retry), self._safety)
                continue
            retry = min(_grow(retry), HELD_RETRY_CAP) if held else None

    async def _read_once(self) -> bool:
        """One read cycle for every consumer; True if settled rows may follow soon (held back).

        Raises:
            ConsumerFailedError: a consumer raised (the others got their rows).
            DBAPIError, OSError: Postgres could not be read.
        """
        subscriptions = list(self._subscriptions)
        if not subscriptions:
            return False
        await self._place_new(subscriptions)
        for subscription in subscriptions:
            subscription.failed = False
        cursor = min(s.cursor for s in subscriptions if s.cursor is not None)
        while True:
            async with self._engine.connect() as conn:
                batch = await read_after(conn, cursor, self._batch_size)
            held = batch.held
            for subscription in subscriptions:
                await subscription.offer(batch.events)
            self._note_lag(subscriptions, batch.events)
            if len(batch.events) < self._batch_size:
                break
            cursor = batch.events[-1].cursor
        self.reads += 1
        if any(s.failed for s in subscriptions):
            raise ConsumerFailedError
        return held

    def lags(self) -> dict[str, float]:
        """Per consumer, seconds behind the outbox (`scoreline_outbox_lag_seconds`).

        How old the newest change it was last given was when read (0 once caught up), or, when
        reads have failed for longer than the safety interval, at least that overdue time: a
        listener that cannot read is behind even though the last rows it saw were fresh.
        """
        overdue = 0.0
        if self._last_read is not None:
            overdue = max(0.0, time.monotonic() - self._last_read - self._safety)
        # A copy first: the API's metrics thread calls this while the loop may add a consumer.
        return {name: max(lag, overdue) for name, lag in dict(self._lag).items()}

    def _note_lag(self, subscriptions: Sequence[Subscription], events: Sequence[OutboxEvent]) -> None:
        """A consumer that took the rows is as far behind as the newest of them; one that raised
        is as far behind as the oldest, which it is given again, older, at every retry."""
        self._last_read = time.monotonic()
        newest = events[-1].age if events else 0.0
        oldest = events[0].age if events else 0.0
        for subscription in subscriptions:
            if subscription.failed:
                self._lag[subscription.name] = max(oldest, self._lag.get(subscription.name, 0.0))
            else:
                self._lag[subscription.name] = newest

    async def _place_new(self, subscriptions: Sequence[Subscription]) -> None:
        if all(s.cursor is not None for s in subscriptions):
            return
        async with self._engine.connect() as conn:
            end = await current_end(conn)
        for subscription in subscriptions:
            if subscription.cursor is None:
                subscription.cursor = end

    # --- listening ----------------------------------------------------------------------------

    async def _listen_forever(self) -> None:
        delay: float | None = None
        loop = asyncio.get_running_loop()
        while True:
            connected_at: float | None = None
            try:
                async with listening(
                    self._dsn, CHANNEL, self._wake.set, application_name=APPLICATION_NAME
                ) as connection:
                    connected_at = loop.time()
                    self.listening.set()
                    # Anything committed while no one was listening is found by this read.
                    self._wake.set()
                    log.info("outbox.listening", channel=CHANNEL)
                    await connection.watch(self._safety)
            except DATABASE_ERRORS as error:
                steady = connected_at is not None and loop.time() - connected_at >= STEADY_CONNECTION
                delay = None if steady else min(_grow(delay, start=0.5), self._reconnect_cap)
                event = "outbox.listen_lost" if connected_at is not None else "outbox.listen_connect_failed"
                log.warning(event, error=f"{type(error).__name__}: {error}", retry_in=delay or FIRST_RETRY)
            finally:
                self.listening.clear()
            await asyncio.sleep(FIRST_RETRY if delay is None else delay)


def _grow(previous: float | None, *, start: float = FIRST_RETRY) -> float:
    return start if previous is None else previous * 2
