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
their look, behind a newer alert claimed meanwhile). Across workers the newer push's own look
closes it: it waits (`Standing.BEHIND`) while the activity still shows an older push let go and
not settled, for three seconds at most (seed 18: 39 phones got a routine update after a newer
one, claimed on the other worker after the routine update's look).

It also asks whether the token is still live in Postgres: another worker may have written its 410
after this fan-out read its targets (seed 16: a phone following two fixtures got its second
push-to-start 15 s after the first one's 410 was committed, while Redis, which tells the workers at
once, was down).
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from enum import Enum
from typing import Generic, TypeVar

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
    BEHIND = "behind"
    """Still the newest claimed, but an older push's request may still be on its way to the
    activity (another worker's, let go by its own look a moment ago): not marked, look again
    shortly."""
    GONE = "gone"
    """Postgres has switched the token off since the target was read (its 410 came to another
    push): not marked, never sent."""
    UNKNOWN = "unknown"
    """Postgres could not be reached: neither sent nor marked."""


@dataclass(frozen=True)
class Marks:
    """What one look statement found for the live activities it was asked about."""

    marked: set[int]
    """Still the newest claimed, token live: marked as being sent."""
    gone: set[int] = field(default_factory=set)
    """Token switched off: not marked."""
    behind: set[int] = field(default_factory=set)
    """An older push's request may still be on its way: not marked. Any other id asked was
    overtaken."""

    def standing(self, live_activity_id: int) -> Standing:
        if live_activity_id in self.gone:
            return Standing.GONE
        if live_activity_id in self.behind:
            return Standing.BEHIND
        return Standing.GO if live_activity_id in self.marked else Standing.OVERTAKEN


MarkSending = Callable[[list[int]], Awaitable[Marks | None]]
"""Mark these live activities' claims as being sent where the push is still the newest claimed,
the token live and no older push on its way; what it found (None: Postgres could not be reached)."""
UnmarkSending = Callable[[list[int]], Awaitable[None]]
"""Take the mark off these live activities' claims, and off the activities: their request was
answered, not delivered (or never left)."""
_R = TypeVar("_R")


class LastLook:
    """Answers `look(activity id)` for one fan-out attempt, many askers to one statement.

    `unmark(activity id)` takes the mark off again when APNs answered without delivering (429,
    5xx, a refused connection …) and the push waits for its next try: a claim is marked only while
    a request may be on its way. The soak's seed 16 SIGKILLed a worker while a goal's alerts for 74
    phones waited out the backoff of a 429 burst: marked, they were taken over as in doubt and
    never sent.
    """

    def __init__(
        self, mark_sending: MarkSending, unmark_sending: UnmarkSending, gather: float = GATHER_S
    ) -> None:
        self._marks = _Shared(mark_sending, gather)
        self._unmarks = _Shared(unmark_sending, gather)

    async def look(self, live_activity_id: int) -> Standing:
        """The answer of a statement sent after this call."""
        marks = await self._marks.ask(live_activity_id)
        return Standing.UNKNOWN if marks is None else marks.standing(live_activity_id)

    async def unmark(self, live_activity_id: int) -> None:
        """Back from a statement sent after this call (it waits a Postgres outage out, at most
        `store.OUTAGE_PATIENCE_S`; then the claim stays marked, in doubt at a SIGKILL)."""
        await self._unmarks.ask(live_activity_id)


class _Shared(Generic[_R]):
    """One statement about many live activities, shared by everyone who asks about one while it
    gathers (at most one every `gather` seconds, one at a time)."""

    def __init__(self, statement: Callable[[list[int]], Awaitable[_R]], gather: float) -> None:
        self._statement = statement
        self._gather = gather
        self._waiting: dict[int, list[asyncio.Future[_R]]] = {}
        self._asking: asyncio.Task[None] | None = None

    async def ask(self, live_activity_id: int) -> _R:
        """The result of a statement sent after this call and covering `live_activity_id`."""
        answer: asyncio.Future[_R] = asyncio.get_running_loop().create_future()
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
                result: _R | BaseException
                try:
                    result = await self._statement(list(asked))
                except Exception as error:  # noqa: BLE001 - handed to every asker, not swallowed
                    result = error
                for answers in asked.values():
                    for answer in answers:
                        if answer.done():  # its asker was cancelled meanwhile
                            continue
                        if isinstance(result, BaseException):
                            answer.set_exception(result)
                        else:
                            answer.set_result(result)
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
