"""The last look before a request: is this push still the newest claimed for the activity, and
marked as being sent?

Two fan-outs of one fixture run side by side (the lanes), and a device keeps the newest state: a
push older than one already sent is dropped by the phone, out of order either way. A claim moves
the activity's last-sent timestamp forward, so an older push whose claim came first must look again
right before it reaches APNs. Claimed early is not sent early: a delivery can wait for an in-flight
slot for seconds (the soak of 2026-12-02, seed 12: a routine update waiting out a throttled limit
went to 31 phones 88 ms after the innings-end alert claimed after it).

The look also writes ahead that the request is going out (`sending` on the claim): a claim the
look never marked never reached APNs, so the next attempt of a fan-out SIGKILLed before its
requests sends it (seed 14: a goal's 89 alerts and 9 push-to-starts claimed by a sluggish worker
that was killed before sending them were in doubt, never sent). Only a marked claim is in doubt.

One look per delivery would cost a 10,000-device fan-out 10,000 statements; the deliveries taking
their slots together share one (at most one every `GATHER_S`, one at a time). What a look cannot
see is a newer claim committed between its statement and the request; in the same worker
`ClaimedHere` closes that gap too (seed 14: 45 requests of a busy worker started 155 ms after
their look, behind a newer alert claimed meanwhile).
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable
from enum import Enum

GATHER_S = 0.005
"""Shortest time between two looks of one fan-out: a request waits at most this much longer."""
KEPT = 100_000
"""Most activities `ClaimedHere` remembers; the least recently claimed are forgotten first."""


class Standing(Enum):
    """Where a claim stands when its request is about to start."""

    GO = "go"
    """Still the newest claimed, and marked as being sent."""
    OVERTAKEN = "overtaken"
    """A newer push has claimed the activity (or this attempt no longer holds the claim)."""
    UNKNOWN = "unknown"
    """Postgres could not be reached: neither sent nor marked."""


MarkSending = Callable[[list[int]], Awaitable[set[int] | None]]
"""Mark these live activities' claims as being sent where the push is still the newest claimed;
the ids marked (None: Postgres could not be reached)."""


class LastLook:
    """Answers `look(activity id)` for one fan-out attempt, many askers to one statement."""

    def __init__(self, mark_sending: MarkSending, gather: float = GATHER_S) -> None:
        self._mark_sending = mark_sending
        self._gather = gather
        self._waiting: dict[int, list[asyncio.Future[Standing]]] = {}
        self._asking: asyncio.Task[None] | None = None

    async def look(self, live_activity_id: int) -> Standing:
        """The answer of a statement sent after this call."""
        answer: asyncio.Future[Standing] = asyncio.get_running_loop().create_future()
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
                marked: set[int] | BaseException | None
                try:
                    marked = await self._mark_sending(list(asked))
                except Exception as error:  # noqa: BLE001 - handed to every asker, not swallowed
                    marked = error
                for live_activity_id, answers in asked.items():
                    for answer in answers:
                        if answer.done():  # its asker was cancelled meanwhile
                            continue
                        if isinstance(marked, BaseException):
                            answer.set_exception(marked)
                        elif marked is None:
                            answer.set_result(Standing.UNKNOWN)
                        else:
                            answer.set_result(
                                Standing.GO if live_activity_id in marked else Standing.OVERTAKEN
                            )
        finally:
            self._asking = None


class ClaimedHere:
    """The newest push timestamp this worker has claimed per live activity, shared by its fan-outs.

    Asked with no await between the answer and the request, so a newer claim made in this worker
    is never overtaken by an older push's request, however late that request starts."""

    def __init__(self, kept: int = KEPT) -> None:
        self._newest: OrderedDict[int, int] = OrderedDict()
        self._kept = kept

    def claimed(self, live_activity_ids: Iterable[int], timestamp: int) -> None:
        for live_activity_id in live_activity_ids:
            newest = max(timestamp, self._newest.pop(live_activity_id, timestamp))
            self._newest[live_activity_id] = newest
        while len(self._newest) > self._kept:
            self._newest.popitem(last=False)

    def newer_than(self, live_activity_id: int, timestamp: int) -> bool:
        """Whether a push stamped after `timestamp` has claimed the activity in this worker."""
        return self._newest.get(live_activity_id, timestamp) > timestamp
