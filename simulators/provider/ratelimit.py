"""The per-entity hourly request budget every SportMonks response reports in `rate_limit`.

The window opens with an entity's first request and resets an hour of real time later, as on the
real API; the budget is about the client's request rate, so it does not scale with `--speed`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

# SportMonks' top plan (Enterprise) allows 5,000 calls per entity per hour.
DEFAULT_LIMIT = 5000
WINDOW_SECONDS = 3600.0


@dataclass(frozen=True)
class Quota:
    """What a response reports: calls left in the window and when it resets."""

    remaining: int
    resets_in_seconds: int


class RateLimiter:
    """Counts calls per entity in hourly windows.

    Args:
        limit: Calls per entity per window.
        wall: Source of epoch seconds (injectable for tests).
    """

    def __init__(self, limit: int = DEFAULT_LIMIT, *, wall: Callable[[], float] = time.time) -> None:
        self._limit = limit
        self._wall = wall
        self._windows: dict[str, tuple[float, int]] = {}

    def _window(self, entity: str) -> tuple[float, int]:
        now = self._wall()
        opened, used = self._windows.get(entity, (now, 0))
        if now - opened >= WINDOW_SECONDS:
            opened, used = now, 0
        return opened, used

    def _resets_in(self, opened: float) -> int:
        return max(1, math.ceil(opened + WINDOW_SECONDS - self._wall()))

    def take(self, entity: str) -> Quota | None:
        """Spend one call; None when the window's budget is already used up."""
        opened, used = self._window(entity)
        if used >= self._limit:
            return None
        self._windows[entity] = (opened, used + 1)
        return Quota(remaining=self._limit - used - 1, resets_in_seconds=self._resets_in(opened))

    def peek(self, entity: str) -> Quota:
        """The quota without spending a call (for 429 answers)."""
        opened, used = self._window(entity)
        return Quota(remaining=max(0, self._limit - used), resets_in_seconds=self._resets_in(opened))
