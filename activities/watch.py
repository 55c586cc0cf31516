"""The match's side effects: the long-running watch, and one-off full fetches (backfill, replay).

The watch polls the shared live board every poll interval, ingests what changed, heartbeats its
version, and returns to the workflow only on a material change (state, score, a key moment), so
polls never touch workflow history. A full re-fetch of the fixture every reconcile interval goes
through the same idempotent ingest, so a missed poll loses nothing.

Football fixtures are polled through the Football v3 client, cricket ones (their ids say which,
`domain.cricket.board.cricket_provider_id`) through the Cricket v2 client; both share the same
board-then-fixture shape. A cricket match is material on every ball (its followers see each one);
overnight at stumps it is polled at the stumps interval, not every few seconds all night.

What a poll costs follows what changed, not the matches watched (500 on one worker):
- the board is one request per interval for the deployment, and a fixture unchanged on it is the
  very snapshot the watch stored last poll, which it recognises without a Redis or Postgres trip;
- a fixture off the board (before kick-off, settling after full time) is fetched at its reconcile
  turns, not every poll, unless it was in play (it just left the board: now, in a short batch);
- a reconcile of a match on the board reads its board snapshot (the same entity and includes);
  other reconcile turns fall on the same slots for every watch of the process (multiples of the
  reconcile interval), so their fetches share `fixtures/multi` requests of 50; when the hourly
  budget is short a turn is skipped and the next one tried, which stretches the interval.
"""

from __future__ import annotations

import asyncio
import math
import time
from dataclasses import dataclass
from datetime import timedelta
from typing import Literal, Protocol

import redis.asyncio as aioredis
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio import activity

from activities.ingest.plan import snapshot_digest
from activities.ingest.store import IngestStore
from activities.provider.client import SportMonksClient
from activities.provider.errors import ProviderBudgetSpent, ProviderError
from activities.watched import WatchedMatches
from domain.cricket.board import cricket_provider_id
from domain.match_run import FetchInput, Source, WatchInput, WatchResult
from domain.progress import IngestSummary
from domain.snapshot import Snapshot
from domain.states import OVERNIGHT_STATES, PLAYING_STATES
from scoreline.logging import get_logger
from scoreline.metrics.instruments import metrics
from scoreline.readmodel.cache import rebuild as rebuild_cache
from scoreline.readmodel.cache import refresh as refresh_cache
from scoreline.tracing import bound_trace, current_trace_id

log = get_logger(__name__)

DIGEST_TTL_SECONDS = 6 * 3600


@dataclass(frozen=True)
class PollingConfig:
    """The intervals the watch runs at; None turns polling off (the kill switch)."""

    live: timedelta | None
    idle: timedelta | None
    reconcile: timedelta | None
    stumps: timedelta | None = None
    """Overnight in a multi-day match (None: the idle interval)."""


class FixtureFeed(Protocol):
    """What a watch needs of a provider client (football's and cricket's both have it)."""

    def is_whole(self, snapshot: Snapshot) -> bool:
        """The board's snapshot carries all a per-fixture fetch would, so a reconcile may read it."""
        ...

    async def live_snapshot(self, fixture_id: int) -> Snapshot | None: ...

    async def fixture(
        self, fixture_id: int, *, within: float = ..., deferrable: bool = False
    ) -> Snapshot | None: ...


class WatchActivities:
    def __init__(
        self,
        client: SportMonksClient,
        store: IngestStore,
        engine: AsyncEngine,
        redis: aioredis.Redis,
        polling: PollingConfig,
        watched: WatchedMatches | None = None,
        cricket: FixtureFeed | None = None,
    ) -> None:
        self._client = client
        self._cricket = cricket
        self._store = store
        self._engine = engine
        self._redis = redis
        self._polling = polling
        # The worker passes its reporting registry; one made here (tests) only keeps the books.
        self.watched = watched or WatchedMatches()

    def client_for(self, fixture_id: int) -> FixtureFeed:
        """The provider client that knows the fixture: Cricket v2 for a cricket id, else Football v3."""
        if cricket_provider_id(fixture_id) is None:
            return self._client
        if self._cricket is None:
            raise ProviderUnconfigured(
                f"fixture {fixture_id} is a cricket fixture and this worker has no cricket client"
            )
        return self._cricket

    @activity.defn(name="watch_match")
    async def watch_match(self, watch: WatchInput) -> WatchResult:
        """Poll and ingest until something material happens (or `settle_seconds` pass quietly)."""
        return await _Watch(self, self.client_for(watch.fixture_id), self._polling, watch).run()

    @activity.defn(name="fetch_and_ingest")
    async def fetch_and_ingest(self, fetch: FetchInput) -> IngestSummary | None:
        """Fetch the whole fixture once and ingest it (post-match backfill, replay, recheck)."""
        snapshot = await self.client_for(fetch.fixture_id).fixture(fetch.fixture_id)
        if snapshot is None:
            log.warning("fixture not found at the provider", fixture_id=fetch.fixture_id, source=fetch.source)
            return None
        summary = await self.ingest(snapshot, fetch.source, force=True)
        if fetch.rebuild:
            await rebuild_cache(self._engine, self._redis, fetch.fixture_id)
        return summary

    async def ingest(
        self, snapshot: Snapshot, source: Source, *, force: bool = False, since: int | None = None
    ) -> IngestSummary | None:
        """Ingest unless the shared digest says this exact snapshot was already stored.

        `since` is the version the workflow knows (see `IngestStore.ingest`). The digest is kept
        with the version it was stored at: a snapshot someone else already stored (a replay, an
        attempt Temporal gave up on that still ran) while the log moved past `since` is reported
        from the log instead of skipped. Every commit refreshes the Redis read copies
        (write-if-newer, so a late one is harmless).
        """
        digest = snapshot_digest(snapshot)
        key = f"ingest:digest:{snapshot.fixture_id}"
        if not force:
            cached = await self._cached_digest(key)
            if cached is not None and cached[0] == digest:
                if since is not None and cached[1] > since:
                    return await self._store.catch_up(snapshot.fixture_id, since)
                return None
        summary = await self._store.ingest(snapshot, source, current_trace_id(), since=since)
        if summary.pending_misses == 0 and not summary.desk_owned:
            # Only a settled state may be skipped next time: a pending miss needs the next listing.
            await self._remember_digest(key, digest, summary.version)
        await refresh_cache(self._engine, self._redis, snapshot.fixture_id)
        return summary

    async def catch_up(self, fixture_id: int, since: int) -> IngestSummary | None:
        """The log beyond `since`, if it moved without the workflow hearing of it."""
        return await self._store.catch_up(fixture_id, since)

    async def _cached_digest(self, key: str) -> tuple[str, int] | None:
        """The digest of the last stored snapshot and the version it was stored at."""
        try:
            value = await self._redis.get(key)
        except aioredis.RedisError as error:
            log.warning("redis unavailable for the ingest fast path", error=str(error))
            return None
        text = value.decode() if isinstance(value, bytes) else value
        digest, _, version = (text or "").partition("@")
        return (digest, int(version)) if digest and version.isdigit() else None

    async def _remember_digest(self, key: str, digest: str, version: int) -> None:
        try:
            await self._redis.set(key, f"{digest}@{version}", ex=DIGEST_TTL_SECONDS)
        except aioredis.RedisError as error:
            log.warning("redis unavailable for the ingest fast path", error=str(error))


class ProviderUnconfigured(RuntimeError):
    """A fixture of a sport whose provider client this worker was not given."""


PollOutcome = Literal["ok", "failed", "off_board", "deferred"]
"""A poll's label: answered; the provider failed; off the board with no turn to fetch it; given
way to the hourly budget (tried again next turn)."""


@dataclass(frozen=True)
class _Fetched:
    """What one poll got: a snapshot (None when not found or nothing was asked) and whence."""

    snapshot: Snapshot | None
    source: Source
    outcome: PollOutcome = "ok"
    from_board: bool = False
    """It is the live board's own snapshot (the same object while the fixture is unchanged)."""


def _next_slot(now: float, every: timedelta | None) -> float:
    """The next multiple of `every` on the monotonic clock: all watches of a process share them,
    so their reconciles fall together and share `fixtures/multi` requests."""
    if every is None:
        return math.inf
    seconds = every.total_seconds()
    return (math.floor(now / seconds) + 1) * seconds


class _Watch:
    """One attempt of the watch activity: its loop state, resumed from the heartbeat on retry."""

    def __init__(
        self, owner: WatchActivities, client: FixtureFeed, polling: PollingConfig, watch: WatchInput
    ) -> None:
        self.owner = owner
        self.client = client
        self.polling = polling
        self.watch = watch
        self.known = watch.progress
        details = activity.info().heartbeat_details
        # The heartbeat is a hint (it lags); Postgres decides what is new.
        self.resumed_from = int(details[0]) if details else None
        self.started = time.monotonic()
        # A watch restarted after a material change saw the fixture a moment ago: its first full
        # fetch is one reconcile interval away. One resumed after a crash, or the very first one of
        # a match, may have missed something: it fetches the whole fixture at once.
        self.fresh = self.resumed_from is None and activity.info().attempt == 1 and watch.progress.version > 0
        self.next_reconcile = _next_slot(self.started, polling.reconcile) if self.fresh else self.started
        self.last_poll: float | None = None
        self.stored: Snapshot | None = None
        """The last snapshot the log is known to hold as it is: the board's same object next poll
        means nothing changed, found without asking Redis or Postgres."""

    async def run(self) -> WatchResult:
        try:
            return await self._run()
        finally:
            self.owner.watched.ended(self.watch.fixture_id)

    async def _run(self) -> WatchResult:
        log.info(
            "watch started",
            fixture_id=self.watch.fixture_id,
            version=self.known.version,
            resumed_from=self.resumed_from,
            attempt=activity.info().attempt,
        )
        # A fresh watch's first poll waits one interval: polled at once it would read the very live
        # board the last watch just ingested (it is shared for an interval), and a pending miss
        # would count that same response as its second listing.
        wait_first = self.fresh
        caught_up = await self._catch_up()
        if caught_up is not None:
            return caught_up
        while True:
            interval = self._interval()
            if interval is None:
                log.info("polling is off; handing back to the workflow", fixture_id=self.watch.fixture_id)
                return WatchResult(reason="polling_off", progress=self.known)
            if wait_first:
                wait_first = False
                await self._wait(interval)
            started = time.monotonic()
            result = await self._poll_with_heartbeats()
            if result is not None:
                return result
            activity.heartbeat(self.known.version)
            await self._wait(self._until_next_poll(interval, time.monotonic() - started))

    @staticmethod
    def _until_next_poll(interval: timedelta, took: float) -> timedelta:
        """Polls start one interval apart, however long each took (a large shared board takes a
        while): the next waits out what is left of the interval, and at least a tenth of it, so a
        provider slower than the interval is not asked again the moment it answered.

        Plus a hundredth of the interval: the live board is shared for exactly one interval from
        its fetch, so a watch that fetched it and polls again on the dot would, a millisecond of
        scheduling early, be handed the board it already read instead of the next one.
        """
        seconds = interval.total_seconds()
        return timedelta(seconds=max(seconds / 10, seconds - took) + seconds / 100)

    async def _wait(self, interval: timedelta) -> None:
        """Sleep until the next poll, heartbeating meanwhile: a night at stumps (5 min between
        polls) is far longer than the heartbeat timeout, and a silent watch would be declared dead
        and restarted, each restart fetching the whole fixture at once."""
        every = self._heartbeat_every()
        left = interval.total_seconds()
        while left > every:
            await asyncio.sleep(every)
            left -= every
            activity.heartbeat(self.known.version)
        await asyncio.sleep(left)

    def _heartbeat_every(self) -> float:
        timeout = activity.info().heartbeat_timeout
        return timeout.total_seconds() / 3 if timeout else 5.0

    async def _poll_with_heartbeats(self) -> WatchResult | None:
        """One poll, heartbeating while it runs: a provider riding out retries is slow, not dead."""
        every = self._heartbeat_every()
        poll = asyncio.create_task(self._poll_once())
        try:
            while True:
                done, _ = await asyncio.wait({poll}, timeout=every)
                if done:
                    return poll.result()
                activity.heartbeat(self.known.version)
        finally:
            # Cancelling the activity must cancel the request it is waiting on, too.
            poll.cancel()

    async def _catch_up(self) -> WatchResult | None:
        """A change an earlier attempt committed but never returned (its worker died) is reported
        first, with the key moments its entries hold."""
        summary = await self.owner.catch_up(self.watch.fixture_id, self.known.version)
        if summary is None:
            return None
        if self._material(summary):
            log.info("unreported change found", fixture_id=self.watch.fixture_id, version=summary.version)
            return WatchResult(reason="changed", progress=summary.progress, summary=summary)
        self.known = summary.progress
        return None

    def _interval(self) -> timedelta | None:
        if self.known.state in PLAYING_STATES:
            return self.polling.live
        if self.known.state in OVERNIGHT_STATES and self.polling.stumps is not None:
            return self.polling.stumps
        return self.polling.idle

    def _count_poll_start(self, interval: timedelta | None) -> None:
        """Poll lateness: start to start, beyond the interval (the previous poll's own time counts)."""
        now = time.monotonic()
        if self.last_poll is not None and interval is not None:
            late = max(0.0, now - self.last_poll - interval.total_seconds())
            label = "live" if self.known.state in PLAYING_STATES else "idle"
            metrics().poll_lateness.record(timedelta(seconds=late), {"interval": label})
        self.last_poll = now

    async def _poll_once(self) -> WatchResult | None:
        self._count_poll_start(self._interval())
        # Each poll is its own trace: a change it commits carries this id to every push and screen.
        with bound_trace():
            fetched = await self._fetch()
            snapshot, source = fetched.snapshot, fetched.source
            metrics().polls.add(1, {"source": source, "outcome": fetched.outcome})
            summary = None
            if snapshot is not None and not (fetched.from_board and snapshot is self.stored):
                summary = await self.owner.ingest(snapshot, source, since=self.known.version)
                if summary is None or (summary.pending_misses == 0 and not summary.desk_owned):
                    self.stored = snapshot
            if fetched.outcome in ("ok", "off_board"):
                # Polled means answered and ingested (or found already stored): a provider outage
                # or a call kept back by the budget ages the match's poll, an unchanged answer
                # does not.
                shown = snapshot.state if snapshot is not None else self.known.state
                state = summary.state if summary is not None else shown
                self.owner.watched.polled(self.watch.fixture_id, in_play=state in PLAYING_STATES)
            if summary is not None and self._material(summary):
                log.info(
                    "material change",
                    fixture_id=self.watch.fixture_id,
                    version=summary.version,
                    state=summary.state,
                    score=f"{summary.home}-{summary.away}",
                    key_moments=list(summary.key_moments),
                )
                return WatchResult(reason="changed", progress=summary.progress, summary=summary)
        if summary is not None:
            self.known = summary.progress
        settle = self.watch.settle_seconds
        if settle is not None and time.monotonic() - self.started >= settle:
            return WatchResult(reason="settled", progress=self.known)
        return None

    async def _fetch(self) -> _Fetched:
        fixture_id = self.watch.fixture_id
        reconcile = self.polling.reconcile
        now = time.monotonic()
        try:
            if reconcile is not None and now >= self.next_reconcile:
                return await self._reconcile(fixture_id, now, reconcile)
            snapshot = await self.client.live_snapshot(fixture_id)
            if snapshot is not None:
                return _Fetched(snapshot, "live", from_board=True)
            if reconcile is None or self.known.state in PLAYING_STATES:
                # It was in play and left the board (full time, most likely), or nothing else
                # would ever look: the fixture endpoint has it, now.
                return _Fetched(await self.client.fixture(fixture_id), "live")
            # Before kick-off or settling after the end: its reconcile turn fetches it.
            return _Fetched(None, "live", outcome="off_board")
        except ProviderBudgetSpent as error:
            # Not a failure: the budget keeps this call for later (counted in
            # `scoreline_provider_budget_refused`, said once at start when the plan is small).
            log.debug("poll deferred: the hourly budget is short", fixture_id=fixture_id, entity=error.entity)
            return _Fetched(None, "live", outcome="deferred")
        except ProviderError as error:
            # The client already retried and its breaker guards the provider; the last known
            # state stays served and the next poll tries again.
            log.warning(
                "provider poll failed", fixture_id=fixture_id, error=str(error), kind=type(error).__name__
            )
            return _Fetched(None, "live", outcome="failed")

    async def _reconcile(self, fixture_id: int, now: float, reconcile: timedelta) -> _Fetched:
        """The reconcile turn: the whole fixture, from a complete board or a shared batch.

        A watch's first look (a crash resume, a match's first watch) is urgent; every later turn
        waits up to one poll interval for the rest of the process's turns, and gives way to the
        board when the hourly budget is short: the next turn tries again.
        """
        first = self.next_reconcile == self.started
        self.next_reconcile = _next_slot(now, reconcile)
        on_board = await self._from_a_complete_board(fixture_id)
        if on_board is not None:
            return _Fetched(on_board, "live")
        interval = self._interval() or reconcile
        try:
            snapshot = await self.client.fixture(
                fixture_id, within=interval.total_seconds(), deferrable=not first
            )
        except ProviderBudgetSpent as error:
            log.info(
                "reconcile deferred: the hourly budget is short", fixture_id=fixture_id, entity=error.entity
            )
            return _Fetched(None, "reconcile", outcome="deferred")
        return _Fetched(snapshot, "reconcile")

    async def _from_a_complete_board(self, fixture_id: int) -> Snapshot | None:
        """The fixture from the live board when it carries it whole, which makes a fetch redundant.

        The board is the same fixture entity with the same includes as the per-fixture endpoints:
        a reconcile of a match on it is a full ingest of the board's snapshot (through the digest,
        so a change nobody reported is found), at no request. Fetching instead would cost
        `fixtures/multi` calls growing with the matches (600 an hour for 500 football matches, and
        Cricket v2, without `multi`, a `fixtures/{id}` per match per interval). A snapshot whose
        include the provider dropped is not whole, and a board that fails is no answer: the
        fixture is fetched then.
        """
        try:
            snapshot = await self.client.live_snapshot(fixture_id)
        except ProviderError:
            return None
        return snapshot if snapshot is not None and self.client.is_whole(snapshot) else None

    def _material(self, summary: IngestSummary) -> bool:
        if summary.desk_owned:
            return False  # the workflow cancels this watch as soon as it sees the mode switch
        known = self.known
        return (
            summary.state != known.state
            or (summary.home, summary.away) != (known.home, known.away)
            or bool(summary.key_moments)
            # Every ball is news in cricket: a dot ball moves the overs, the strip and the bowler.
            or (summary.cricket is not None and summary.cricket != known.cricket)
        )
