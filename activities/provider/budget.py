"""Our own hourly request budget per provider entity, shared by every worker of the deployment.

SportMonks counts calls per entity per hour (football: every fixture and livescore endpoint is the
`Fixture` entity; Cricket v2 counts each endpoint) and answers 429 once a plan's 2,000-5,000 are
spent. Scoreline spends less than that on purpose, and in order. The live board polls no faster
than `BOARD_SHARE` of the budget pays for (`affordable_board_interval`: a plan smaller than the
configured poll rate stretches the cadence instead of starving everything else). Urgent
per-fixture calls (a match that left the board and needs its confirming fetch, a watch's first
look) come ahead of the board, and reconciles last. A reconcile refused here is tried at its next
turn, so when the budget is short reconcile intervals stretch instead of the provider throttling
everything.

The budget is a token bucket per entity in Redis, refilled continuously at `(calls - capacity)
/ window` calls a second up to `capacity` (a minute's worth of an hourly window), so no window,
however it falls, holds more than `calls` calls. Each priority has a floor the bucket must stay
above: reconciles stop at half the capacity, the board at a quarter, urgent calls at nothing, so a
match's confirming call always finds its token even when the board (or its retries) spends all it
may. One Lua script reads, refills and takes
atomically, on Redis's own clock, so workers need not agree on the time. Redis is the hot cache,
never the truth: while it is unreachable each process keeps the same bucket in memory (the
deployment may then overspend by its number of workers, which the provider's 429 handling and
`remaining` gate still guard).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import timedelta
from typing import Literal

import redis.asyncio as aioredis

from scoreline.logging import get_logger
from scoreline.metrics.instruments import metrics
from scoreline.redis_client import cancellable

log = get_logger(__name__)

Priority = Literal["board", "urgent", "deferrable"]
"""Who is asking: the live board, a per-fixture call that should not wait, a reconcile."""

REDIS_TIMEOUT = 1.0
"""A budget answer slower than this counts as Redis being away: every provider call waits on it."""

FLOORS: dict[Priority, float] = {"urgent": 0.0, "board": 0.25, "deferrable": 0.5}
"""The share of the bucket's capacity each priority must leave behind."""

BOARD_SHARE = 0.75
"""The share of the budget the live board may spend; the rest pays for the per-fixture calls (the
fixture sync, confirming fetches, reconciles) that no board poll can make."""


def affordable_board_interval(configured: timedelta, calls: int, window: timedelta) -> timedelta:
    """The live board's poll interval: `configured` when `calls` per `window` pay for it within
    `BOARD_SHARE`, else stretched to what they pay for. The stretch is what keeps every match
    reaching its end on a plan smaller than the poll rate: later, never starved."""
    return max(configured, window / (calls * BOARD_SHARE))


_TAKE = """
local now = redis.call('TIME')
local t = tonumber(now[1]) + tonumber(now[2]) / 1e6
local rate, capacity, floor = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local held = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens, at = tonumber(held[1]), tonumber(held[2])
if tokens == nil or at == nil then tokens, at = capacity, t end
tokens = math.min(capacity, tokens + math.max(0, t - at) * rate)
local taken = 0
if tokens >= floor + 1 then
  tokens = tokens - 1
  taken = 1
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(t))
redis.call('EXPIRE', KEYS[1], 7200)
return taken
"""


@dataclass(frozen=True)
class BucketShape:
    """The bucket a budget of `calls` per `window` seconds makes: `capacity` calls at most,
    refilled at `rate` calls a second."""

    capacity: float
    rate: float

    @classmethod
    def of(cls, calls: int, window: float = 3600.0) -> BucketShape:
        capacity = max(2.0, calls / 60)
        return cls(capacity=capacity, rate=max(0.0, calls - capacity) / window)

    def floor(self, priority: Priority) -> float:
        return FLOORS[priority] * self.capacity


class _LocalBucket:
    """The same bucket in this process's memory, for while Redis is away."""

    def __init__(self, shape: BucketShape) -> None:
        self._shape = shape
        self._tokens = shape.capacity
        self._at = time.monotonic()

    def take(self, priority: Priority) -> bool:
        now = time.monotonic()
        self._tokens = min(self._shape.capacity, self._tokens + (now - self._at) * self._shape.rate)
        self._at = now
        if self._tokens >= self._shape.floor(priority) + 1:
            self._tokens -= 1
            return True
        return False


class RequestBudget:
    """Spends `calls` per entity per `window` at most, a match's own fetches first.

    Args:
        redis: The deployment's Redis (None: this process keeps the buckets itself).
        upstream: Names the buckets (`football`, `cricket`), so two APIs never share one.
        calls: Calls per entity per window (`PROVIDER_HOURLY_BUDGET`).
        window: The provider's counting window, seconds (an hour; `PROVIDER_BUDGET_WINDOW`).
    """

    def __init__(
        self, redis: aioredis.Redis | None, upstream: str, calls: int, window: float = 3600.0
    ) -> None:
        self._redis = redis
        self._upstream = upstream
        self._shape = BucketShape.of(calls, window)
        self._local: dict[str, _LocalBucket] = {}
        self._script = redis.register_script(_TAKE) if redis is not None else None
        self._redis_down_since: float | None = None

    @property
    def shape(self) -> BucketShape:
        return self._shape

    async def take(self, entity: str, priority: Priority) -> bool:
        """Spend one call of `entity` at `priority`; False when the budget cannot spare it."""
        taken = await self._take(entity, priority)
        if not taken:
            metrics().budget_refused.add(1, {"entity": entity, "priority": priority})
        return taken

    async def _take(self, entity: str, priority: Priority) -> bool:
        if self._script is not None:
            try:
                taken = await cancellable(
                    self._script(
                        keys=[f"provider:budget:{self._upstream}:{entity}"],
                        args=[self._shape.rate, self._shape.capacity, self._shape.floor(priority)],
                    ),
                    REDIS_TIMEOUT,
                )
                self._redis_down_since = None
                return bool(taken)
            except (aioredis.RedisError, TimeoutError) as error:
                if self._redis_down_since is None:
                    self._redis_down_since = time.monotonic()
                    log.warning(
                        "redis unavailable for the provider budget; counting in this process",
                        error=str(error),
                    )
        bucket = self._local.setdefault(entity, _LocalBucket(self._shape))
        return bucket.take(priority)
