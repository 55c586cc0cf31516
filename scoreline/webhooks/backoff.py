"""When to try a message again: capped exponential backoff with full jitter, and `Retry-After`.

Full jitter (a uniform draw between 0 and the capped exponential) spreads the retries of many
endpoints that failed together, so a receiver coming back is not hit by all of them at once. A
`Retry-After` the receiver sent is honoured as a floor (never sooner than it asked), bounded by
`RETRY_AFTER_LIMIT` so one answer cannot park a message for days.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import Final

RETRY_AFTER_LIMIT: Final = timedelta(hours=1)


def backoff(attempts: int, first: timedelta, cap: timedelta, rng: random.Random | None = None) -> timedelta:
    """A delay in [0, min(cap, first * 2**(attempts-1))] after the `attempts`-th failed attempt."""
    exponent = min(max(attempts - 1, 0), 62)
    ceiling = min(cap.total_seconds(), first.total_seconds() * 2**exponent)
    return timedelta(seconds=(rng or random).uniform(0.0, ceiling))


def parse_retry_after(value: str | None, now: datetime) -> timedelta | None:
    """`Retry-After` as a delay from `now`: delta-seconds or an HTTP date; None if absent or unreadable."""
    if value is None:
        return None
    text = value.strip()
    if text.isdigit():
        return timedelta(seconds=int(text))
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        return None
    return max(when - now, timedelta(0))


def next_delay(
    attempts: int,
    first: timedelta,
    cap: timedelta,
    retry_after: timedelta | None,
    rng: random.Random | None = None,
) -> timedelta:
    """The wait before the next attempt: the jittered backoff, but never less than `Retry-After`."""
    delay = backoff(attempts, first, cap, rng)
    if retry_after is not None:
        delay = max(delay, min(retry_after, RETRY_AFTER_LIMIT))
    return delay
