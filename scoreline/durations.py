"""Duration strings used by every interval setting (`"2.5s"`, `"500ms"`, `"1m"`, `"7d"`, `"off"`).

Intervals are written by operators in env files and compose files, where a bare number is ambiguous
(seconds? milliseconds?). A unit is therefore required, and `off` is the documented kill switch.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Annotated

from pydantic import BeforeValidator, PlainSerializer

_UNITS: dict[str, float] = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
# Days exist for retention ages (`RETENTION_*_AGE=30d`), where hours would be noise.
_PATTERN = re.compile(r"^\s*(?P<value>\d+(?:\.\d+)?)\s*(?P<unit>ms|s|m|h|d)\s*$")
OFF_WORDS = frozenset({"off", "disabled", "none"})


class DurationError(ValueError):
    """A duration string that is neither `<number><unit>` nor `off`."""


def parse_duration(text: str | float | timedelta | None) -> timedelta | None:
    """Parse `"2.5s"` into a timedelta; `"off"` (or None) means disabled and gives None."""
    if text is None or isinstance(text, timedelta):
        return text
    if isinstance(text, int | float):
        raise DurationError(f"duration {text!r} needs a unit, e.g. '{text}s'")
    if text.strip().lower() in OFF_WORDS:
        return None
    match = _PATTERN.match(text)
    if match is None:
        raise DurationError(f"duration {text!r} is not like '2.5s', '500ms', '1m', '1h', '7d' or 'off'")
    seconds = float(match["value"]) * _UNITS[match["unit"]]
    if seconds <= 0:
        raise DurationError(f"duration {text!r} must be positive; write 'off' to disable")
    return timedelta(seconds=seconds)


def format_duration(value: timedelta | None) -> str:
    """The inverse of `parse_duration`, for env files the dev stack writes."""
    if value is None:
        return "off"
    # Fixed point, never `:g`: 30 days in `g` form is `2.592e+06s`, which does not parse back.
    seconds = f"{value.total_seconds():.6f}".rstrip("0").rstrip(".")
    return f"{seconds}s"


def _required(text: str | float | timedelta) -> timedelta:
    parsed = parse_duration(text)
    if parsed is None:
        raise DurationError("this interval cannot be turned off")
    return parsed


Duration = Annotated[timedelta, BeforeValidator(_required), PlainSerializer(format_duration)]
"""A required duration: `off` is refused."""

OptionalDuration = Annotated[
    timedelta | None, BeforeValidator(parse_duration), PlainSerializer(format_duration)
]
"""A duration that `off` disables (None)."""


def parse_durations(text: str | tuple[timedelta, ...] | list[timedelta]) -> tuple[timedelta, ...]:
    """`"2m,10m,1h"` into its durations, in order; `"off"` (or an empty string) is none at all."""
    if isinstance(text, tuple | list):
        return tuple(_required(part) for part in text)
    if text.strip().lower() in OFF_WORDS or not text.strip():
        return ()
    return tuple(_required(part) for part in text.split(","))


def format_durations(values: tuple[timedelta, ...]) -> str:
    """The inverse of `parse_durations`."""
    return ",".join(format_duration(value) for value in values) or "off"


DurationList = Annotated[
    tuple[timedelta, ...], BeforeValidator(parse_durations), PlainSerializer(format_durations)
]
"""Comma-separated durations (`2m,10m,1h,6h,24h`); `off` is the empty list."""
