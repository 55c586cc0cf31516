"""The worker's memory of tokens APNs has just answered dead, shared by every fan-out in it.

Two fan-outs (two matches a phone follows) can retry the same push-to-start token through a
throttling burst; the one that gets the 410 writes it to Postgres only with its batch. The other's
next retry asks here first and stops, instead of sending to a token Apple has said is gone (the
soak of 2026-12-02, seed 6, sent one 7 s after the 410). Only deaths answered after a delivery
began stop it: a token the app registered again later is for Postgres to judge, not this memory.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass

KEPT = 100_000
"""Most tokens remembered; the oldest are forgotten first (a retry looks back seconds, not days)."""


@dataclass(frozen=True)
class Death:
    at: float
    """`time.monotonic()` when the answer came."""
    status: int
    reason: str | None
    timestamp_ms: int | None
    """APNs' `timestamp` of the 410: when the token stopped being valid."""


class DeadTokens:
    def __init__(self, kept: int = KEPT) -> None:
        self._deaths: OrderedDict[str, Death] = OrderedDict()
        self._kept = kept

    def record(self, token: str, status: int, reason: str | None, timestamp_ms: int | None) -> None:
        self._deaths[token] = Death(time.monotonic(), status, reason, timestamp_ms)
        self._deaths.move_to_end(token)
        while len(self._deaths) > self._kept:
            self._deaths.popitem(last=False)

    def since(self, token: str, began: float) -> Death | None:
        """The answer that killed `token` after `began` (`time.monotonic()`), if any."""
        death = self._deaths.get(token)
        return death if death is not None and death.at >= began else None
