"""A partner key with a broadcast delay reads feed documents that far behind, never early."""

from __future__ import annotations

import asyncio
import time

import httpx
import redis.asyncio as aioredis
from sqlalchemy.ext.asyncio import AsyncEngine

from scoreline.feeds.build import build_document
from scoreline.feeds.keys import MatchDoc
from scoreline.feeds.partner_delay import set_partner_delay
from scoreline.feeds.store import store_if_newer
from scoreline.settings import Settings
from tests.feeds.changes import MATCH
from tests.feeds.conftest import Keys, serving
from tests.readmodel.rows import MatchLog

MATCH_DOC = f"/v1/feeds/match/{MATCH}"
DELAY = 2


async def _publish(engine: AsyncEngine, redis: aioredis.Redis) -> int:
    result = await build_document(engine, MatchDoc(MATCH))
    assert result is not None
    await store_if_newer(redis, result[0])
    return result[0].version


async def _version(api: httpx.AsyncClient, key: str) -> int | None:
    answer = await api.get(MATCH_DOC, headers={"X-Api-Key": key, "Accept-Encoding": "identity"})
    return answer.json()["version"] if answer.status_code == 200 else None


async def test_a_delayed_key_reads_each_version_no_sooner_than_its_delay_after_it(
    engine: AsyncEngine, redis: aioredis.Redis, keys: Keys, feed_settings: Settings
) -> None:
    """Documents were served at their latest whatever the key's delay: a partner sold a delayed
    tier (or staying behind a TV picture) saw every goal as soon as everyone else."""
    log = await MatchLog.create(engine, MATCH)
    await set_partner_delay(engine, "premier-partner", DELAY)
    async with serving(feed_settings) as api:  # started after the delay: it loads the key with it
        before: dict[int, float] = {}
        before[await _publish(engine, redis)] = time.monotonic()
        await log.board("live_first_half", 0, 1)
        started = time.monotonic()
        second = await _publish(engine, redis)
        before[second] = started
        seen: list[int] = []
        while not seen or seen[-1] != second:
            version = await _version(api, keys.premier)
            if version is not None:
                # Each version is read no sooner than the delay after it was saved (which was
                # after the monotonic reading taken before its publish).
                assert time.monotonic() - before[version] >= DELAY, (version, seen)
                seen.append(version)
            assert time.monotonic() - started < DELAY + 15, f"the delayed key never got {second}: {seen}"
            await asyncio.sleep(0.05)
        assert await _version(api, keys.other) is None  # grants still hold for everyone
