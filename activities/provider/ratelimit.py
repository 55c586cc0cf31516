"""Honouring the provider's rate limit: after a 429, nothing is sent until the reset it announced.

SportMonks counts calls per entity per hour and, once the budget is spent, answers 429 with
`rate_limit.resets_in_seconds` in the body (provider-api.md §5). Hammering it then only burns
time; worse, other workers share the budget. So the gate remembers the reset moment and refuses
every call locally (a typed `ProviderRateLimited` carrying `retry_at`) until it has passed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

from activities.provider.config import Clock
from activities.provider.errors import ProviderRateLimited
from scoreline.logging import get_logger
from scoreline.metrics.instruments import metrics

log = get_logger(__name__)


def resets_in_seconds(body: object) -> float | None:
    """`rate_limit.resets_in_seconds` from a decoded body, if it is a sane number."""
    if not isinstance(body, Mapping):
        return None
    block = body.get("rate_limit")
    value = block.get("resets_in_seconds") if isinstance(block, Mapping) else None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return max(0.0, float(value))


def remaining_calls(body: object) -> int | None:
    """`rate_limit.remaining` from a decoded body, if present."""
    if not isinstance(body, Mapping):
        return None
    block = body.get("rate_limit")
    value = block.get("remaining") if isinstance(block, Mapping) else None
    # A negative count is no count (and the metrics gauge refuses one).
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def requested_entity(body: object) -> str | None:
    """`rate_limit.requested_entity` (the entity whose hourly budget the call spent), if present."""
    if not isinstance(body, Mapping):
        return None
    block = body.get("rate_limit")
    value = block.get("requested_entity") if isinstance(block, Mapping) else None
    return value if isinstance(value, str) and value else None


def retry_after_seconds(header: str | None, now: float) -> float | None:
    """Seconds a `Retry-After` header asks for: delta-seconds or an HTTP date (RFC 9110 §10.2.3)."""
    if not header:
        return None
    text = header.strip()
    if text.isdigit():
        return float(text)
    try:
        moment = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return max(0.0, moment.timestamp() - now)


class RateLimitGate:
    """Remembers until when the provider must not be called.

    Args:
        clock: Monotonic seconds (decides when the window is over).
        wall: Epoch seconds (only for the `retry_at` shown to callers).
    """

    def __init__(self, clock: Clock, wall: Clock) -> None:
        self._clock = clock
        self._wall = wall
        self._until = -math.inf
        self._refused = 0

    @property
    def retry_in(self) -> float:
        """Seconds until calls may be sent again; 0 when open."""
        return max(0.0, self._until - self._clock())

    @property
    def refused(self) -> int:
        """Calls refused locally so far."""
        return self._refused

    def retry_at(self) -> datetime:
        """The moment calls may be sent again, as UTC wall time."""
        return datetime.fromtimestamp(self._wall() + self.retry_in, tz=UTC)

    def check(self, endpoint: str) -> None:
        """Raise `ProviderRateLimited` (without sending anything) while the window lasts."""
        if self._clock() < self._until:
            self._refused += 1
            raise ProviderRateLimited(endpoint, self.retry_at())

    def hold(self, seconds: float, endpoint: str, *, source: str) -> datetime:
        """Refuse calls for `seconds` from now (a later reset already known is kept).

        Returns:
            The resulting `retry_at`.
        """
        until = self._clock() + max(0.0, seconds)
        if until > self._until:
            if self._clock() >= self._until:
                metrics().rate_limit_windows.add(1, {"source": source})
            self._until = until
        retry_at = self.retry_at()
        log.warning(
            "provider.rate_limited",
            endpoint=endpoint,
            source=source,
            retry_in=round(self.retry_in, 3),
            retry_at=retry_at.isoformat(),
        )
        return retry_at
