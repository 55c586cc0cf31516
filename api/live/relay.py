"""Changes shared between API processes through Redis pub/sub.

Correctness does not depend on it: every API process has its own LISTEN connection and outbox
reader on the same Postgres, so each one already sees every change. The relay is a second road. A
process whose LISTEN connection is down (Postgres failover, a proxy that dropped it) still hears
what the others read, and otherwise whichever road brings a change first serves the clients. Each
change is published once per process that loaded it; the hub drops a change it already delivered
(by version), so no client gets one twice.

Redis is never in the way: publishing is fire-and-forget from a bounded queue (a stalled Redis
costs dropped relay messages, not latency), and a lost subscription is retried with back-off while
the process keeps serving from its own outbox listener.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import uuid
from collections.abc import Callable

import redis.asyncio as aioredis
from pydantic import BaseModel, ValidationError
from redis.exceptions import RedisError
from sqlalchemy.engine import make_url

from api.live.changes import LiveValue
from scoreline.logging import get_logger
from scoreline.service import BackgroundService, Loop

log = get_logger(__name__)

CHANNEL_PREFIX = "scoreline:live"
PENDING_LIMIT = 1000
"""Changes waiting to be published; beyond this the newest are not relayed (clients still get them)."""
PUBLISH_TIMEOUT = 1.0
"""Seconds one PUBLISH may take before Redis is treated as unavailable."""
RETRY_CAP = 5.0
"""Seconds; the longest wait between two attempts to re-subscribe."""
_REDIS_ERRORS = (RedisError, OSError, TimeoutError)


def relay_channel(database_url: str) -> str:
    """The pub/sub channel of the API processes that share one Postgres database.

    Redis pub/sub ignores the database number: two deployments (or two test runs) on one Redis
    server would hear each other's changes on a fixed channel name. Changes belong to a Postgres
    database, so its address names the channel.
    """
    url = make_url(database_url)
    identity = f"{url.host}:{url.port}/{url.database}"
    return f"{CHANNEL_PREFIX}:{hashlib.sha256(identity.encode()).hexdigest()[:16]}"


class RelayMessage(BaseModel):
    """One change on the channel, with the process that published it (which ignores its own)."""

    origin: str
    value: LiveValue


class RedisRelay(BackgroundService):
    """Publishes what this process loaded; delivers what the others published. Owns `redis`."""

    name = "live-relay"

    def __init__(self, redis: aioredis.Redis, deliver: Callable[[LiveValue], bool], channel: str) -> None:
        super().__init__()
        self._redis = redis
        self._channel = channel
        self._deliver = deliver
        self.origin = uuid.uuid4().hex
        self._pending: asyncio.Queue[str] = asyncio.Queue(PENDING_LIMIT)
        self._failing = {"publish": False, "subscribe": False}
        self.subscribed = asyncio.Event()
        """Set while the subscription is live (tests wait for it)."""

    def loops(self) -> list[Loop]:
        return [self._publish_forever, self._subscribe_forever]

    async def stop(self) -> None:
        """Stop both loops and close the relay's Redis client (it owns it)."""
        await super().stop()
        await self._redis.aclose()

    def publish(self, value: LiveValue) -> None:
        """Queue a change for the other processes; never waits and never raises."""
        with contextlib.suppress(asyncio.QueueFull):
            self._pending.put_nowait(RelayMessage(origin=self.origin, value=value).model_dump_json())

    async def _publish_forever(self) -> None:
        while True:
            message = await self._pending.get()
            try:
                async with asyncio.timeout(PUBLISH_TIMEOUT):
                    await self._redis.publish(self._channel, message)
            except _REDIS_ERRORS as error:
                self._trouble("publish", error)
            else:
                self._recovered("publish")

    async def _subscribe_forever(self) -> None:
        delay = 0.0
        while True:
            try:
                await self._listen()
            except _REDIS_ERRORS as error:
                self._trouble("subscribe", error)
            if self.subscribed.is_set():
                delay = 0.0
            self.subscribed.clear()
            delay = min(max(delay * 2, 0.25), RETRY_CAP)
            await asyncio.sleep(delay)

    async def _listen(self) -> None:
        async with self._redis.pubsub(ignore_subscribe_messages=True) as pubsub:
            await pubsub.subscribe(self._channel)
            self.subscribed.set()
            self._recovered("subscribe")
            while True:
                message = await pubsub.get_message(timeout=RETRY_CAP)
                if message is not None:
                    self._received(message["data"])

    def _received(self, data: bytes) -> None:
        try:
            message = RelayMessage.model_validate_json(data)
        except ValidationError as error:
            log.warning("live.relay_bad_message", error=str(error)[:200])
            return
        if message.origin != self.origin:
            self._deliver(message.value)

    def _trouble(self, what: str, error: BaseException) -> None:
        # Logged once per outage, not once per change or retry.
        if not self._failing[what]:
            self._failing[what] = True
            log.warning("live.relay_unavailable", action=what, error=f"{type(error).__name__}: {error}")

    def _recovered(self, what: str) -> None:
        if self._failing[what]:
            self._failing[what] = False
            log.info("live.relay_recovered", action=what)
