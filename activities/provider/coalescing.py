"""Single flight with a short memory: concurrent callers of one key share one upstream request.

Hundreds of match watchers in a worker ask for the live board every poll interval. Without this,
each ask is a request, which multiplies the provider bill by the number of matches and trips the
hourly limit within minutes. With it, the first caller starts the request, callers arriving while it
is in flight await the same task, and callers arriving within `ttl` after it *started* get its
result — and, after a request that took most of the interval, for a tenth of `ttl` after it
finished, so a slow provider is never asked again the moment it answered. Measured from the start,
requests are at least `ttl` apart (never more than one per interval) and the board is refreshed
every interval even when fetching it takes a while (a 100-match cricket board with every ball takes
seconds: measured from the finish, it would be refreshed every interval *plus* that). A failure is
remembered the same way, so an outage also costs one request per interval, not one per watcher.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass
from typing import Generic, TypeVar

from activities.provider.config import Clock
from activities.provider.errors import ProviderError

T = TypeVar("T")


@dataclass
class _Entry(Generic[T]):
    task: asyncio.Task[T]
    started_at: float
    done_at: float | None = None
    reusable: bool = True


@dataclass(frozen=True)
class CoalescerStats:
    """How callers were served.

    Attributes:
        started: Fetches started (upstream calls, before the transport's own retries).
        joined: Callers that awaited a fetch already in flight.
        cached: Callers served from a finished fetch within its TTL.
    """

    started: int
    joined: int
    cached: int


class Coalescer(Generic[T]):
    """Shares one in-flight or recently finished fetch per key.

    Args:
        ttl: Seconds after a fetch started during which its result (or `ProviderError`) is reused.
        clock: Monotonic seconds.
    """

    def __init__(self, ttl: float, clock: Clock) -> None:
        self._ttl = ttl
        self._clock = clock
        self._entries: dict[Hashable, _Entry[T]] = {}
        self._started = self._joined = self._cached = 0

    @property
    def stats(self) -> CoalescerStats:
        """Counters since construction."""
        return CoalescerStats(started=self._started, joined=self._joined, cached=self._cached)

    async def get(self, key: Hashable, fetch: Callable[[], Awaitable[T]]) -> T:
        """The result of `fetch()` for `key`, shared with every caller within the window.

        Cancelling one caller never cancels the shared fetch; the others still get it.
        """
        entry = self._entries.get(key)
        if entry is not None and not self._fresh(entry):
            entry = None
        if entry is None:
            task = asyncio.create_task(_run(fetch), name=f"coalesced:{key}")
            entry = _Entry(task=task, started_at=self._clock())
            task.add_done_callback(functools.partial(self._finished, entry))
            self._entries[key] = entry
            self._started += 1
        elif entry.task.done():
            self._cached += 1
        else:
            self._joined += 1
        return await asyncio.shield(entry.task)

    async def aclose(self) -> None:
        """Cancel fetches in flight and forget everything."""
        tasks = [entry.task for entry in self._entries.values() if not entry.task.done()]
        self._entries.clear()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def _fresh(self, entry: _Entry[T]) -> bool:
        if entry.done_at is None:
            return True  # in flight
        now = self._clock()
        recent = now - entry.started_at < self._ttl or now - entry.done_at < self._ttl / 10
        return entry.reusable and recent

    def _finished(self, entry: _Entry[T], task: asyncio.Task[T]) -> None:
        entry.done_at = self._clock()
        if task.cancelled():
            entry.reusable = False  # never hand out a cancelled fetch
            return
        error = task.exception()  # also marks it retrieved, so asyncio does not warn
        if error is not None and not isinstance(error, ProviderError):
            entry.reusable = False  # only typed provider failures are worth remembering


async def _run(fetch: Callable[[], Awaitable[T]]) -> T:
    return await fetch()
