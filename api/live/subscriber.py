"""One connection's inbox: what it follows, and a bounded queue the hub fills without waiting.

The hub offers each change to every interested subscriber with `put_nowait`. A connection that
cannot keep up (its queue is full: a slow network, a stalled client) is marked dropped instead of
making the hub, and so every other client, wait for it. The connection then ends; an SSE client
reconnects with its Last-Event-ID and gets what it missed in one message.

A client that reads nothing at all leaves its connection stuck in a send (the server waits for its
socket to drain) where it never sees the drop: `cut_when_dropped` ends such a connection a moment
after the drop, so it gives back its subscription and its connection slot.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
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

    def __init__(self, capacity: int, *, kind: str) -> None:
        self.id = next(_ids)
        self.kind = kind
        self.fixtures: set[int] = set()
        self.everything = False
        self.dropped = False
        self.on_drop: Callable[[], None] | None = None
        """Called once when the subscriber is dropped (set by `cut_when_dropped`)."""
        self._queue: asyncio.Queue[LiveValue] = asyncio.Queue(capacity)

    def offer(self, value: LiveValue) -> bool:
        """Queue a change; False if the subscriber is (now) dropped."""
        if self.dropped:
            return False
        try:
            self._queue.put_nowait(value)
        except asyncio.QueueFull:
            self.dropped = True
            log.warning("live.client_dropped", subscriber=self.id, kind=self.kind, queued=self._queue.qsize())
            while not self._queue.empty():
                self._queue.get_nowait()
            if self.on_drop is not None:
                self.on_drop()
            return False
        return True

    async def next(self, timeout: float) -> LiveValue | None:
        """The next change, or None if none came within `timeout` seconds.

        Raises:
            SubscriberDroppedError: the subscriber was dropped.
        """
        if self.dropped:
            raise SubscriberDroppedError
        # A dropped subscriber's queue was full, so nothing can be waiting here when it happens.
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                return await self._queue.get()
        return None


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
