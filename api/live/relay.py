"""Changes shared between API processes through Redis pub/sub (`scoreline.relay`).

Correctness does not depend on it: every API process has its own LISTEN connection and outbox
reader on the same Postgres, so each one already sees every change. The relay is a second road. A
process whose LISTEN connection is down (Postgres failover, a proxy that dropped it) still hears
what the others read, and otherwise whichever road brings a change first serves the clients. Each
change is published once per process that loaded it; the hub drops a change it already delivered
(by version), so no client gets one twice.
"""

from __future__ import annotations

from collections.abc import Callable

import redis.asyncio as aioredis

from api.live.changes import LiveValue
from scoreline.relay import Relay, database_channel

CHANNEL_PREFIX = "scoreline:live"


def relay_channel(database_url: str) -> str:
    """The channel of the API processes that share one Postgres database."""
    return database_channel(CHANNEL_PREFIX, database_url)


class RedisRelay(Relay[LiveValue]):
    """Publishes what this process loaded; hands what the others published to `deliver` (the hub)."""

    def __init__(self, redis: aioredis.Redis, deliver: Callable[[LiveValue], bool], channel: str) -> None:
        super().__init__(redis, channel, LiveValue, deliver, event="live.relay")
