"""The replay clock: which moment of the recordings the simulator is showing.

Replay time `t` is seconds since the recordings' `start`. It runs `speed` times faster than real
time from an anchor, and tests move the anchor (`set`, `advance`) or stop the clock (`freeze`)
instead of waiting. The clock also fixes the real moment of `t = 0` (`clock_zero`), which is what
recorded timestamps are mapped onto (see `timemap.py`).
"""

from __future__ import annotations

import time
from collections.abc import Callable


class ReplayClock:
    """Replay time, anchored to wall-clock time.

    Wall-clock (not monotonic) time is used for both the running clock and `clock_zero`, so the
    times a fixture shows and the moment the replay reaches them come from the same source.

    Args:
        speed: Replay seconds per real second; must be positive.
        t: Replay time at construction.
        frozen: Start stopped; `t` then moves only through `set`/`advance`.
        wall: Source of wall-clock epoch seconds (injectable for tests).
    """

    def __init__(
        self,
        *,
        speed: float = 1.0,
        t: float = 0.0,
        frozen: bool = False,
        wall: Callable[[], float] = time.time,
    ) -> None:
        if speed <= 0:
            raise ValueError(f"speed must be positive, got {speed}")
        self._speed = speed
        self._wall = wall
        self._anchor_wall = wall()
        self._anchor_t = t
        self._frozen = frozen

    @classmethod
    def starting_in(cls, seconds: float, *, speed: float = 1.0) -> ReplayClock:
        """A running clock that reaches `t = 0` after `seconds` of real time."""
        return cls(speed=speed, t=-seconds * speed)

    @property
    def speed(self) -> float:
        """Replay seconds per real second."""
        return self._speed

    @property
    def frozen(self) -> bool:
        """True while the clock is stopped."""
        return self._frozen

    @property
    def clock_zero(self) -> float:
        """The wall-clock epoch at which the replay is (or was) at `t = 0`.

        While frozen this is computed from the moment of freezing, so mapped times stay fixed.
        """
        return self._anchor_wall - self._anchor_t / self._speed

    def now(self) -> float:
        """The current replay time."""
        if self._frozen:
            return self._anchor_t
        return self._anchor_t + (self._wall() - self._anchor_wall) * self._speed

    def wall_at(self, t: float) -> float:
        """The wall-clock epoch at which the replay reaches `t`."""
        return self.clock_zero + t / self._speed

    def real_seconds(self, replay_seconds: float) -> float:
        """How long `replay_seconds` of replay time take in real time."""
        return replay_seconds / self._speed

    def set(self, t: float) -> None:
        """Jump to replay time `t`; a running clock keeps running from there."""
        self._anchor_wall = self._wall()
        self._anchor_t = t

    def advance(self, seconds: float) -> None:
        """Move the replay time by `seconds` (negative goes back)."""
        self.set(self.now() + seconds)

    def freeze(self) -> None:
        """Stop the clock at the current replay time."""
        self.set(self.now())
        self._frozen = True

    def resume(self) -> None:
        """Let a frozen clock run again from where it stopped."""
        self.set(self.now())
        self._frozen = False
