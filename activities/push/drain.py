"""The drainer (docs/live-activities.md, concept 7): sends every due mailbox the newest state it owes.

One per worker process: takes up to a batch of due rows of any fixture (`TAKE`), sends each one
request, and writes the batch's outcomes in one statement (`SETTLE`); batches overlap. Woken by
`NOTIFY live_activity_due`, it polls anyway: the poll is the sweep that finds any owed row.
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
from dataclasses import dataclass, replace
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
from activities.push.connection import ConnectionLost, MaybeSent, NotSent, Withheld
from activities.push.outcomes import Verdict, classify
from activities.push.payloads import compose, variants
from activities.push.statements import (
    ATTEMPT_ARRAYS,
    LOCK_BATCH,
    OWED,
    PUBLISHED,
    ROW_ARRAYS,
    SETTLE,
    TAKE,
    Batch,
    Published,
    Row,
    Sent,
)
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
        self._in_doubt = True
        """No answer from APNs since this drainer started or since a connection to APNs was lost
        with requests unanswered: alerts are held back (`TAKE`'s `carry_alerts`), so that an
        unproven or failing path takes states, which may safely go twice, and no alert is spent
        on a request that may be lost. Any answer ends it."""

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
                        "carry_alerts": not self._in_doubt,
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
                    held=r.held,
                    start_stamp=r.start_stamp,
                    tries=r.tries,
                    leased_until=r.lease_until,
                    marked_at=r.alert_marked_at,
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
        """Write `sent` (`SETTLE`); how many rows' outcomes it wrote."""
        if not sent:
            return 0
        params = self._settle_params(sent)
        async with self._engine.begin() as conn:
            await conn.execute(text(LOCK_BATCH), {"ids": params["ids"]})
            count = (await conn.execute(text(SETTLE), params)).scalar_one()
        self._reached()
        return int(count)

    async def _pass(self, batch: Batch) -> None:
        """Send a batch and settle it, retrying the settle through an outage for as long as it
        lasts: only rows this take still holds are written as outcomes, so a late settle is safe
        (it only gives back an alert that did not go), and until it lands the next drainer sees
        the marks and repeats no alert. Stopping, or a failure that is not the database's, drops
        the outcomes (the marks keep that safe)."""
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
        if row.event == "end" and row.held:
            # An end closes the activity, and the phone would then ignore the alert held back for
            # it: the final state goes as an update now, the end with its alert once APNs answers.
            row = replace(row, event="update")
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
                if isinstance(error, ConnectionLost):
                    self._doubt(error)
                unknown = isinstance(error, MaybeSent)
                return Outcome(Result.UNKNOWN if unknown else Result.RETRY, tuple(attempts))
            self._answered()
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
            wait = cap if outcome.result is Result.WRONG else backoff(row.tries + 1, first, cap)
            dead_at = outcome.dead_at_ms / 1000 if outcome.dead_at_ms is not None else None
            at = (row.id, row.device_id, outcome.result.value, row.token, row.event, row.want_stamp)
            rows.append((*at, row.alert_stamp, s.routine, wait, dead_at, row.leased_until, row.marked_at))
            who = (row.fixture_id, s.event_key, s.effect, row.device_id, row.id)
            kind = "push_to_start" if row.event == "start" else "update"
            for number, a in enumerate(outcome.attempts, start=row.tries + 1):
                answer = (a.payload_bytes, a.apns_id, a.status, a.reason, round(a.latency_ms))
                tried.append((*who, kind, min(number, 32_767), s.priority, *answer, s.trace_id))
        params: dict[str, Any] = {"me": self.owner}
        params.update(zip(ROW_ARRAYS, _columns(rows, len(ROW_ARRAYS)), strict=True))
        params.update(zip(ATTEMPT_ARRAYS, _columns(tried, len(ATTEMPT_ARRAYS)), strict=True))
        return params

    def _doubt(self, error: ConnectionLost) -> None:
        if not self._in_doubt:
            self._in_doubt = True
            log.warning("drain.apns_connection_lost", error=str(error), alerts="held back until an answer")

    def _answered(self) -> None:
        if self._in_doubt:
            self._in_doubt = False
            log.info("drain.apns_answering", alerts="carried again")

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
