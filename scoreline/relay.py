"""Values one process learns, shared with the processes beside it through Redis pub/sub.

A relay is always a second road, never the truth: the API processes each read every change from
Postgres themselves (`api.live.relay`). So Redis
is never in the way: publishing is fire-and-forget from a bounded queue (a stalled Redis costs
dropped messages, not latency), and a lost subscription is retried with back-off while the
process goes on without it.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import uuid
from collections.abc import Callable
from typing import Generic, TypeVar

import redis.asyncio as aioredis
from pydantic import BaseModel, ValidationError
from redis.exceptions import RedisError
from sqlalchemy.engine import make_url

from scoreline.logging import get_logger
from scoreline.service import BackgroundService, Loop

log = get_logger(__name__)

PENDING_LIMIT = 1000
"""Values waiting to be published; beyond this the newest are not relayed."""
PUBLISH_TIMEOUT = 1.0
"""Seconds one PUBLISH may take before Redis is treated as unavailable."""
RETRY_CAP = 5.0
"""Seconds; the longest wait between two attempts to re-subscribe."""
_REDIS_ERRORS = (RedisError, OSError, TimeoutError)

V = TypeVar("V", bound=BaseModel)


def database_channel(prefix: str, database_url: str) -> str:
    """The pub/sub channel `prefix` of the processes that share one Postgres database.

    Redis pub/sub ignores the database number: two deployments (or two test runs) on one Redis
    server would hear each other on a fixed channel name. What is relayed belongs to a Postgres
    database, so its address names the channel.
    """
    url = make_url(database_url)
    identity = f"{url.host}:{url.port}/{url.database}"
    return f"{prefix}:{hashlib.sha256(identity.encode()).hexdigest()[:16]}"


class RelayMessage(BaseModel, Generic[V]):
    """One value on the channel, with the process that published it (which ignores its own)."""

    origin: str
    value: V


class Relay(BackgroundService, Generic[V]):
    """Publishes what this process learnt; delivers what the others published. Owns `redis`: the
    subscription holds one of its connections for good, so it gets a small client of its own.

    `event` prefixes its log lines (`<event>_unavailable`, `<event>_recovered`, `<event>_bad_message`).
    """

    def __init__(
        self,
        redis: aioredis.Redis,
        channel: str,
        value_type: type[V],
        deliver: Callable[[V], object],
        *,
        event: str,
    ) -> None:
        super().__init__()
        self.name = event
        self._redis = redis
        self._channel = channel
        # Parametrised at run time, so pydantic validates the value as `value_type`; mypy only
        # takes a literal type in brackets.
        self._message_type: type[RelayMessage[V]] = RelayMessage[value_type]  # type: ignore[valid-type]
        self._deliver = deliver
        self._event = event
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

    def publish(self, value: V) -> None:
        """Queue a value for the other processes; never waits and never raises."""
        with contextlib.suppress(asyncio.QueueFull):
            self._pending.put_nowait(self._message_type(origin=self.origin, value=value).model_dump_json())

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
            message = self._message_type.model_validate_json(data)
        except ValidationError as error:
            log.warning(f"{self._event}_bad_message", error=str(error)[:200])
            return
        if message.origin != self.origin:
            self._deliver(message.value)

    def _trouble(self, what: str, error: BaseException) -> None:
        # Logged once per outage, not once per value or retry.
        if not self._failing[what]:
            self._failing[what] = True
            log.warning(f"{self._event}_unavailable", action=what, error=f"{type(error).__name__}: {error}")

    def _recovered(self, what: str) -> None:
        if self._failing[what]:
            self._failing[what] = False
            log.info(f"{self._event}_recovered", action=what)
