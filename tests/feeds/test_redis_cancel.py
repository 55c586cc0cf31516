"""A cancelled Redis write ends the task that made it: `FeedBuilder.stop()` hung on one that did not.

redis-py (8.1) can swallow a cancellation that arrives while a command waits: the feed builder's
task then went on looping and `stop()` waited for it until pytest-timeout ended the CI run
(tests/feeds/test_builder.py::test_no_change_is_held_more_than_three_seconds, 1 run in 12 here).
Its Redis writes now go through `scoreline.redis_client.cancellable`.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable

import redis.asyncio as aioredis

from scoreline.redis_client import cancellable

ROUNDS = 300


async def _went_on_after_cancel(write: Callable[[int], Awaitable[object]]) -> int:
    """How many of ROUNDS looping writers were still running a second after being cancelled."""
    random.seed(7)
    survivors = 0
    for round_ in range(ROUNDS):

        async def writer(number: int = round_) -> None:
            while True:
                await write(number)

        task = asyncio.create_task(writer())
        await asyncio.sleep(random.uniform(0, 0.003))
        task.cancel()
        done, _ = await asyncio.wait({task}, timeout=1)
        if not done:
            survivors += 1
            task.cancel()
            await asyncio.wait({task}, timeout=1)
    return survivors


async def test_a_cancelled_write_always_ends_its_task(redis: aioredis.Redis) -> None:
    script = redis.register_script("return redis.call('SET', KEYS[1], ARGV[1])")

    async def guarded(number: int) -> object:
        return await cancellable(script(keys=["cancel-test"], args=[number]), 0.5)

    assert await _went_on_after_cancel(guarded) == 0
