"""`FeedBuilder`: the worker's durable consumer of the outbox that keeps partner documents current.

One builder works per database at a time: it holds a session advisory lock on its own connection
(`LOCK_KEY`), and a second worker's builder waits as a standby until that connection goes away.
The same connection LISTENs on `scoreline_changes`, so a commit wakes the builder at once; a poll
every `poll_interval` (sooner while rows wait behind an open transaction) covers a lost wake-up.

Each cycle: read the settled outbox rows after the in-memory position (`scoreline.outbox.reader`:
`(xid, id)` order, below the snapshot's xmin, so a late commit is never skipped), note the documents
they touch in the `Gatherer`, rebuild the documents that are due, then move the durable cursor in
`feed_cursor` to the furthest row whose documents are all rebuilt. A crash or restart therefore
re-reads at most the rows of the documents that were still gathering; rebuilding those is harmless.
A version records the trace ids of the rows gathered into its rebuild (`published_document.trace_ids`,
and the `feeds.published` line), so one change's trace finds the feed builds that showed it.

Every `sweep_interval` the fixture lists of yesterday, today and tomorrow (UTC), and the match
documents of fixtures on those days that have none yet, are rebuilt too: a fixture the sync adds or
reschedules changes no log, so no outbox row would ever speak for it.

Redis gets each version through the compare-and-set in `store` (only newer versions ever land). A
document is done only when both Postgres and Redis have it: a failed Redis write leaves it pending
(its rows hold the cursor) and it is rebuilt and written again, while the API reads Postgres.
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import redis.asyncio as aioredis
from redis.exceptions import RedisError
from sqlalchemy.ext.asyncio import AsyncEngine

from scoreline.db.listen import DATABASE_ERRORS, Listening, listening
from scoreline.db.urls import asyncpg_dsn
from scoreline.feeds.build import build_document
from scoreline.feeds.changes import changes_of
from scoreline.feeds.cursor import load_cursor, save_cursor
from scoreline.feeds.documents import unpublished_matches
from scoreline.feeds.gather import Gatherer
from scoreline.feeds.keys import DocKey, FixturesDoc, MatchDoc
from scoreline.feeds.published import Published
from scoreline.feeds.store import store_if_newer
from scoreline.logging import get_logger
from scoreline.metrics.instruments import metrics
from scoreline.outbox.reader import Batch, Cursor, read_after
from scoreline.outbox.writer import CHANNEL
from scoreline.redis_client import cancellable
from scoreline.service import BackgroundService, Loop, run_forever

log = get_logger(__name__)

LOCK_KEY = 0x5C0_FEED
"""The session advisory lock that makes one builder per database the leader."""
APPLICATION_NAME = "scoreline-feed-builder"
HELD_RETRY = 0.1
"""Seconds before reading again while committed rows wait behind an older open transaction."""
BUILD_RETRY = 1.0
"""Seconds before a document whose rebuild failed is tried again (its rows stay unsettled)."""
REDIS_RETRY = 1.0
"""Seconds Redis is left alone after a failed write; its documents are retried after that."""
REDIS_TIMEOUT = 0.5
"""Seconds a stalled Redis may hold up the builder, once per `REDIS_RETRY`."""
RETRY_AFTER = 2.0
"""Seconds before starting over after the connection or a cycle failed (from the durable cursor)."""
SWEEP_DAYS = (-1, 0, 1)
"""Days around today (UTC) whose fixture lists and unpublished matches each sweep rebuilds."""
REPORT_EVERY = 2.0
"""Seconds between reports of the builder's gauges."""
BUILD_ALLOWANCE = 0.5
"""Seconds of `max_hold` kept for the rebuild itself, so a change is published, not just started, in time."""

_REDIS_ERRORS = (RedisError, OSError, TimeoutError)


@dataclass(frozen=True)
class BuilderGauges:
    leading: bool
    staleness: float
    """Seconds since the oldest change no published document shows yet happened."""
    lag: float
    """Seconds behind the outbox: the newest row's age when read, or how overdue the cycle is."""


class FeedBuilder(BackgroundService):
    """Long-running service: `start()` once, `await stop()` on shutdown."""

    name = "feed-builder"

    def __init__(
        self,
        engine: AsyncEngine,
        redis: aioredis.Redis,
        database_url: str,
        *,
        consumer: str = "feeds",
        gather: timedelta = timedelta(seconds=1),
        max_hold: timedelta = timedelta(seconds=3),
        poll_interval: timedelta = timedelta(seconds=2),
        sweep_interval: timedelta | None = timedelta(seconds=60),
        batch_size: int = 500,
    ) -> None:
        super().__init__()
        self._engine = engine
        self._redis = redis
        self._dsn = asyncpg_dsn(database_url)
        self._consumer = consumer
        self._gather = gather.total_seconds()
        self._max_hold = max(max_hold.total_seconds() - BUILD_ALLOWANCE, self._gather)
        self._poll = poll_interval.total_seconds()
        self._sweep = None if sweep_interval is None else sweep_interval.total_seconds()
        self._batch_size = batch_size
        self._wake = asyncio.Event()
        self._redis_down_until = 0.0
        self.leading = asyncio.Event()
        """Set while this builder holds the lead (tests and health checks wait on it)."""
        self._gatherer: Gatherer | None = None
        self._read_lag = 0.0
        self._last_cycle = 0.0

    def loops(self) -> list[Loop]:
        """Connect, take the lead (or stand by), consume; after a failure, start over from the
        durable cursor. Documents still gathering when it stops are rebuilt after the next start."""

        async def lead_forever() -> None:
            await run_forever(
                self._lead,
                expected=DATABASE_ERRORS,
                event="feeds.builder_interrupted",
                retry_after=RETRY_AFTER,
            )

        return [lead_forever, self._report_forever]

    async def _report_forever(self) -> None:
        """The builder's gauges, every `REPORT_EVERY`, whatever its loop is doing.

        Reported by a ticker rather than at the end of each cycle, so a cycle stuck in a query
        shows as a growing lag, and a builder that lost the lead reads 0 (the new leader speaks)
        with `scoreline_feed_builder_leading` saying which one that is.
        """
        instruments = metrics()
        labels = {"consumer": self._consumer}
        while True:
            gauges = self.gauges()
            instruments.feed_builder_leading.set(1 if gauges.leading else 0)
            instruments.feed_staleness.set(gauges.staleness)
            instruments.outbox_lag.set(gauges.lag, labels)
            await asyncio.sleep(REPORT_EVERY)

    def gauges(self) -> BuilderGauges:
        """What the gauges say now: zeros without the lead (the leader, if any, speaks)."""
        gatherer = self._gatherer
        if gatherer is None or not self.leading.is_set():
            return BuilderGauges(leading=False, staleness=0.0, lag=0.0)
        now = asyncio.get_running_loop().time()
        overdue = max(0.0, now - self._last_cycle - self._poll)
        return BuilderGauges(
            leading=True, staleness=gatherer.staleness(now), lag=max(self._read_lag, overdue)
        )

    async def _lead(self) -> None:
        """Hold the lead on one connection and consume until that connection fails."""
        async with listening(
            self._dsn, CHANNEL, self._wake.set, application_name=APPLICATION_NAME, lead_lock=LOCK_KEY
        ) as connection:
            self.leading.set()
            log.info("feeds.builder_leading", consumer=self._consumer)
            try:
                await self._consume(connection)
            finally:
                self.leading.clear()
                self._gatherer = None

    async def _consume(self, connection: Listening) -> None:
        loop = asyncio.get_running_loop()
        async with self._engine.connect() as conn:
            durable = await load_cursor(conn, self._consumer)
        position = durable
        gatherer = self._gatherer = Gatherer(self._gather, self._max_hold)
        next_sweep = loop.time() if self._sweep is not None else math.inf
        while True:
            self._last_cycle = loop.time()
            if connection.gone:
                raise ConnectionError("the builder's lock connection closed")
            self._wake.clear()
            batch = await self._read(gatherer, position)
            if batch.events:
                position = batch.events[-1].cursor
            self._read_lag = batch.events[-1].age if batch.events else 0.0
            if self._sweep is not None and loop.time() >= next_sweep:
                await self._sweep_window(gatherer)
                next_sweep = loop.time() + self._sweep
            await self._build_due(gatherer)
            settled = gatherer.settled()
            if settled is not None and settled > durable:
                async with self._engine.begin() as conn:
                    await save_cursor(conn, self._consumer, settled)
                durable = settled
            if len(batch.events) == self._batch_size:
                continue
            now = loop.time()
            wake_at = [now + (HELD_RETRY if batch.held else self._poll), next_sweep]
            due = gatherer.next_due()
            if due is not None:
                wake_at.append(due)
            try:
                async with asyncio.timeout(max(min(wake_at) - now, 0.0)):
                    await self._wake.wait()
            except TimeoutError:
                # Quiet for a while: make sure the lock connection still answers.
                await connection.ping()

    async def _read(self, gatherer: Gatherer, position: Cursor) -> Batch:
        async with self._engine.connect() as conn:
            batch = await read_after(conn, position, self._batch_size)
            changes = await changes_of(conn, batch.events)
        now = asyncio.get_running_loop().time()
        for change in changes:
            for doc in change.docs:
                gatherer.change(doc, change.at, now, now - change.age, change.trace_id)
            gatherer.read(change.at)
        return batch

    async def _sweep_window(self, gatherer: Gatherer) -> None:
        today = datetime.now(UTC).date()
        days = [today + timedelta(days=offset) for offset in SWEEP_DAYS]
        async with self._engine.connect() as conn:
            missing = await unpublished_matches(conn, days[0], days[-1])
        now = asyncio.get_running_loop().time()
        docs: list[DocKey] = [FixturesDoc(day) for day in days]
        docs += [MatchDoc(fixture_id) for fixture_id in missing]
        for doc in docs:
            gatherer.change(doc, None, now, now)

    async def _build_due(self, gatherer: Gatherer) -> None:
        """Rebuild each due document; it counts as done only once Postgres and Redis both have it.

        A failure (of either) leaves the document pending, so its outbox rows keep holding the
        cursor and a restart rebuilds it: Redis can never stay behind Postgres for good.
        """
        loop = asyncio.get_running_loop()
        instruments = metrics()
        for doc in gatherer.due(loop.time()):
            labels = {"doc_kind": doc.kind}
            started = loop.time()
            traces = gatherer.traces(doc)
            try:
                result = await build_document(self._engine, doc, trace_ids=traces)
            except Exception as error:  # noqa: BLE001 - one bad document must not stop the others
                log.warning("feeds.build_failed", doc=doc.key, error=_describe(error), retry_in=BUILD_RETRY)
                instruments.feed_builds.add(1, {**labels, "outcome": "failed"})
                gatherer.retry(doc, loop.time() + BUILD_RETRY)
                continue
            instruments.feed_build_duration.record(timedelta(seconds=loop.time() - started), labels)
            if result is not None:
                published, changed = result
                instruments.feed_builds.add(1, {**labels, "outcome": "published" if changed else "unchanged"})
                if changed:
                    log.info(
                        "feeds.published",
                        doc=published.doc_key,
                        version=published.version,
                        trace_ids=list(traces),
                    )
                if not await self._to_redis(published):
                    gatherer.retry(doc, max(self._redis_down_until, loop.time()))
                    continue
            gatherer.built(doc)

    async def _to_redis(self, published: Published) -> bool:
        """Store the version in Redis (if newer); False if Redis failed, or failed a moment ago.

        After a failure Redis is left alone for `REDIS_RETRY`, so an unreachable or stalled Redis
        costs one timeout per retry period, not one per document.
        """
        loop = asyncio.get_running_loop()
        if loop.time() < self._redis_down_until:
            return False
        try:
            await cancellable(store_if_newer(self._redis, published), REDIS_TIMEOUT)
        except _REDIS_ERRORS as error:
            self._redis_down_until = loop.time() + REDIS_RETRY
            log.warning(
                "feeds.redis_write_failed",
                doc=published.doc_key,
                error=_describe(error),
                retry_in=REDIS_RETRY,
            )
            return False
        return True


def _describe(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"
