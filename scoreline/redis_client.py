"""The one way a Scoreline process opens its shared Redis client."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

import redis.asyncio as aioredis

T = TypeVar("T")

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


async def cancellable(call: Awaitable[T], timeout: float) -> T:
    """Await a redis-py call at most `timeout` seconds, always giving up when cancelled.

    redis-py (8.1) can swallow the cancellation of a task waiting on a command (measured: 87 of
    400 tasks cancelled during an EVALSHA go on running; tests/feeds/test_redis_cancel.py), and a
    stop that cancels such a task, `FeedBuilder.stop()`'s, would wait for ever. The call runs as a
    task of its own and this one waits with `asyncio.wait`, whose own waiter takes the
    cancellation, so the caller always sees it; the call is cancelled too, and is left to finish
    as it will.

    Raises:
        TimeoutError: no answer within `timeout` (the call is cancelled).
    """
    task = asyncio.ensure_future(call)
    try:
        done, _ = await asyncio.wait({task}, timeout=timeout)
    except asyncio.CancelledError:
        task.cancel()
        raise
    if not done:
        task.cancel()
        raise TimeoutError(f"no answer from Redis within {timeout:g}s")
    return task.result()
