"""How often one device may follow or unfollow: a fixed window per minute, counted in Redis.

Following is cheap for the device and not for us (a follow after kick-off starts a Live Activity
through the match workflow), so a runaway app or a script flipping follows is slowed down with
429 and `Retry-After` instead of reaching the workflow. The count lives in Redis: shared by every
API process, and gone within two minutes. Redis being down lets the call through (logged): it is a
brake, not a guarantee anything depends on.
"""

from __future__ import annotations

import time
import uuid

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from scoreline.logging import get_logger

log = get_logger(__name__)

WINDOW_SECONDS = 60


class FollowRateLimit:
    def __init__(self, redis: aioredis.Redis, per_minute: int) -> None:
        self._redis = redis
        self._per_minute = per_minute

    async def spend(self, device_id: uuid.UUID) -> float | None:
        """Count one call; None if it may go ahead, else the seconds until the window turns."""
        now = time.time()
        window = int(now // WINDOW_SECONDS)
        key = f"follows:{device_id}:{window}"
        try:
            async with self._redis.pipeline(transaction=True) as pipe:
                pipe.incr(key)
                pipe.expire(key, 2 * WINDOW_SECONDS)
                count, _ = await pipe.execute()
        except (RedisError, OSError) as error:
            log.warning("follow rate limit not checked", device_id=str(device_id), error=str(error))
            return None
        if int(count) <= self._per_minute:
            return None
        return (window + 1) * WINDOW_SECONDS - now
