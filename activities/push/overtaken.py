"""Whether a newer push has claimed an activity, asked by each delivery just before its request.

Two fan-outs of one fixture run side by side (the lanes), and a device keeps the newest state: a
push older than one already sent is dropped by the phone, and sent out of order either way. A
claim moves the activity's last-sent timestamp forward, so an older push whose claim came first
must look again right before it reaches APNs. Claimed early is not sent early: a delivery can
wait for an in-flight slot for seconds (the soak of 2026-12-02, seed 12: a routine update waiting
out a throttled limit went to 31 phones 88 ms after the innings-end alert claimed after it).

One question per delivery would cost a 10,000-device fan-out 10,000 queries; the deliveries
taking their slots together share one (at most one every `GATHER_S`, and one at a time).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

GATHER_S = 0.005
"""Shortest time between two questions of one fan-out: a request waits at most this much longer."""

Overtaken = Callable[[list[int]], Awaitable[set[int]]]
"""Of these live activity ids, those a newer push has claimed (a failed read: none)."""


class NewerClaims:
    """Answers `current(activity id)` for one push, many askers to one query."""

    def __init__(self, overtaken: Overtaken, gather: float = GATHER_S) -> None:
        self._overtaken = overtaken
        self._gather = gather
        self._waiting: dict[int, list[asyncio.Future[bool]]] = {}
        self._asking: asyncio.Task[None] | None = None

    async def current(self, live_activity_id: int) -> bool:
        """Whether this push is still the newest claimed for the activity, as of a read begun
        after this call."""
        answer: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(live_activity_id, []).append(answer)
        if self._asking is None:
            self._asking = asyncio.create_task(self._ask())
        return await answer

    async def _ask(self) -> None:
        """Ask for everyone waiting, then again while more came meanwhile."""
        try:
            while self._waiting:
                await asyncio.sleep(self._gather)
                asked, self._waiting = self._waiting, {}
                newer: set[int] | BaseException
                try:
                    newer = await self._overtaken(list(asked))
                except Exception as error:  # noqa: BLE001 - handed to every asker, not swallowed
                    newer = error
                for live_activity_id, answers in asked.items():
                    for answer in answers:
                        if answer.done():  # its asker was cancelled meanwhile
                            continue
                        if isinstance(newer, BaseException):
                            answer.set_exception(newer)
                        else:
                            answer.set_result(live_activity_id not in newer)
        finally:
            self._asking = None
