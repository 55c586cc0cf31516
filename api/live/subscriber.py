"""One connection's inbox: what it follows, and a bounded queue the hub fills without waiting.

The hub offers each change to every interested subscriber with `put_nowait`. A connection that
cannot keep up (its queue is full: a slow network, a stalled client) is marked dropped instead of
making the hub, and so every other client, wait for it. The connection then ends; an SSE client
reconnects with its Last-Event-ID and gets what it missed in one message.

A connection that asked for a broadcast delay holds each change until `delay` seconds after it
reached this process (which is after its commit, so never early), in arrival order; what it holds
counts against the same queue limit, so a delay never buys a connection more memory.

A client that reads nothing at all leaves its connection stuck in a send (the server waits for its
socket to drain) where it never sees the drop: `cut_when_dropped` ends such a connection a moment
after the drop, so it gives back its subscription and its connection slot.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections import deque
from collections.abc import Awaitable, Callable

from api.live.changes import LiveValue
from scoreline.logging import get_logger

log = get_logger(__name__)

DROP_GRACE = 1.0
"""Seconds a dropped connection gets to end by itself (it does at once unless stuck in a send)."""

_ids = itertools.count(1)


class SubscriberDroppedError(Exception):
    """The subscriber fell too far behind and was dropped; its connection should close."""


class Subscriber:
    """Interest (some matches, or all of them) and the queue of changes not sent yet."""

    def __init__(self, capacity: int, *, kind: str, delay: float = 0.0) -> None:
        self.id = next(_ids)
        self.kind = kind
        self.delay = delay
        """Seconds each change is held after it reached this process (a broadcast delay)."""
        self.fixtures: set[int] = set()
        self.everything = False
        self.dropped = False
        self.on_drop: Callable[[], None] | None = None
        """Called once when the subscriber is dropped (set by `cut_when_dropped`)."""
        self._capacity = capacity
        self._queue: deque[tuple[float, LiveValue]] = deque()
        """(when it may be sent, by the loop's clock; the change), in arrival order."""
        self._arrived = asyncio.Event()

    def offer(self, value: LiveValue, *, due: float | None = None) -> bool:
        """Queue a change, to be sent at `due` (the loop's clock) or `delay` from now; False if the
        subscriber is (now) dropped.

        A `due` earlier than a queued change's waits behind it: order wins, never earliness.
        """
        if self.dropped:
            return False
        if len(self._queue) >= self._capacity:
            self.dropped = True
            log.warning("live.client_dropped", subscriber=self.id, kind=self.kind, queued=len(self._queue))
            self._queue.clear()
            self._arrived.set()
            if self.on_drop is not None:
                self.on_drop()
            return False
        if due is None:
            due = asyncio.get_running_loop().time() + self.delay
        self._queue.append((due, value))
        self._arrived.set()
        return True

    async def next(self, timeout: float) -> LiveValue | None:
        """The next change once it is due, or None if none was due within `timeout` seconds.

        Raises:
            SubscriberDroppedError: the subscriber was dropped.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            if self.dropped:
                raise SubscriberDroppedError
            now = loop.time()
            if self._queue and self._queue[0][0] <= now:
                return self._queue.popleft()[1]
            if now >= deadline:
                return None
            wake = min(self._queue[0][0], deadline) if self._queue else deadline
            self._arrived.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout_at(wake):
                    await self._arrived.wait()


async def cut_when_dropped(subscriber: Subscriber, connection: Awaitable[None]) -> None:
    """Serve `connection`; if the subscriber is dropped and it has not ended `DROP_GRACE` seconds
    later, cancel it (the server then closes the socket)."""
    loop = asyncio.get_running_loop()
    deadline = asyncio.timeout(None)

    def cut_soon() -> None:
        deadline.reschedule(loop.time() + DROP_GRACE)

    try:
        async with deadline:
            subscriber.on_drop = cut_soon
            if subscriber.dropped:
                cut_soon()
            await connection
    except TimeoutError:
        if not deadline.expired():
            raise
        log.info("live.client_cut", subscriber=subscriber.id, kind=subscriber.kind)
    finally:
        subscriber.on_drop = None
