"""One live-board request per poll interval for the whole deployment, however many workers run.

Each worker coalesces its own watches onto one board per interval (`coalescing`); this shares that
one board between the workers. The first worker to ask after the interval is over takes a Redis
lease (one interval long), fetches the board and leaves its body in Redis with when it was
asked for and when it came; the others, finding the lease taken, wait for that body and decode it. A
board younger than half an interval is taken as it is, so a worker whose own interval runs a
little behind the fetcher's uses the same answer, and one further behind waits for the next
answer rather than serve its watches a board most of an interval old.

The fetcher's failure is published too, so the others fail the same poll at once rather than wait
for an answer that will not come. A fetcher that dies holding the lease holds it for one interval
at most; whoever asks next takes it over. Redis is never the truth: when it fails, a worker
fetches the board itself (the provider bill then grows with the workers until Redis is back).
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import redis.asyncio as aioredis

from activities.provider.envelope import Envelope, parse_envelope
from activities.provider.errors import ProviderUnavailable
from scoreline.logging import get_logger
from scoreline.redis_client import cancellable

log = get_logger(__name__)

WAIT_STEP = 0.05
"""Seconds between looks for the fetcher's answer."""
REDIS_TIMEOUT = 2.0
"""A Redis call slower than this counts as Redis being away."""
INLINE_DECODE_MAX = 512 * 1024
"""Bodies larger than this are decoded off the event loop (as the transport does)."""

_TAKE_LEASE = """
local holder = redis.call('GET', KEYS[1])
if holder == false or holder == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0
"""
"""Take the lease if it is free or already ours: the process's own coalescing keeps its fetches an
interval apart, and a fetcher that asks a moment before its lease lapses keeps its turn."""


@dataclass(frozen=True)
class _Stamp:
    """When the last fetch was sent and answered (wall seconds), and whether it succeeded.

    Its age counts from the sending, as the lease does: a board that took most of an interval to
    arrive is due again one interval after it was asked for, not after it came.
    """

    started: float
    arrived: float
    ok: bool

    def encode(self) -> str:
        return f"{self.started:.6f}:{self.arrived:.6f}:{'ok' if self.ok else 'failed'}"

    @classmethod
    def decode(cls, text: str) -> _Stamp | None:
        started, arrived, status = [*text.split(":"), "", "", ""][:3]
        try:
            return cls(float(started), float(arrived), ok=status == "ok")
        except ValueError:
            return None


@dataclass(frozen=True)
class SharedAnswer:
    """A board and the wall time its HTTP answer arrived (the fetcher's, if another worker's)."""

    envelope: Envelope
    fetched_at: float


class SharedBoard:
    """The deployment's one board per interval for one endpoint of one upstream.

    Args:
        redis: The deployment's Redis.
        name: Names the keys (`football:livescores/inplay`).
        interval: The poll interval, seconds: one fetch per interval per deployment.
        wait_max: How long a worker waits for another's fetch before giving up on this interval.
        wall: Epoch seconds.
    """

    def __init__(
        self,
        redis: aioredis.Redis,
        name: str,
        interval: float,
        wait_max: float,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self._redis = redis
        self._interval = interval
        self._wait_max = wait_max
        self._wall = wall
        self._stamp_key = f"provider:board:{name}:stamp"
        self._body_key = f"provider:board:{name}:body"
        self._lease_key = f"provider:board:{name}:lease"
        self._holder = uuid.uuid4().hex
        self._take_lease = redis.register_script(_TAKE_LEASE)
        self._redis_failing = False

    async def get(self, endpoint: str, fetch: Callable[[], Awaitable[Envelope]]) -> SharedAnswer:
        """The board of this interval: someone's fresh one, or this worker's own fetch."""
        try:
            return await self._shared(endpoint, fetch)
        except (aioredis.RedisError, TimeoutError) as error:
            if not self._redis_failing:
                self._redis_failing = True
                log.warning("redis unavailable for the shared live board; fetching it here", error=str(error))
            return await self._fetch_alone(fetch)

    async def _fetch_alone(self, fetch: Callable[[], Awaitable[Envelope]]) -> SharedAnswer:
        envelope = await fetch()
        return SharedAnswer(envelope, self._wall())

    async def _shared(self, endpoint: str, fetch: Callable[[], Awaitable[Envelope]]) -> SharedAnswer:
        deadline = time.monotonic() + self._wait_max
        # An answer asked for since half an interval before this call is this interval's: a young
        # one is taken as it is, and one that took long to come is still awaited, not fetched anew.
        since = self._wall() - self._interval / 2
        step = min(WAIT_STEP, self._interval / 10)
        while True:
            stamp = await self._stamp()
            if stamp is not None and stamp.started >= since:
                if not stamp.ok:
                    raise ProviderUnavailable(
                        endpoint, "retries_exhausted", detail="the worker fetching the shared board failed"
                    )
                found = await self._read(endpoint, stamp)
                if found is not None:
                    return found
            taken = await cancellable(
                self._take_lease(keys=[self._lease_key], args=[self._holder, self._lease_ms()]), REDIS_TIMEOUT
            )
            if taken:
                return await self._fetch_and_publish(fetch)
            if time.monotonic() >= deadline:
                raise ProviderUnavailable(
                    endpoint, "retries_exhausted", detail="no worker refreshed the shared board in time"
                )
            await asyncio.sleep(step)

    async def _fetch_and_publish(self, fetch: Callable[[], Awaitable[Envelope]]) -> SharedAnswer:
        started = self._wall()
        try:
            envelope = await fetch()
        except Exception:
            await self._publish(_Stamp(started, self._wall(), ok=False), None)
            raise
        stamp = _Stamp(started, self._wall(), ok=True)
        await self._publish(stamp, envelope)
        if self._redis_failing:
            self._redis_failing = False
            log.info("shared live board back in redis")
        return SharedAnswer(envelope, stamp.arrived)

    async def _publish(self, stamp: _Stamp, envelope: Envelope | None) -> None:
        """Leave the answer (or the failure) for the other workers: body first, then its stamp."""
        keep = self._lease_ms() * 4
        try:
            async with self._redis.pipeline(transaction=True) as pipe:
                if envelope is not None and envelope.body is not None:
                    pipe.set(self._body_key, envelope.body, px=keep)
                pipe.set(self._stamp_key, stamp.encode(), px=keep)
                await cancellable(pipe.execute(), REDIS_TIMEOUT)
        except (aioredis.RedisError, TimeoutError) as error:
            log.warning("could not share the live board", error=str(error))

    async def _stamp(self) -> _Stamp | None:
        raw = await cancellable(self._redis.get(self._stamp_key), REDIS_TIMEOUT)
        if raw is None:
            return None
        return _Stamp.decode(raw.decode() if isinstance(raw, bytes) else str(raw))

    async def _read(self, endpoint: str, stamp: _Stamp) -> SharedAnswer | None:
        body = await cancellable(self._redis.get(self._body_key), REDIS_TIMEOUT)
        if body is None:
            return None
        raw = body if isinstance(body, bytes) else str(body).encode()
        try:
            decoded = (
                await asyncio.to_thread(json.loads, raw) if len(raw) > INLINE_DECODE_MAX else json.loads(raw)
            )
        except ValueError:
            return None
        return SharedAnswer(parse_envelope(endpoint, decoded), stamp.arrived)

    def _lease_ms(self) -> int:
        return max(1, int(self._interval * 1000))
