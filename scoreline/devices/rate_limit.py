"""How often one device may follow or unfollow, and one client address may register a device: a
fixed window per minute, counted in Redis.

Following is cheap for the device and not for us (a follow while a match plays fills a mailbox
the drainers send a Live Activity start from), and a registration is a new device any match's
pushes can be aimed at, so a runaway app or a script is slowed down with 429 and `Retry-After`
instead of reaching the mailboxes and the drainers. The count lives in Redis: shared by every API
process, and gone within two minutes. Redis being down lets the call through (logged): it is a
brake, not a guarantee anything depends on.
"""

from __future__ import annotations

import ipaddress
import time

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from scoreline.logging import get_logger

log = get_logger(__name__)

WINDOW_SECONDS = 60


class MinuteRateLimit:
    """At most `per_minute` calls per subject of one `scope` (e.g. `follows` per device id)."""

    def __init__(self, redis: aioredis.Redis, scope: str, per_minute: int) -> None:
        self._redis = redis
        self._scope = scope
        self._per_minute = per_minute

    async def spend(self, subject: str) -> float | None:
        """Count one call; None if it may go ahead, else the seconds until the window turns."""
        now = time.time()
        window = int(now // WINDOW_SECONDS)
        key = f"{self._scope}:{subject}:{window}"
        try:
            async with self._redis.pipeline(transaction=True) as pipe:
                pipe.incr(key)
                pipe.expire(key, 2 * WINDOW_SECONDS)
                count, _ = await pipe.execute()
        except (RedisError, OSError) as error:
            log.warning("rate limit not checked", scope=self._scope, subject=subject, error=str(error))
            return None
        if int(count) <= self._per_minute:
            return None
        return (window + 1) * WINDOW_SECONDS - now


IPV6_PREFIX = 64
"""An IPv6 client counts as its /64: one host is routinely handed a whole /64 and can pick any
address in it, so counting single addresses would be no limit at all."""


def address_subject(host: str | None) -> str:
    """What a per-address limit counts a client as: its IPv4 address, its IPv6 /64, or `unknown`
    when the server names no peer (every such client then shares one count)."""
    if not host:
        return "unknown"
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, IPV6_PREFIX), strict=False))
    return str(address)
