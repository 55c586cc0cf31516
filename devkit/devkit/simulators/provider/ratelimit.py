"""The per-entity hourly request budget every SportMonks response reports in `rate_limit`.

The window opens with an entity's first request and resets `window_seconds` of real time later (an
hour, as on the real API, unless a test sets a shorter one through `POST /_sim/rate-limit`); the
budget is about the client's request rate, so it does not scale with `--speed`.
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


@dataclass(frozen=True)
class Usage:
    """An entity's current window: calls answered in it, calls left and when it resets."""

    used: int
    remaining: int
    resets_in_seconds: int


class RateLimiter:
    """Counts calls per entity in fixed windows, and the calls it refused (answered 429).

    Args:
        limit: Calls per entity per window.
        window_seconds: The window's length in real seconds (an hour on the real API).
        wall: Source of epoch seconds (injectable for tests).

    Raises:
        ValueError: A limit below 1 or a window that is not positive.
    """

    def __init__(
        self,
        limit: int = DEFAULT_LIMIT,
        *,
        window_seconds: float = WINDOW_SECONDS,
        wall: Callable[[], float] = time.time,
    ) -> None:
        if limit < 1 or not window_seconds > 0:
            raise ValueError("a rate limit needs at least one call per positive window")
        self._limit = limit
        self._window_seconds = float(window_seconds)
        self._wall = wall
        self._windows: dict[str, tuple[float, int]] = {}
        self._refused = 0

    @property
    def limit(self) -> int:
        """Calls per entity per window."""
        return self._limit

    @property
    def window_seconds(self) -> float:
        """The window's length, real seconds."""
        return self._window_seconds

    @property
    def refused(self) -> int:
        """Calls refused because their window's budget was used up (each one a 429)."""
        return self._refused

    def _window(self, entity: str) -> tuple[float, int]:
        now = self._wall()
        opened, used = self._windows.get(entity, (now, 0))
        if now - opened >= self._window_seconds:
            opened, used = now, 0
        return opened, used

    def _resets_in(self, opened: float) -> int:
        return max(1, math.ceil(opened + self._window_seconds - self._wall()))

    def take(self, entity: str) -> Quota | None:
        """Spend one call; None (and one more refusal counted) when the window's budget is used up."""
        opened, used = self._window(entity)
        if used >= self._limit:
            self._refused += 1
            return None
        self._windows[entity] = (opened, used + 1)
        return Quota(remaining=self._limit - used - 1, resets_in_seconds=self._resets_in(opened))

    def peek(self, entity: str) -> Quota:
        """The quota without spending a call (for 429 answers)."""
        opened, used = self._window(entity)
        return Quota(remaining=max(0, self._limit - used), resets_in_seconds=self._resets_in(opened))

    def usage(self) -> dict[str, Usage]:
        """Every entity called in a window still open, by name."""
        found: dict[str, Usage] = {}
        for entity in self._windows:
            opened, used = self._window(entity)
            if used:
                found[entity] = Usage(
                    used=used,
                    remaining=max(0, self._limit - used),
                    resets_in_seconds=self._resets_in(opened),
                )
        return found
