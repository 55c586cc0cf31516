"""The one way a Scoreline process opens its shared Redis client."""

from __future__ import annotations

import redis.asyncio as aioredis

MAX_CONNECTIONS = 512
"""Enough for a thousand live streams or watches sharing one client without erroring."""

WAIT_FOR_CONNECTION_SECONDS = 2.0


def shared_redis(url: str) -> aioredis.Redis:
    """A client whose pool makes a burst wait briefly for a connection instead of failing.

    redis-py's default pool raises "Too many connections" past 100; a blocking pool queues the
    caller for up to `WAIT_FOR_CONNECTION_SECONDS`, and every caller already treats a Redis error
    as "read Postgres instead".
    """
    pool = aioredis.BlockingConnectionPool.from_url(
        url, max_connections=MAX_CONNECTIONS, timeout=WAIT_FOR_CONNECTION_SECONDS
    )
    return aioredis.Redis.from_pool(pool)
