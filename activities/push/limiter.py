"""How many pushes one fan-out has in flight: shrinks on throttling, grows back on success (AIMD).

A 429 `TooManyRequests` names one token, but a storm of them means we push faster than APNs wants
from us; halving the window slows the whole batch at once, and the window creeps back (one more
slot per window's worth of successes) once APNs is happy again.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class AdaptiveLimit:
    """A semaphore whose size moves between `floor` and `ceiling`."""

    def __init__(self, ceiling: int, floor: int = 8, cooldown: float = 0.2) -> None:
        self.ceiling = max(1, ceiling)
        self.floor = max(1, min(floor, self.ceiling))
        self.limit = float(self.ceiling)
        self.lowest = self.ceiling
        """The smallest window reached (support and tests read it)."""
        self._cooldown = cooldown
        self._last_cut = -cooldown
        self._active = 0
        self._waiters: deque[asyncio.Future[None]] = deque()

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold one in-flight place for the block."""
        while self._active >= int(self.limit):
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            except asyncio.CancelledError:
                self._wake()
                raise
        self._active += 1
        try:
            yield
        finally:
            self._active -= 1
            self._wake()

    def throttled(self) -> None:
        """APNs said 429: halve the window (once per `cooldown`, so one burst counts once)."""
        now = time.monotonic()
        if now - self._last_cut >= self._cooldown:
            self._last_cut = now
            self.limit = max(float(self.floor), self.limit / 2)
            self.lowest = min(self.lowest, int(self.limit))

    def succeeded(self) -> None:
        """One push went through: widen the window by one slot per window's worth of successes."""
        if self.limit < self.ceiling:
            self.limit = min(float(self.ceiling), self.limit + 1 / self.limit)
            self._wake()

    def _wake(self) -> None:
        room = int(self.limit) - self._active
        while room > 0 and self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                room -= 1
