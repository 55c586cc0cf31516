"""Per-fixture requests gathered into `fixtures/multi` calls of up to 50 ids.

Every watch of a process asks for its own fixture at its own moment: before kick-off, at each
reconcile, when a match drops off the live board at full time. Sent one by one, 500 matches cost
500 requests a reconcile round; gathered, they cost ten. A caller says how long it may wait for
company (`within`): a reconcile waits up to a poll interval (every watch of the process reaches the
same reconcile slot within one), a match that just left the live board a moment. A batch goes when
it is full or when its most impatient caller's wait is over. A failed request fails every caller
in it with the same `ProviderError`; cancelling one caller never cancels the request.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

T = TypeVar("T")

FetchMany = Callable[[Sequence[int], bool], Awaitable[Mapping[int, T]]]
"""Fetch these ids in one request (the flag: every caller would rather wait than overspend)."""


@dataclass
class _Waiting(Generic[T]):
    futures: list[asyncio.Future[T | None]] = field(default_factory=list)
    deferrable: bool = True


class Batcher(Generic[T]):
    """Gathers ids asked for within a short while into requests of at most `size` ids.

    Args:
        fetch: One request for a batch of ids; ids it does not return are answered None.
        size: Ids per request at most (the provider's 50).
    """

    def __init__(self, fetch: FetchMany[T], size: int) -> None:
        self._fetch = fetch
        self._size = size
        self._waiting: dict[int, _Waiting[T]] = {}
        self._deadline: float | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._requests: set[asyncio.Task[None]] = set()

    async def get(self, fixture_id: int, *, within: float, deferrable: bool = False) -> T | None:
        """The fixture, fetched together with whatever else is asked for in the next `within` s.

        `deferrable` marks a call that may be refused for budget (a reconcile) rather than spend a
        request the live board needs; a batch is deferrable only if every caller in it is.
        """
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T | None] = loop.create_future()
        waiting = self._waiting.setdefault(fixture_id, _Waiting())
        waiting.futures.append(future)
        waiting.deferrable = waiting.deferrable and deferrable
        if len(self._waiting) >= self._size:
            self._flush()
        else:
            self._schedule(loop.time() + max(0.0, within))
        return await asyncio.shield(future)

    async def aclose(self) -> None:
        """Cancel requests in flight and callers still waiting."""
        if self._timer is not None:
            self._timer.cancel()
        for waiting in self._waiting.values():
            for future in waiting.futures:
                future.cancel()
        self._waiting.clear()
        for task in list(self._requests):
            task.cancel()
        await asyncio.gather(*self._requests, return_exceptions=True)

    def _schedule(self, deadline: float) -> None:
        if self._deadline is not None and self._deadline <= deadline:
            return
        if self._timer is not None:
            self._timer.cancel()
        self._deadline = deadline
        self._timer = asyncio.get_running_loop().call_at(deadline, self._flush)

    def _flush(self) -> None:
        """Send everything waiting, `size` ids a request."""
        if self._timer is not None:
            self._timer.cancel()
        self._timer = None
        self._deadline = None
        waiting, self._waiting = self._waiting, {}
        ids = list(waiting)
        for start in range(0, len(ids), self._size):
            chunk = {fixture_id: waiting[fixture_id] for fixture_id in ids[start : start + self._size]}
            task = asyncio.create_task(self._request(chunk), name=f"batch:{len(chunk)}")
            self._requests.add(task)
            task.add_done_callback(self._requests.discard)

    async def _request(self, chunk: dict[int, _Waiting[T]]) -> None:
        deferrable = all(waiting.deferrable for waiting in chunk.values())
        try:
            found = await self._fetch(list(chunk), deferrable)
        except asyncio.CancelledError:
            for waiting in chunk.values():
                for future in waiting.futures:
                    future.cancel()
            raise
        except Exception as error:  # noqa: BLE001 - every caller gets the request's own failure, whatever it is
            for waiting in chunk.values():
                for future in waiting.futures:
                    if not future.done():
                        future.set_exception(error)
                        future.exception()  # a caller that left meanwhile must not log it as lost
            return
        for fixture_id, waiting in chunk.items():
            for future in waiting.futures:
                if not future.done():
                    future.set_result(found.get(fixture_id))
