"""Map the times inside a recorded cricket fixture onto the replay's real time.

The mapping is football's (`clock_zero + (recorded - start) / speed`, see `timemap`), on Cricket
v2's ISO form (`2024-03-22T14:30:00.000000Z`). Mapped are `starting_at` and the `updated_at` of the
match's own rows (the fixture, balls, runs, battings, bowlings, scoreboards): a ball's `updated_at`
is when the provider last touched it, so it must move with the replay. Teams', players' and
venues' `updated_at` are dates of the provider's reference data, years before or days after the
match; they are left as recorded.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

DATETIME_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"
MATCH_RESOURCES = frozenset({"fixtures", "balls", "runs", "battings", "bowlings", "scoreboards"})


def parse_datetime(text: str) -> float:
    """Epoch seconds of a Cricket v2 datetime (`2024-03-22T14:30:00.000000Z`); ValueError if not one."""
    if not text.endswith("Z"):
        raise ValueError(f"expected a UTC time ending in Z, got {text!r}")
    return datetime.fromisoformat(text).timestamp()


def format_datetime(epoch: float) -> str:
    """A Cricket v2 datetime for epoch seconds."""
    return datetime.fromtimestamp(epoch, UTC).strftime(DATETIME_FORMAT)


@dataclass(frozen=True)
class CricketTimeMap:
    """The mapping for one recording at one moment (attributes as `timemap.TimeMap`)."""

    origin: float
    clock_zero: float
    speed: float

    def epoch(self, recorded: float) -> float:
        """The real epoch at which the replay reaches recorded epoch `recorded`."""
        return self.clock_zero + (recorded - self.origin) / self.speed

    def _time(self, text: str) -> str:
        return format_datetime(round(self.epoch(parse_datetime(text))))

    def apply(self, value: Any) -> Any:
        """A copy of `value` with every match time mapped.

        Raises:
            ValueError: A mapped field holding a string that is not a Cricket v2 datetime.
        """
        if type(value) is list:
            return [self.apply(item) for item in value]
        if type(value) is not dict:
            return value
        match_row = value.get("resource") in MATCH_RESOURCES
        mapped: dict[str, Any] = {}
        for key, item in value.items():
            kind = type(item)
            if kind is dict or kind is list:
                mapped[key] = self.apply(item)
            elif kind is str and (key == "starting_at" or (match_row and key == "updated_at")):
                mapped[key] = self._time(item)
            else:
                mapped[key] = item
        return mapped
