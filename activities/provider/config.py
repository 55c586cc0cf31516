"""How the provider client behaves: timeouts, retries, breaker, bulkhead, coalescing.

The defaults are chosen for SportMonks and a 2.5 s live poll (see each field); tests shrink them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Literal

from activities.provider.budget import affordable_board_interval
from scoreline.settings import Settings

# SportMonks serves every sport under one host; the football API lives below this prefix.
FOOTBALL_PREFIX = "/v3/football"
# The relations the normaliser turns into a Snapshot. Livescores allow three levels of nesting;
# `events.type` is the only nested one.
DEFAULT_INCLUDES = "participants;scores;state;periods;events.type;timeline"
DEFAULT_LIVE_TTL = 2.5

Clock = Callable[[], float]
TokenPlacement = Literal["header", "query"]
"""Football v3 takes the token in `Authorization`; Cricket v2 only as the `api_token` parameter."""


@dataclass(frozen=True)
class RetryPolicy:
    """Retries of transient failures (connect/read errors, timeouts, 5xx, broken bodies).

    Full jitter: the n-th wait is uniform in `[0, min(backoff_max, backoff_base * 2**(n-1))]`, so
    many workers that failed together do not come back together.

    Attributes:
        attempts: Requests per call at most. Three is enough to ride out a reset connection or one
            bad gateway; more only delays the next poll, which retries anyway.
        backoff_base: Width of the first jitter window, in seconds.
        backoff_max: Cap on a window; below one poll interval so a retry never skips a poll.
        deadline: No retry is started if its wait would end after this many seconds from the first
            attempt (tenacity's `stop_before_delay`): a caller's total wait stays bounded.
    """

    attempts: int = 3
    backoff_base: float = 0.25
    backoff_max: float = 2.0
    deadline: float = 10.0


@dataclass(frozen=True)
class BreakerPolicy:
    """When the circuit breaker opens and how long it stays open.

    Attributes:
        failure_threshold: Consecutive failed *requests* (attempts, not calls) that open it; five is
            two live polls' worth of retries, so one blip never opens it but an outage does quickly.
        cooldown: Seconds open before one half-open probe is let through. 30 s keeps a dead
            provider from costing more than ~120 probes an hour of a 2,000-5,000/h budget.
    """

    failure_threshold: int = 5
    cooldown: float = 30.0


@dataclass(frozen=True)
class ProviderClientConfig:
    """Everything the client needs besides the httpx client.

    Attributes:
        token: The SportMonks API token, sent as the raw `Authorization` header (never in URLs,
            so it does not end up in access logs).
        timeout: Seconds one request may take, from send to the last byte of the body.
        retry: Retry policy.
        breaker: Circuit-breaker policy.
        max_concurrency: Upstream requests in flight at once (the bulkhead); the live poll takes
            one, reconcile and backfill share the rest.
        live_ttl: How long one `livescores/inplay` answer is shared (the live poll interval).
        includes: The `include` parameter for fixture endpoints.
        rate_limit_fallback: Seconds to hold off after a 429 that says nothing about its reset.
        clock: Monotonic seconds; injectable so tests move time instead of waiting.
        wall: Epoch seconds, for the `retry_at` and `fetched_at` times callers see.
        prefix: The API's path below the base URL (`/v3/football`; empty when the URL has it).
        token_in: Where the token travels (see `TokenPlacement`).
        upstream: The breaker's name and the `upstream` label of its metrics.
        budget_entity: The provider entity every endpoint's calls count against (football v3:
            `Fixture`); None when each endpoint is its own entity (Cricket v2).
    """

    token: str
    timeout: float = 5.0
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    breaker: BreakerPolicy = field(default_factory=BreakerPolicy)
    max_concurrency: int = 8
    live_ttl: float = DEFAULT_LIVE_TTL
    includes: str = DEFAULT_INCLUDES
    rate_limit_fallback: float = 60.0
    clock: Clock = time.monotonic
    wall: Clock = time.time
    prefix: str = FOOTBALL_PREFIX
    token_in: TokenPlacement = "header"
    upstream: str = "football"
    budget_entity: str | None = "Fixture"

    @classmethod
    def from_settings(cls, settings: Settings) -> ProviderClientConfig:
        """Token, timeout, breaker cool-down and poll interval from the settings; the rest defaults."""
        live = live_poll_interval(settings)
        return cls(
            token=settings.provider_token.get_secret_value(),
            timeout=settings.provider_timeout.total_seconds(),
            breaker=BreakerPolicy(cooldown=settings.provider_breaker_cooldown.total_seconds()),
            live_ttl=live.total_seconds() if live is not None else DEFAULT_LIVE_TTL,
        )


def live_poll_interval(settings: Settings) -> timedelta | None:
    """How often live matches are polled: `POLL_INTERVAL_LIVE`, stretched to what
    `PROVIDER_HOURLY_BUDGET` pays for (None: polling is off)."""
    configured = settings.poll_interval_live
    if configured is None:
        return None
    return affordable_board_interval(
        configured, settings.provider_hourly_budget, settings.provider_budget_window
    )
