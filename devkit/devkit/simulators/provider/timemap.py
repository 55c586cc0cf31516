"""Map the times inside a recorded fixture onto the replay's real time.

A recorded time `x` is shown as `clock_zero + (x - start) / speed`: the moment the replay reaches
it. Kick-off then happens when the replay gets there, and fixture lists show sensible dates. The
mapping walks the whole object, so nested period objects (`events[].period`, `currentperiod`) move
together with `periods`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

# SportMonks writes datetimes in UTC with a space and no zone: "2025-05-25 15:00:00".
DATETIME_FORMAT = "%Y-%m-%d %H:%M:%S"
EPOCH_FIELDS = frozenset({"starting_at_timestamp", "started", "ended"})
DATETIME_FIELDS = frozenset({"starting_at"})


def parse_datetime(text: str) -> float:
    """Epoch seconds of a SportMonks datetime string; ValueError if it is not one."""
    return datetime.strptime(text, DATETIME_FORMAT).replace(tzinfo=UTC).timestamp()


def format_datetime(epoch: float) -> str:
    """A SportMonks datetime string for epoch seconds."""
    return datetime.fromtimestamp(epoch, UTC).strftime(DATETIME_FORMAT)


@dataclass(frozen=True)
class TimeMap:
    """The mapping for one recording at one moment.

    Attributes:
        origin: Epoch seconds of the recording's `start` (replay `t = 0`).
        clock_zero: Wall-clock epoch at which the replay is at `t = 0`.
        speed: Replay seconds per real second.
    """

    origin: float
    clock_zero: float
    speed: float

    def epoch(self, recorded: float) -> float:
        """The real epoch at which the replay reaches recorded epoch `recorded`."""
        return self.clock_zero + (recorded - self.origin) / self.speed

    def apply(self, value: Any) -> Any:
        """A copy of `value` with every recorded time mapped.

        Raises:
            ValueError: A `starting_at` that is not a SportMonks datetime string.
        """
        if type(value) is list:
            return [self.apply(item) for item in value]
        if type(value) is not dict:
            return value
        # A hot path (every served fixture, every recorded line at load): exact type checks and a
        # set lookup before anything slower.
        mapped: dict[str, Any] = {}
        for key, item in value.items():
            kind = type(item)
            if kind is dict or kind is list:
                mapped[key] = self.apply(item)
            elif key in EPOCH_FIELDS and (kind is int or kind is float):
                mapped[key] = round(self.epoch(item))
            elif key in DATETIME_FIELDS and kind is str:
                mapped[key] = format_datetime(round(self.epoch(parse_datetime(item))))
            else:
                mapped[key] = item
        return mapped
