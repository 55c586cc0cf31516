"""The drainer (docs/live-activities.md, concept 7): sends every due mailbox the newest state it owes.

One per worker process. It takes up to a batch of due rows of any fixture (`TAKE`: leased, the
alert mark set or read in the same statement), sends each one request with bounded concurrency,
and writes the batch's outcomes and attempts in one statement (`SETTLE`, only where it still holds
the lease). Batches overlap: the next is taken while the last is still being answered. It is woken
by `NOTIFY live_activity_due` and polls anyway: the poll is the sweep that finds rows owed by any
fixture, including those a dead worker leased.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import socket
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from activities.push.answers import (
    AFTER_ANSWER,
    BACKOFF_CAP_S,
    BACKOFF_FIRST_S,
    Attempt,
    Outcome,
    Result,
    backoff,
)
from activities.push.apns import ApnsClient
from activities.push.connection import MaybeSent, NotSent, Withheld
from activities.push.outcomes import Verdict, classify
from activities.push.payloads import compose, variants
from scoreline.db.listen import DATABASE_ERRORS, listening
from scoreline.devices.mailbox import DUE_CHANNEL
from scoreline.logging import get_logger
from scoreline.metrics.instruments import metrics
from scoreline.settings import Settings
from scoreline.tracing import bound_trace

log = get_logger(__name__)

LEASE_S = 30.0
"""How long a taken row is the drainer's alone: its requests (each answered or timed out within
the APNs request timeout) and its settle's retries fit well inside."""
LEASE_MARGIN_S = 2.0
"""No request starts later than this plus the request timeout before the lease lapses, so every
answer is in before a successor may take the row."""
START_GRACE_S = 60.0
"""A start whose request is in doubt goes again only after this: time for the phone to report the
activity it started (which makes a second start needless)."""
POLL_S = 1.0
"""Seconds between takes when nothing woke the drainer: the sweep's period."""
OUTAGE_RETRY_CAP_S = 10.0
"""The longest wait between two attempts to reach Postgres during an outage."""
START_OFFSET_S = 60
"""`apns-expiration` is at least this far ahead: APNs must have time to try at all."""
PUBLISHED_CACHE_SIZE = 20_000
"""Published pushes (and request bodies) kept in memory; beyond that the cache starts over (`la_push`
rows never change, so a cached one is never wrong)."""
MAX_RESENDS = 2
"""Resends at once after `ExpiredProviderToken` or an unusable connection, per request."""
LISTEN_PING_S = 10.0
"""How often the LISTEN connection is checked for life."""
GAUGE_EVERY_S = 15.0
"""How often the owed mailboxes are counted for the gauges (one index scan of the owed rows)."""
OWED = """
SELECT count(*) AS owed,
       COALESCE(extract(epoch FROM now() - min(la.next_try_at) FILTER (WHERE la.next_try_at <= now())), 0) AS lag
FROM live_activity la JOIN device d ON d.id = la.device_id
WHERE la.next_try_at IS NOT NULL AND d.environment = :environment
"""
"""Every mailbox of this drainer's APNs environment that owes a push, and how late the most
overdue due one is: a lag that grows while drainers run means they cannot keep up, or are wedged."""


@dataclass(frozen=True)
class DrainConfig:
    """Sizes and delays of a drainer (from settings; tests shrink the delays)."""

    environment: str = "sandbox"
    batch_size: int = 500
    concurrency: int = 500
    request_timeout: float = 10.0
    lease_s: float = LEASE_S
    start_grace_s: float = START_GRACE_S
    poll_s: float = POLL_S
    backoff_first_s: float = BACKOFF_FIRST_S
    backoff_cap_s: float = BACKOFF_CAP_S

    @classmethod
    def from_settings(cls, settings: Settings) -> DrainConfig:
        return cls(
            environment=settings.apns_environment,
            batch_size=settings.push_batch_size,
            concurrency=settings.push_concurrency,
            request_timeout=settings.apns_request_timeout.total_seconds(),
        )

    @property
    def sending_for(self) -> float:
        """Seconds after a take in which its requests may start (`LEASE_MARGIN_S`)."""
        return max(0.0, self.lease_s - self.request_timeout - LEASE_MARGIN_S)


@dataclass(frozen=True)
class Published:
    """One `la_push` row: what a request to an activity is made of."""

    event_key: str
    priority: int
    routine: bool
    content_state: dict[str, Any]
    alert: dict[str, Any] | None
    attributes: dict[str, Any]
    stale_date: int
    dismissal_date: int
    trace_id: str | None


@dataclass(frozen=True)
class Row:
    """One taken mailbox and what its request carries (stamps of `la_push` rows)."""

    id: int
    fixture_id: int
    device_id: uuid.UUID
    token: str
    event: str
    """start (its start has not gone out), end (it wants an end) or update."""
    want_stamp: int
    alert_stamp: int | None
    """The owed alert it carries: not expired, not in doubt."""
    start_stamp: int | None
    """A start's: its generation's start push (the attributes)."""
    tries: int


@dataclass(frozen=True)
class Batch:
    rows: list[Row]
    taken_at: float
    """`time.monotonic()` at the take: the lease's local clock."""
    consumed: int = 0
    """Due rows the take dealt with (sent, parked, waiting or closed): fewer than asked for means
    nothing more is due now."""


@dataclass(frozen=True)
class Sent:
    """One row's request and outcome, as the settle writes them."""

    row: Row
    outcome: Outcome
    effect: str
    priority: int
    routine: bool
    event_key: str
    trace_id: str | None


TAKE = """
WITH due AS (
    -- Decided from the locked rows themselves: a row another transaction changed meanwhile is
    -- re-checked and returned as it is now (a report that just gave it a token included).
    SELECT la.id, la.fixture_id, la.generation, la.want_stamp, la.want_end, la.alert_stamp,
           la.alert_marked_at, la.alert_marked_stamp,
           la.started_at IS NULL AND la.push_token IS NULL AS needs_start,
           CASE WHEN la.started_at IS NULL AND la.push_token IS NULL
                THEN CASE WHEN d.push_to_start_active THEN d.push_to_start_token END
                WHEN la.push_token_active THEN la.push_token END AS token
    FROM live_activity la JOIN device d ON d.id = la.device_id
    WHERE la.next_try_at <= now() AND (la.lease_until IS NULL OR la.lease_until < now())
      AND la.want_stamp IS NOT NULL AND d.environment = :environment
    ORDER BY la.next_try_at LIMIT :limit
    FOR UPDATE OF la SKIP LOCKED
), seen AS (
    SELECT due.*,
           due.alert_marked_at IS NOT NULL AS in_doubt,
           due.alert_marked_at > now() - make_interval(secs => :grace) AS in_grace,
           -- In doubt, only what the lost request carried is dropped: a newer alert never went.
           due.alert_marked_at IS NOT NULL AND due.alert_stamp <= due.alert_marked_stamp AS lost,
           due.alert_stamp IS NOT NULL
               AND (a.stale_date IS NULL OR a.stale_date <= extract(epoch FROM now())) AS expired
    FROM due LEFT JOIN la_push a ON a.fixture_id = due.fixture_id AND a.stamp = due.alert_stamp
), decided AS (
    SELECT seen.*, CASE WHEN token IS NULL THEN 'park'
                        WHEN needs_start AND in_doubt AND in_grace THEN 'wait'
                        WHEN needs_start AND want_end THEN 'close'
                        ELSE 'send' END AS action
    FROM seen
), taken AS (
    UPDATE live_activity la SET
        lease_owner = CASE WHEN s.action = 'send' THEN :me END,
        lease_until = CASE WHEN s.action = 'send' THEN now() + make_interval(secs => :lease) END,
        alert_stamp = CASE WHEN s.action = 'send' AND (s.lost OR s.expired) THEN NULL
                           ELSE s.alert_stamp END,
        alert_marked_at = CASE
            WHEN s.action = 'send' AND (s.needs_start OR (s.alert_stamp IS NOT NULL
                                        AND NOT s.lost AND NOT s.expired)) THEN now()
            WHEN s.action = 'send' OR s.action = 'close' THEN NULL
            ELSE s.alert_marked_at END,
        alert_marked_stamp = CASE
            WHEN s.action = 'send' AND s.needs_start THEN s.want_stamp
            WHEN s.action = 'send' AND s.alert_stamp IS NOT NULL AND NOT s.lost AND NOT s.expired
                THEN s.alert_stamp
            WHEN s.action = 'send' OR s.action = 'close' THEN NULL
            ELSE s.alert_marked_stamp END,
        next_try_at = CASE s.action WHEN 'send' THEN la.next_try_at
                                    WHEN 'wait' THEN s.alert_marked_at + make_interval(secs => :grace) END,
        status = CASE WHEN s.action = 'close' THEN 'ended' ELSE la.status END,
        ended_at = CASE WHEN s.action = 'close' THEN now() ELSE la.ended_at END,
        updated_at = now()
    FROM decided s WHERE la.id = s.id
    RETURNING la.id, la.fixture_id, la.device_id, s.token, s.action, s.needs_start, s.want_end,
              s.want_stamp, CASE WHEN s.lost OR s.expired THEN NULL ELSE s.alert_stamp END AS alert_stamp,
              la.tries, s.generation
)
SELECT t.*, CASE WHEN t.needs_start AND t.action = 'send' THEN (
           SELECT max(p.stamp) FROM la_push p
           WHERE p.fixture_id = t.fixture_id AND p.generation = t.generation AND p.event = 'start')
       END AS start_stamp
FROM taken t
"""
"""Lease up to `limit` due rows with a live token (doc concepts 5 and 6); every row it consumed comes
back with its action, those to send with what to send. A row taken while its mark stands had a
request of unknown outcome: the alert that request carried is dropped, and a start waits out
`START_GRACE_S` after the mark. A row with no live token is parked until a report or publish; a
start never sent whose generation has ended is closed (the phone never showed it)."""

PUBLISHED = """
SELECT p.fixture_id, p.stamp, p.event_key, p.priority, p.routine, p.content_state, p.alert,
       p.attributes, p.stale_date, p.dismissal_date, p.trace_id
FROM la_push p JOIN unnest(CAST(:fixtures AS bigint[]), CAST(:stamps AS bigint[])) AS k(fixture_id, stamp)
  ON p.fixture_id = k.fixture_id AND p.stamp = k.stamp
"""

_SAME = "(r.event = 'start' OR la.push_token = r.token)"
"""The row still has the token the request went to (a report may have replaced it meanwhile)."""
_DELIVERED = f"(r.result IN ('sent', 'impossible') AND {_SAME})"
_START_OFF = (
    "(d.push_to_start_token = r.token AND (r.dead_at IS NULL OR d.updated_at <= to_timestamp(r.dead_at)))"
)
"""APNs' 410 switches the push-to-start token off unless the device registered it again since."""

SETTLE = f"""
WITH r AS (
    SELECT * FROM unnest(
        CAST(:ids AS bigint[]), CAST(:devices AS uuid[]), CAST(:results AS text[]),
        CAST(:tokens AS text[]), CAST(:events AS text[]), CAST(:sent AS bigint[]),
        CAST(:alert_upto AS bigint[]), CAST(:routine AS boolean[]), CAST(:backoff AS float8[]),
        CAST(:dead_at AS float8[])
    ) AS r(id, device_id, result, token, event, sent, alert_upto, routine, backoff_s, dead_at)
), settled AS (
    UPDATE live_activity la SET
        sent_stamp = CASE WHEN {_DELIVERED} THEN GREATEST(la.sent_stamp, r.sent) ELSE la.sent_stamp END,
        alert_stamp = CASE WHEN r.result IN ('sent', 'impossible', 'unknown') AND la.alert_stamp <= r.alert_upto
                           THEN NULL ELSE la.alert_stamp END,
        started_at = CASE WHEN r.result = 'sent' AND r.event = 'start'
                          THEN coalesce(la.started_at, now()) ELSE la.started_at END,
        status = CASE WHEN r.result = 'sent' AND r.event = 'end' AND {_SAME} THEN 'ended' ELSE la.status END,
        ended_at = CASE WHEN r.result = 'sent' AND r.event = 'end' AND {_SAME}
                        THEN coalesce(la.ended_at, now()) ELSE la.ended_at END,
        routine_sent_at = CASE WHEN r.result = 'sent' AND r.routine THEN now() ELSE la.routine_sent_at END,
        push_token_active = CASE WHEN r.result = 'dead' AND r.event <> 'start' AND la.push_token = r.token
                                 THEN false ELSE la.push_token_active END,
        tries = CASE WHEN r.result IN ('retry', 'unknown', 'wrong', 'dead') THEN la.tries + 1
                     WHEN r.result = 'withheld' THEN la.tries ELSE 0 END,
        -- A start whose outcome is unknown keeps its mark: `TAKE` waits out START_GRACE_S after it.
        alert_marked_at = CASE WHEN r.result = 'unknown' AND r.event = 'start' THEN la.alert_marked_at END,
        alert_marked_stamp = CASE WHEN r.result = 'unknown' AND r.event = 'start' THEN la.alert_marked_stamp END,
        lease_owner = NULL,
        lease_until = NULL,
        next_try_at = CASE
            WHEN NOT {_SAME} OR r.result = 'withheld' THEN now()
            WHEN r.result = 'dead' AND (r.event <> 'start' OR {_START_OFF}) THEN NULL
            WHEN r.result IN ('retry', 'unknown', 'wrong', 'dead') THEN now() + make_interval(secs => r.backoff_s)
            WHEN la.want_stamp > GREATEST(la.sent_stamp, r.sent)
                 OR (la.alert_stamp IS NOT NULL AND NOT coalesce(la.alert_stamp <= r.alert_upto, false))
            THEN now() END,
        updated_at = now()
    FROM r JOIN device d ON d.id = r.device_id WHERE la.id = r.id AND la.lease_owner = :me
    RETURNING la.id
), dead_starts AS (
    UPDATE device d SET push_to_start_active = false
    FROM r WHERE r.result = 'dead' AND r.event = 'start' AND d.id = r.device_id AND {_START_OFF}
), dead_updates AS (
    UPDATE live_activity o SET push_token_active = false, updated_at = now()
    FROM r WHERE r.result = 'dead' AND r.event <> 'start' AND o.push_token = r.token
      AND o.push_token_active AND o.id <> ALL(CAST(:ids AS bigint[]))
), attempts AS (
    INSERT INTO push_attempt (fixture_id, event_key, effect, device_id, live_activity_id, token_kind,
                              attempt, priority, payload_bytes, apns_id, status, reason, latency_ms,
                              trace_id)
    SELECT * FROM unnest(
        CAST(:a_fixture AS bigint[]), CAST(:a_event_key AS text[]), CAST(:a_effect AS text[]),
        CAST(:a_device AS uuid[]), CAST(:a_activity AS bigint[]), CAST(:a_kind AS text[]),
        CAST(:a_attempt AS smallint[]), CAST(:a_priority AS smallint[]), CAST(:a_bytes AS int[]),
        CAST(:a_apns_id AS uuid[]), CAST(:a_status AS smallint[]), CAST(:a_reason AS text[]),
        CAST(:a_latency AS int[]), CAST(:a_trace AS text[]))
)
SELECT count(*) FROM settled
"""
"""Write a batch's outcomes (doc, "Draining") where this drainer still holds the lease, switch
dead tokens off, and log every request. A dead token's row is parked (waiting for a report) where
its token went off, and backs off where the token stays on (registered again since APNs' 410)."""
ROW_ARRAYS = tuple("ids devices results tokens events sent alert_upto routine backoff dead_at".split())
ATTEMPT_ARRAYS = tuple(
    f"a_{name}"
    for name in "fixture event_key effect device activity kind attempt priority bytes apns_id status reason"
    " latency trace".split()
)
"""`SETTLE`'s array parameters, in the order `Drainer._settle_params` fills them."""


class Drainer:
    """Takes, sends and settles due mailboxes until stopped; see the module docstring.

    `dsn` (asyncpg form) is where it LISTENs for `DUE_CHANNEL`; without it, it only polls.
    """

    def __init__(
        self, engine: AsyncEngine, client: ApnsClient, config: DrainConfig, *, dsn: str | None = None
    ) -> None:
        self.owner = f"{socket.gethostname()}/{os.getpid()}/{uuid.uuid4().hex[:8]}"
        """This drainer's `lease_owner`."""
        self._engine = engine
        self._client = client
        self._config = config
        self._dsn = dsn
        self._leased = 0
        """Rows taken and not settled yet: the requests in flight, at most `concurrency`."""
        self._woken = asyncio.Event()
        self._stopping = asyncio.Event()
        self._published: dict[tuple[int, int], Published] = {}
        self._bodies: dict[tuple[int, str, int, int | None, int | None], tuple[bytes, ...]] = {}
        self._batches: set[asyncio.Task[None]] = set()
        self._tasks: list[asyncio.Task[None]] = []
        self._outage = False

    def start(self) -> None:
        """Run `run` (and the LISTEN loop) in the background until `stop`."""
        self._tasks = [
            asyncio.create_task(self.run(), name="drainer"),
            asyncio.create_task(self._gauge(), name="drainer-gauges"),
        ]
        if self._dsn is not None:
            self._tasks.append(asyncio.create_task(self._listen(self._dsn), name="drainer-listen"))

    async def stop(self) -> None:
        """Stop taking; requests in flight are answered (or time out) and settled, then return."""
        self._stopping.set()
        self.wake()
        tasks, self._tasks = self._tasks, []
        for task in tasks[1:]:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def wake(self) -> None:
        self._woken.set()

    async def run(self) -> None:
        """Take, send and settle, batches overlapping, until stopped. A batch is taken only when
        every row of it can be sent at once (`concurrency` rows leased at most): the alert mark
        its take sets is then the mark right before each request, and a worker stopped or paused
        meanwhile leaves in doubt only requests that were really on their way."""
        config = self._config
        outage_wait = 0.0
        while not self._stopping.is_set():
            room = min(config.batch_size, config.concurrency - self._leased)
            if self._batches and room < max(1, config.batch_size // 2):
                await asyncio.wait(self._batches, return_when=asyncio.FIRST_COMPLETED)
                continue
            self._woken.clear()
            try:
                batch = await self.take(room)
            except DATABASE_ERRORS as error:
                self._out_of_reach(error)
                outage_wait = min(OUTAGE_RETRY_CAP_S, max(self._config.poll_s, outage_wait * 2))
                await self._sleep(outage_wait)
                continue
            except Exception:  # the loop outlives any one failure
                log.exception("drain.take_failed")
                await self._sleep(self._config.poll_s)
                continue
            outage_wait = 0.0
            if batch.rows:
                self._leased += len(batch.rows)
                task = asyncio.create_task(self._pass(batch))
                self._batches.add(task)
                task.add_done_callback(functools.partial(self._passed, len(batch.rows)))
            if batch.consumed < room:
                await self._sleep(config.poll_s)
        if self._batches:
            await asyncio.wait(self._batches)

    def _passed(self, rows: int, task: asyncio.Task[None]) -> None:
        self._batches.discard(task)
        self._leased -= rows

    async def take(self, limit: int | None = None) -> Batch:
        """Lease up to `limit` (a batch) due rows (`TAKE`) and load the pushes they need."""
        config = self._config
        async with self._engine.begin() as conn:
            taken_at = time.monotonic()
            found = (
                await conn.execute(
                    text(TAKE),
                    {
                        "environment": config.environment,
                        "limit": config.batch_size if limit is None else limit,
                        "me": self.owner,
                        "lease": config.lease_s,
                        "grace": config.start_grace_s,
                    },
                )
            ).all()
            rows = [
                Row(
                    id=r.id,
                    fixture_id=r.fixture_id,
                    device_id=r.device_id,
                    token=r.token,
                    event="start" if r.needs_start else "end" if r.want_end else "update",
                    want_stamp=r.want_stamp,
                    alert_stamp=r.alert_stamp,
                    start_stamp=r.start_stamp,
                    tries=r.tries,
                )
                for r in found
                if r.action == "send"
            ]
            await self._load_published(conn, rows)
        self._reached()
        return Batch(rows, taken_at, consumed=len(found))

    async def send(self, batch: Batch) -> list[Sent]:
        """One request per row, all at once (`run` takes no more rows than may be in flight)."""
        deadline = batch.taken_at + self._config.sending_for
        return list(await asyncio.gather(*(self._deliver(row, deadline) for row in batch.rows)))

    async def settle(self, sent: Sequence[Sent]) -> int:
        """Write `sent` (`SETTLE`); how many rows this drainer still held the lease of."""
        if not sent:
            return 0
        async with self._engine.begin() as conn:
            count = (await conn.execute(text(SETTLE), self._settle_params(sent))).scalar_one()
        self._reached()
        return int(count)

    async def _pass(self, batch: Batch) -> None:
        """Send a batch and settle it, retrying the settle through an outage for as long as it
        lasts: only rows whose lease this drainer still holds are written, so a late settle is
        safe, and until it lands the next drainer sees the marks and repeats no alert. Stopping,
        or a failure that is not the database's, drops the outcomes (the marks keep that safe)."""
        sent = await self.send(batch)
        wait = self._config.poll_s
        while True:
            try:
                await self.settle(sent)
                break
            except DATABASE_ERRORS as error:
                self._out_of_reach(error)
            except Exception:  # the loop outlives any one failure
                log.exception("drain.settle_failed", rows=len(sent))
                break
            if self._stopping.is_set():
                log.warning("drain.settle_dropped", rows=len(sent))
                break
            await asyncio.sleep(wait)
            wait = min(OUTAGE_RETRY_CAP_S, wait * 2)
        self.wake()

    async def _deliver(self, row: Row, deadline: float) -> Sent:
        wanted = self._published.get((row.fixture_id, row.want_stamp))
        alerting = self._published.get((row.fixture_id, row.alert_stamp)) if row.alert_stamp else None
        start = self._published.get((row.fixture_id, row.start_stamp)) if row.start_stamp else None
        if wanted is None:
            log.error("drain.published_push_missing", live_activity_id=row.id, stamp=row.want_stamp)
            return Sent(row, Outcome(Result.WRONG), "la.update", 5, False, "", None)
        alert = alerting.alert if alerting is not None else None
        # Rows wanting the same push with the same alert get the same bytes: encoded once.
        key = (row.fixture_id, row.event, row.want_stamp, row.alert_stamp, row.start_stamp)
        bodies = self._bodies.get(key)
        if bodies is None:
            payload = compose(
                row.event,
                row.want_stamp,
                wanted.content_state,
                stale_date=wanted.stale_date,
                dismissal_date=wanted.dismissal_date,
                alert=alert,
                attributes=(start or wanted).attributes if row.event == "start" else None,
            )
            bodies = self._bodies[key] = variants(payload)
        loud = alert is not None or row.event != "update" or wanted.priority == 10
        if alert is not None and alerting is not None:
            expires = alerting.stale_date
        else:
            expires = wanted.dismissal_date if row.event == "end" else wanted.stale_date
        expiration = max(int(time.time()) + START_OFFSET_S, expires)
        effect = f"la.{row.event}" if row.event != "update" else "la.alert" if alert else "la.update"
        with bound_trace(wanted.trace_id) if wanted.trace_id else contextlib.nullcontext():
            outcome = await self._request(row.token, bodies, 10 if loud else 5, expiration, deadline, effect)
        routine = wanted.routine and not loud
        return Sent(row, outcome, effect, 10 if loud else 5, routine, wanted.event_key, wanted.trace_id)

    async def _request(
        self,
        token: str,
        bodies: tuple[bytes, ...],
        priority: int,
        expiration: int,
        deadline: float,
        effect: str,
    ) -> Outcome:
        """The request and its immediate resends (a smaller variant, a new provider token)."""
        attempts: list[Attempt] = []
        level = resends = 0
        kind = effect.removeprefix("la.")

        def go() -> bool:
            return not self._stopping.is_set() and time.monotonic() < deadline

        while level < len(bodies):
            body = bodies[level]
            if not go():
                return Outcome(Result.WITHHELD, tuple(attempts))
            try:
                answer = await self._client.send(token, body, priority=priority, expiration=expiration, go=go)
            except Withheld:
                return Outcome(Result.WITHHELD, tuple(attempts))
            except (NotSent, MaybeSent) as error:
                attempts.append(Attempt(None, None, f"{type(error).__name__}: {error}"[:200], 0.0, len(body)))
                metrics().pushes.add(1, {"kind": kind, "status": "connection", "reason": ""})
                unknown = isinstance(error, MaybeSent)
                return Outcome(Result.UNKNOWN if unknown else Result.RETRY, tuple(attempts))
            attempts.append(
                Attempt(answer.apns_id, answer.status, answer.reason, answer.latency_ms, len(body))
            )
            metrics().pushes.add(
                1, {"kind": kind, "status": str(answer.status), "reason": answer.reason or ""}
            )
            verdict = classify(answer.status, answer.reason)
            if verdict is Verdict.TRIM:
                level += 1
                continue
            if (
                verdict is Verdict.REFRESH_TOKEN
                and resends < MAX_RESENDS
                and self._client.refresh_token(answer.token)
            ):
                resends += 1
                continue
            if verdict is Verdict.NEW_CONNECTION and resends < MAX_RESENDS:
                resends += 1
                continue
            if verdict is Verdict.REJECT:
                log.error("drain.request_rejected", status=answer.status, reason=answer.reason, effect=effect)
            return Outcome(AFTER_ANSWER[verdict], tuple(attempts), answer.timestamp_ms)
        # APNs refused even the smallest variant as too large, and no later request can carry this
        # push in fewer bytes: it is provably impossible, so it counts as sent (its alert too).
        return Outcome(Result.IMPOSSIBLE, tuple(attempts))

    async def _load_published(self, conn: Any, rows: list[Row]) -> None:
        """Fetch the `la_push` rows not in memory yet, each once however many rows want it."""
        keys = {(r.fixture_id, s) for r in rows for s in (r.want_stamp, r.alert_stamp, r.start_stamp) if s}
        missing = [key for key in keys if key not in self._published]
        if not missing:
            return
        if len(self._published) + len(missing) > PUBLISHED_CACHE_SIZE:
            self._published.clear()
            self._bodies.clear()
            missing = list(keys)
        found = await conn.execute(
            text(PUBLISHED), {"fixtures": [k[0] for k in missing], "stamps": [k[1] for k in missing]}
        )
        for p in found:
            self._published[(p.fixture_id, p.stamp)] = Published(
                event_key=p.event_key,
                priority=p.priority,
                routine=p.routine,
                content_state=_json(p.content_state),
                alert=_json(p.alert) if p.alert is not None else None,
                attributes=_json(p.attributes),
                stale_date=p.stale_date,
                dismissal_date=p.dismissal_date,
                trace_id=p.trace_id,
            )

    def _settle_params(self, sent: Sequence[Sent]) -> dict[str, Any]:
        """`SETTLE`'s arrays: one entry per row, and one per request (`push_attempt`)."""
        first, cap = self._config.backoff_first_s, self._config.backoff_cap_s
        rows: list[tuple[Any, ...]] = []
        tried: list[tuple[Any, ...]] = []
        for s in sent:
            row, outcome = s.row, s.outcome
            # A start clears an owed alert at or below its stamp: its state went with it.
            upto = max(row.want_stamp, row.alert_stamp or 0) if row.event == "start" else row.alert_stamp
            wait = cap if outcome.result is Result.WRONG else backoff(row.tries + 1, first, cap)
            dead_at = outcome.dead_at_ms / 1000 if outcome.dead_at_ms is not None else None
            at = (row.id, row.device_id, outcome.result.value, row.token, row.event, row.want_stamp)
            rows.append((*at, upto, s.routine, wait, dead_at))
            who = (row.fixture_id, s.event_key, s.effect, row.device_id, row.id)
            kind = "push_to_start" if row.event == "start" else "update"
            for number, a in enumerate(outcome.attempts, start=row.tries + 1):
                answer = (a.payload_bytes, a.apns_id, a.status, a.reason, round(a.latency_ms))
                tried.append((*who, kind, min(number, 32_767), s.priority, *answer, s.trace_id))
        params: dict[str, Any] = {"me": self.owner}
        params.update(zip(ROW_ARRAYS, _columns(rows, len(ROW_ARRAYS)), strict=True))
        params.update(zip(ATTEMPT_ARRAYS, _columns(tried, len(ATTEMPT_ARRAYS)), strict=True))
        return params

    def _out_of_reach(self, error: BaseException) -> None:
        if not self._outage:
            self._outage = True
            log.warning("drain.postgres_out_of_reach", error=f"{type(error).__name__}: {error}")

    def _reached(self) -> None:
        if self._outage:
            self._outage = False
            log.info("drain.postgres_back")

    async def _sleep(self, seconds: float) -> None:
        """Until woken, stopped, or `seconds` have passed."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                await self._woken.wait()

    async def owed(self) -> tuple[int, float]:
        """Mailboxes owing a push, and how many seconds the most overdue due one is late (`OWED`)."""
        async with self._engine.connect() as conn:
            row = (await conn.execute(text(OWED), {"environment": self._config.environment})).one()
        return int(row.owed), float(row.lag)

    async def _gauge(self) -> None:
        """Report what is owed, apart from the drain loop, so a wedged loop shows as a growing lag."""
        instruments = metrics()
        while True:
            try:
                owed, lag = await self.owed()
                instruments.live_activities_owed.set(owed)
                instruments.live_activity_lag.set(lag)
            except DATABASE_ERRORS:
                pass  # the drain loop says so once per outage
            await asyncio.sleep(GAUGE_EVERY_S)

    async def _listen(self, dsn: str) -> None:
        """Be woken by `DUE_CHANNEL`; reconnect after a lost connection (the poll covers the gap)."""
        while True:
            try:
                async with listening(
                    dsn, DUE_CHANNEL, self.wake, application_name="scoreline-drainer"
                ) as conn:
                    self.wake()
                    await conn.watch(LISTEN_PING_S)
            except DATABASE_ERRORS:
                pass
            await asyncio.sleep(min(OUTAGE_RETRY_CAP_S, self._config.poll_s * 5))


def _columns(rows: list[tuple[Any, ...]], width: int) -> list[list[Any]]:
    """`rows` transposed (`width` empty columns for no rows)."""
    return [list(column) for column in zip(*rows, strict=True)] if rows else [[] for _ in range(width)]


def _json(value: Any) -> dict[str, Any]:
    """A JSONB column as the driver gave it (decoded, or text)."""
    decoded = json.loads(value) if isinstance(value, str) else value
    return dict(decoded)
