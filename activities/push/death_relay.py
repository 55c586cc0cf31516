"""Tells the other workers, through Redis, of every token APNs has answered dead here.

A 410 reaches Postgres only with its batch's write, seconds later under a throttling burst. A
push on another worker that read its target before then, a match's other lane or another match the
phone follows, went to the dead token anyway (the soak of 2026-12-02, seed 15). Heard at once,
the death stops it right before its request (`Sender.deliver` asks the worker's `DeadTokens`).

Redis is only the fast road: with it down, a death reaches the other workers through Postgres,
as before, and nothing else waits on it.
"""

from __future__ import annotations

import redis.asyncio as aioredis

from activities.push.dead_tokens import DeadTokens, TokenDeath
from scoreline.relay import Relay, database_channel

CHANNEL_PREFIX = "scoreline:apns-deaths"
CONNECTIONS = 2
"""The relay's own Redis client: the subscription holds one connection for good, PUBLISH the other."""


def death_relay(redis_url: str, database_url: str, dead: DeadTokens) -> Relay[TokenDeath]:
    """A relay (not started) that announces `dead`'s deaths and hands it the others' deaths."""
    relay = Relay(
        aioredis.Redis.from_url(redis_url, max_connections=CONNECTIONS),
        database_channel(CHANNEL_PREFIX, database_url),
        TokenDeath,
        dead.heard,
        event="push.death_relay",
    )
    dead.announce = relay.publish
    return relay
