"""A last look's "go" runs out: the request either leaves within `SendPolicy.look_kept` of its
look or never leaves on it, and then its claim's mark comes off at once.

The look marks the claim as being sent (`PushStore.mark_sending`); a claim marked when its worker
dies is in doubt for good, its alert never sent again. The mark used to come off only when the
request reached its last check (`go`) too late. A request can wait long before that check (for a
connection being opened, a free stream, the send window, a worker catching up after a pause): the
soak of 2026-12-06 (seed 21) had 342 goal alerts marked 4.7 s before their worker's SIGKILL, none
of them sent, all in doubt. The lapse takes the mark off `look_kept` after the look, whether the
request has reached its check yet or not, so a kill later than that (and the unmark's write) leaves
the claim to the next attempt.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from enum import Enum


class _State(Enum):
    OPEN = "open"
    """Neither checked nor run out yet."""
    CHECKED = "checked"
    """The request reached its last check in time: it is the check's to decide."""
    LAPSED = "lapsed"
    """Run out first: the request never leaves on this look."""


class LookLapse:
    """One look's lapse, for one request; a timer on the running loop, no task until it fires."""

    def __init__(self, looked_at: float, kept: float, unmark: Callable[[], Awaitable[None]]) -> None:
        self._looked_at = looked_at
        self._kept = kept
        self._unmark = unmark
        self._state = _State.OPEN
        self._unmarking: asyncio.Task[None] | None = None
        delay = max(0.0, looked_at + kept - time.monotonic())
        self._timer = asyncio.get_running_loop().call_later(delay, self._lapse)

    def holds(self) -> bool:
        """Asked at the request's last check, with nothing between it and the first byte: whether
        the look still holds. Once asked, the look no longer lapses on its own."""
        if self._state is _State.OPEN and time.monotonic() - self._looked_at > self._kept:
            self._lapse()  # the timer is late: the loop was busy or paused
        if self._state is _State.OPEN:
            self._state = _State.CHECKED
            self._timer.cancel()
        return self._state is _State.CHECKED

    @property
    def lapsed(self) -> bool:
        return self._state is _State.LAPSED

    async def close(self) -> None:
        """Stop the timer; back once a lapse's unmark is written (or given up). The next look
        must come after it: an unmark landing after a new mark would take that mark off while
        its request may be on its way."""
        self._timer.cancel()
        if self._unmarking is not None:
            await asyncio.shield(self._unmarking)

    def _lapse(self) -> None:
        if self._state is _State.OPEN:
            self._state = _State.LAPSED
            self._unmarking = asyncio.ensure_future(self._unmark())
