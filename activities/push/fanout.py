"""The `push_live_activities` activity: one Live Activity push to every target of a fixture.

Targets come from Postgres in keyset batches (followers by device id for `start`, running activities
by id for `update` and `end`). For each batch: ask `pacing` who gets the push now, claim those in
the `effect_log` gate (only new claims are sent), send with bounded, adaptive concurrency, then write
every outcome and attempt in one transaction and heartbeat the batch's cursor. Batches overlap
(loading, sending and writing run side by side, see `_Fanout._walk`), so the database never stalls
the pushes. A retried attempt resumes after the last cursor the server saw; the gate makes
re-reading a batch harmless.

Stopping (worker shutdown, cancellation): no new request starts; requests in flight get up to
`drain_timeout` to be answered, their outcomes are written, the rest is released for the next
attempt. So a restart delivers each push exactly once. A hard kill (SIGKILL, power loss) cannot
write anything: the next attempt sends that attempt's claims whose requests had not begun (each
request's last look marks its claim first, `activities.push.last_look`); those that had begun
are `in_doubt` and are never sent again (at most once: a goal alert never shows twice, and the
next update brings the state anyway). A worker paused past its heartbeat timeout is not dead: its
marked claims are left to it for `CLAIMANT_GRACE_S`, and the next attempt, once its walk is done,
claims again whatever it released meanwhile (`_Fanout._await_claimants`).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import AsyncIterator, Coroutine
from dataclasses import dataclass, field
from datetime import timedelta
from functools import partial

from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.push.apns import ApnsClient
from activities.push.dead_tokens import DeadTokens
from activities.push.death_writer import DeathWriter
from activities.push.delivery import Delivery, Sender, SendPolicy
from activities.push.last_look import ClaimedHere, LastLook
from activities.push.limiter import AdaptiveLimit
from activities.push.pacing import decide
from activities.push.payloads import build, variants
from activities.push.store import CLAIMANT_GRACE_S, SENDING_FENCE_MARGIN_S, PushStore, Target
from domain.failures import APNS_CONFIG_ERROR, UNKNOWN_FIXTURE
from domain.pushes import PushInput, PushResult
from scoreline.logging import get_logger
from scoreline.metrics.instruments import metrics
from scoreline.settings import Settings
from scoreline.tracing import bound_trace, current_trace_id

log = get_logger(__name__)


@dataclass(frozen=True)
class FanoutConfig:
    """Sizes and pacing of one fan-out (from settings; tests shrink the delays)."""

    environment: str = "sandbox"
    batch_size: int = 500
    concurrency: int = 500
    min_update_interval: float = 5.0
    policy: SendPolicy = field(default_factory=SendPolicy)
    drain_timeout: float = 15.0
    heartbeat_every: float = 2.0
    claimant_grace: float = CLAIMANT_GRACE_S
    """How long another attempt's claims marked as being sent are left to it (`PushStore`)."""

    @classmethod
    def from_settings(cls, settings: Settings) -> FanoutConfig:
        return cls(
            environment=settings.apns_environment,
            batch_size=settings.push_batch_size,
            concurrency=settings.push_concurrency,
            min_update_interval=settings.la_min_update_interval.total_seconds(),
            # Long enough for every request in flight to end (answer or time-out) first.
            drain_timeout=settings.apns_request_timeout.total_seconds() + 5,
        )


SENDING_BATCHES = 2
"""Batches sending at once: the next starts while the slowest pushes of the last are answered."""
AWAIT_CLAIMANT_EVERY_S = 1.0
"""How often claims another attempt still holds are asked about again (`CLAIMANT_GRACE_S`)."""

_Sending = dict[asyncio.Task[Delivery], Target]
"""One batch in flight: each delivery's task and its target."""


@dataclass(frozen=True)
class _Prepared:
    """One batch, claimed: what to send now, what pacing holds back, where the next batch starts."""

    claimed: list[Target]
    waiting: list[tuple[Target, float]]
    cursor: str
    last: bool


class PushActivities:
    """The APNs client and the database, injected once per worker, and the worker's `DeadTokens`
    (told of the other workers' dead tokens by `death_relay`) and `ClaimedHere`.

    `client` is None on a worker without APNs settings (`APNS_KEY_PATH` unset): a push with no
    target then succeeds with zero counts, one with targets fails for good (`ApnsConfigError`).
    `urgent` is the pool of the writes a SIGKILL turns into a loss while they wait (`PushStore`).
    """

    def __init__(
        self,
        engine: AsyncEngine,
        client: ApnsClient | None,
        config: FanoutConfig,
        dead: DeadTokens | None = None,
        *,
        urgent: AsyncEngine | None = None,
    ) -> None:
        self._engine = engine
        self._urgent = urgent
        self._client = client
        self._config = config
        self._dead = dead if dead is not None else DeadTokens()
        self._claimed_here = ClaimedHere()

    @activity.defn(name="push_live_activities")
    async def push_live_activities(self, push: PushInput) -> PushResult:
        """Send `push` to every target once; see the module docstring."""
        # The change's own trace (a poll's or a desk request's) wins over the workflow's.
        with bound_trace(push.trace_id) if push.trace_id else contextlib.nullcontext():
            return await _Fanout(
                self._engine, self._urgent, self._client, self._config, self._dead, self._claimed_here, push
            ).run()


class _Fanout:
    """One attempt of the activity."""

    def __init__(
        self,
        engine: AsyncEngine,
        urgent: AsyncEngine | None,
        client: ApnsClient | None,
        config: FanoutConfig,
        dead: DeadTokens,
        claimed_here: ClaimedHere,
        push: PushInput,
    ) -> None:
        info = activity.info()
        self.push = push
        self.config = config
        self.store = PushStore(
            engine,
            push,
            config.environment,
            config.claimant_grace,
            sending_fence=config.policy.look_kept + SENDING_FENCE_MARGIN_S,
            urgent=urgent,
        )
        self.stopping = asyncio.Event()
        self.dead = dead
        self.deaths = DeathWriter(self.store, dead)
        self.claimed_here = claimed_here
        self.sender = (
            None
            if client is None
            else Sender(
                client,
                config.policy,
                AdaptiveLimit(config.concurrency),
                self.stopping,
                kind="alert" if push.alert else push.kind,
                dead=dead,
            )
        )
        self.claimant = f"{info.workflow_run_id}/{info.activity_id}#{info.attempt}"
        self.last_look = LastLook(
            partial(self.store.mark_sending, self.claimant), partial(self.store.unmark_sending, self.claimant)
        )
        details = info.heartbeat_details
        self.resumed_from = str(details[0]) if details else None
        self.cursor = self.resumed_from or self.store.first_cursor
        self.deferred = 0
        self.awaited: dict[int, Target] = {}
        """Targets whose claim another attempt marked as being sent and may still settle."""
        self.quiet: set[str] = set()
        """Targets claimed from an attempt that may have sent them: sent without the alert."""
        self.quiet_bodies: tuple[bytes, ...] = ()
        """The push without its alert (`PushInput.resent_quietly`), or its bodies as they are."""
        self.log = log.bind(fixture_id=push.fixture_id, event_key=push.event_key, effect=push.effect)

    async def run(self) -> PushResult:
        """The attempt, heartbeating from its first statement: any of them may wait out a Postgres
        outage (`activities.push.store.OUTAGE_PATIENCE_S`)."""
        async with self._heartbeating():
            return await self._run()

    async def _run(self) -> PushResult:
        names = await self.store.fixture_names()
        if names is None:
            raise ApplicationError(
                f"no fixture {self.push.fixture_id}", type=UNKNOWN_FIXTURE, non_retryable=True
            )
        if self.push.kind == "start" and self.resumed_from is None:
            # Only a walk from the first follower covers every follow the mark stands for: a
            # retry resumes at its cursor, and a follow behind it whose signal was lost would
            # lose its last claim on a walk (CI's soak of 2026-12-06, seed 18).
            await self.store.clear_followers_waiting()
        payload = build(self.push, names, self.push.fixture_id)
        bodies = variants(payload)
        self.quiet_bodies = bodies
        if self.push.resent_quietly:
            quiet = self.push.model_copy(update={"alert": False})
            self.quiet_bodies = variants(build(quiet, names, self.push.fixture_id))
        self.log.info(
            "push.fanout_started",
            attempt=activity.info().attempt,
            resumed_from=self.resumed_from,
            payload_bytes=len(bodies[0]) if bodies else None,
        )
        started = time.monotonic()
        state = payload["aps"]["content-state"]
        try:
            await self._walk(bodies, state)
            if self.push.kind == "end":
                await self._walk_late_reports(bodies, state)
            await self._await_claimants(bodies, state)
            if self.push.kind == "end":
                await self.store.close_remaining(claimed_too=True)
        except asyncio.CancelledError:
            self.log.warning(
                "push.fanout_stopped", cursor=self.cursor, seconds=round(time.monotonic() - started, 3)
            )
            raise
        result = await self.store.totals(self.deferred)
        took = time.monotonic() - started
        metrics().push_fanout_duration.record(timedelta(seconds=took), {"kind": self.push.kind})
        self.log.info("push.fanout_done", seconds=round(took, 3), **result.model_dump())
        return result

    async def _walk(self, bodies: tuple[bytes, ...], state: dict[str, object]) -> None:
        """Every batch, in overlapping stages: while batch k is being sent, batch k+1 is sent too
        (the in-flight limit is shared) and batch k+2 is loaded and claimed; batch k is written
        while the next ones are sent.

        Writes happen in batch order, and the cursor moves past a batch only once it and every
        batch before it are written in full (a batch with routine updates still waiting holds it).
        """
        upcoming: asyncio.Task[_Prepared] | None = asyncio.create_task(self._prepare(self.cursor, state))
        in_flight: deque[tuple[_Prepared, _Sending]] = deque()
        writing: asyncio.Task[None] | None = None
        try:
            while upcoming is not None or in_flight:
                while upcoming is not None and len(in_flight) < SENDING_BATCHES:
                    prepared = await asyncio.shield(upcoming)
                    upcoming = (
                        None if prepared.last else asyncio.create_task(self._prepare(prepared.cursor, state))
                    )
                    in_flight.append((prepared, self._launch(prepared.claimed, bodies)))
                prepared, sending = in_flight.popleft()
                if writing is not None and writing.done():
                    writing.result()  # a failed write stops the walk
                results = await self._collect(sending, [other for _, other in in_flight])
                failure = self._failure(results)
                hold = failure is not None or bool(prepared.waiting)
                writing = asyncio.create_task(
                    self._write(writing, results, None if hold else prepared.cursor)
                )
                if failure is not None:
                    raise failure
                if prepared.waiting:
                    await asyncio.shield(writing)
                    await self._catch_up(prepared.waiting, bodies, state)
                    self._advance(prepared.cursor)
            if writing is not None:
                await asyncio.shield(writing)
        except BaseException:
            await self._unwind(upcoming, [sending for _, sending in in_flight], writing)
            raise

    async def _walk_late_reports(self, bodies: tuple[bytes, ...], state: dict[str, object]) -> None:
        """After an `end`'s walk, before the claims it awaits are settled: close, and walk again.

        A phone can report its activity's update token while the walk runs, past the batch that
        would have held it (the soak found those activities marked ended, never sent the end). So
        the walk closes what it reached and what has no token yet (whose late report is refused),
        then walks again: only activities that became reachable meanwhile are left, and after that
        first close none can become so. An activity whose end another attempt still holds claimed
        stays running until the claims are awaited (`_await_claimants`), and only then is the rest
        closed: closed before, an end that attempt then released, or this one left awaited at a
        SIGKILL, was never walked again and stayed on the phone.
        """
        await self.store.close_remaining(claimed_too=False)
        self.cursor = self.store.first_cursor
        await self._walk(bodies, state)

    async def _await_claimants(self, bodies: tuple[bytes, ...], state: dict[str, object]) -> None:
        """Claims another attempt marked as being sent when this one came to them: claimed again
        until their claimant has settled them (sent, or released: then this attempt sends them)
        or `FanoutConfig.claimant_grace` has passed since its mark (then they are in doubt). Only
        an alert or a start waits so. The heartbeat's cursor never passes the first of them
        (`_advance`), so an attempt after this one, should this one die or fail, walks to them
        again: one this attempt could not deliver yet (an APNs outage) fails it, and the
        activity's retry, with its backoff, claims it again."""
        if self.awaited:
            self.log.info(
                "push.awaiting_claimants", targets=len(self.awaited), grace_s=self.config.claimant_grace
            )
        while self.awaited:
            self._advance(self.cursor)
            await asyncio.sleep(AWAIT_CLAIMANT_EVERY_S)
            targets = list(self.awaited.values())
            self.awaited.clear()
            await self._send_apart(targets, [], bodies, state)

    async def _prepare(self, after: str, state: dict[str, object]) -> _Prepared:
        """Load the batch after `after`, ask pacing about each target, claim those due now."""
        batch = await self.store.load(after, self.config.batch_size)
        send, stale, waiting = self._triage(batch.targets)
        if self.sender is None and (send or waiting):
            raise ApplicationError(
                "this worker has no APNs settings (APNS_KEY_PATH)", type=APNS_CONFIG_ERROR, non_retryable=True
            )
        claimed = await self._claim(send, stale, state)
        return _Prepared(claimed, waiting, batch.cursor, batch.last)

    def _triage(self, targets: list[Target]) -> tuple[list[Target], list[Target], list[tuple[Target, float]]]:
        now = time.time()
        send: list[Target] = []
        stale: list[Target] = []
        waiting: list[tuple[Target, float]] = []
        for target in targets:
            decision = decide(target.last, self.push, now, self.config.min_update_interval)
            if decision.action == "send":
                send.append(target)
            elif decision.action == "stale":
                stale.append(target)
            else:
                waiting.append((target, decision.until or now))
        return send, stale, waiting

    async def _catch_up(
        self, waiting: list[tuple[Target, float]], bodies: tuple[bytes, ...], state: dict[str, object]
    ) -> None:
        """Routine updates not due yet: wait for the earliest, ask pacing again (a newer state may
        have gone out meanwhile), send those due, until none is left."""
        while waiting:
            self.deferred += len(waiting)
            await asyncio.sleep(max(0.0, min(until for _, until in waiting) - time.time()))
            send, stale, waiting = self._triage(await self.store.reload([target for target, _ in waiting]))
            await self._send_apart(send, stale, bodies, state)

    async def _send_apart(
        self, send: list[Target], stale: list[Target], bodies: tuple[bytes, ...], state: dict[str, object]
    ) -> None:
        """Claim, send and settle a few targets outside the walk's overlapping batches; stop the
        attempt if any of them failed (`_failure`)."""
        claimed = await self._claim(send, stale, state)
        results = await self._collect(self._launch(claimed, bodies), [])
        await _to_the_end(self._settle(results))
        failure = self._failure(results)
        if failure is not None:
            raise failure

    async def _write(
        self, previous: asyncio.Task[None] | None, results: list[tuple[Target, Delivery]], cursor: str | None
    ) -> None:
        """Write one batch's outcomes after the previous batch's; then move the cursor past it."""
        problem: BaseException | None = None
        if previous is not None:
            await asyncio.wait({previous})
            problem = asyncio.CancelledError() if previous.cancelled() else previous.exception()
        await self._settle(results)
        if problem is not None:
            raise problem
        if cursor is not None:
            self._advance(cursor)

    async def _settle(self, results: list[tuple[Target, Delivery]]) -> None:
        """Write outcomes; then the worker's memory knows Postgres has the deaths among them."""
        await self.deaths.finish()
        await self.store.settle(results, self.claimant, current_trace_id())
        self.dead.settled(target.token for target, delivery in results if delivery.outcome == "dead")

    def _advance(self, cursor: str) -> None:
        """Heartbeat `cursor`, never past a claim this attempt still awaits (`_await_claimants`)."""
        self.cursor = self.store.resume_point(cursor, self.awaited.values())
        activity.heartbeat(self.cursor)

    async def _unwind(
        self,
        upcoming: asyncio.Task[_Prepared] | None,
        in_flight: list[_Sending],
        writing: asyncio.Task[None] | None,
    ) -> None:
        """Stopping: drain the batches still sending, stop preparing the next batch (a load waiting
        out a Postgres outage would hold the stop up; a claim made meanwhile is released by
        `_claim`), release what it claimed, and let the writes already begun finish."""
        self.stopping.set()
        for sending in in_flight:
            await self._drain(sending)
        if upcoming is not None:
            upcoming.cancel()
            await asyncio.wait({upcoming})
            if not upcoming.cancelled() and upcoming.exception() is None:
                claimed = upcoming.result().claimed
                released = [(target, Delivery("released", (), reason="stopping")) for target in claimed]
                await _to_the_end(self.store.settle(released, self.claimant, current_trace_id()))
        if writing is not None:
            await asyncio.wait({writing})
            if not writing.cancelled() and writing.exception() is not None:
                self.log.warning("push.write_failed", error=repr(writing.exception()))

    async def _claim(self, send: list[Target], stale: list[Target], state: dict[str, object]) -> list[Target]:
        """Claim in the gate; if cancelled meanwhile, finish the write and release what it claimed."""
        claiming = asyncio.ensure_future(self.store.claim(send, stale, self.claimant, state))
        try:
            claims = await asyncio.shield(claiming)
            self.claimed_here.claimed(
                (target.live_activity_id for target in claims.mine), self.push.timestamp
            )
            self.awaited.update((target.live_activity_id, target) for target in claims.awaited)
            self.quiet.update(claims.quiet)
            return claims.mine
        except asyncio.CancelledError:
            claims = await claiming
            released = [(target, Delivery("released", (), reason="stopping")) for target in claims.mine]
            await self.store.settle(released, self.claimant, current_trace_id())
            raise

    def _launch(self, targets: list[Target], bodies: tuple[bytes, ...]) -> _Sending:
        """Start delivering to every target (the in-flight limit paces them); one this attempt took
        over from an attempt that may have sent it goes without the alert (`Claims.quiet`)."""
        if not targets:
            return {}
        assert self.sender is not None, "checked before claiming"
        sender, push = self.sender, self.push
        expiration = push.timestamp + push.stale_after_seconds
        return {
            asyncio.create_task(
                self._deliver(
                    target,
                    sender.deliver(
                        target.token,
                        self.quiet_bodies if target.key in self.quiet else bodies,
                        priority=push.priority,
                        expiration=expiration,
                        resend_if_unknown=push.repeatable or target.key in self.quiet,
                        look=partial(self.last_look.look, target.live_activity_id),
                        unmark=partial(self.last_look.unmark, target.live_activity_id),
                        read_at=target.read_at,
                        claimed_since=partial(
                            self.claimed_here.newer_than, target.live_activity_id, push.timestamp
                        ),
                    ),
                )
            ): target
            for target in targets
        }

    async def _deliver(self, target: Target, delivering: Coroutine[None, None, Delivery]) -> Delivery:
        """One target's delivery; a death APNs answered goes to Postgres at once (`DeathWriter`)."""
        delivery = await delivering
        if delivery.outcome == "dead" and delivery.status is not None:
            self.deaths.died(target, delivery)
        return delivery

    async def _collect(self, sending: _Sending, others: list[_Sending]) -> list[tuple[Target, Delivery]]:
        """Wait for one batch's outcomes; when cancelled, drain it and the `others` in flight, then stop."""
        if sending:
            try:
                await asyncio.wait(sending.keys())
            except asyncio.CancelledError:
                self.stopping.set()
                for batch in (sending, *others):
                    await self._drain(batch)
                raise
        return [(target, task.result()) for task, target in sending.items()]

    async def _drain(self, sending: _Sending) -> None:
        """Let requests in flight be answered (the rest stop before sending), then record every
        outcome (unanswered = in doubt). The batch is emptied: drained once only."""
        if not sending:
            return
        _, late = await asyncio.wait(sending.keys(), timeout=self.config.drain_timeout)
        for task in late:
            task.cancel()
        await asyncio.wait(sending.keys())
        results = [
            (target, task.result() if not task.cancelled() else Delivery("in_doubt", (), reason="cancelled"))
            for task, target in sending.items()
        ]
        sending.clear()
        await _to_the_end(self._settle(results))
        counts: dict[str, int] = {}
        for _, delivery in results:
            counts[delivery.outcome] = counts.get(delivery.outcome, 0) + 1
        self.log.info("push.fanout_drained", **counts)

    def _failure(self, results: list[tuple[Target, Delivery]]) -> ApplicationError | None:
        """Why to stop after this batch (once it is written), if at all: our own mistake (not
        retried), or pushes APNs did not take yet (the activity is retried from the cursor)."""
        config_errors = [d for _, d in results if d.stop_all]
        if config_errors:
            first = config_errors[0]
            self.log.error("push.apns_config_error", status=first.status, reason=first.reason)
            return ApplicationError(
                f"APNs refused our request: {first.status} {first.reason}",
                type=APNS_CONFIG_ERROR,
                non_retryable=True,
            )
        released = sum(1 for _, d in results if d.outcome == "released")
        if released:
            return ApplicationError(
                f"{released} pushes not accepted by APNs yet; retrying from the last written batch"
            )
        return None

    @contextlib.asynccontextmanager
    async def _heartbeating(self) -> AsyncIterator[None]:
        """Heartbeat the cursor while waiting on APNs, on pacing or on Postgres, not only between
        batches."""

        async def beat() -> None:
            while True:
                await asyncio.sleep(self.config.heartbeat_every)
                activity.heartbeat(self.cursor)

        task = asyncio.create_task(beat())
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


async def _to_the_end(write: Coroutine[object, object, None]) -> None:
    """Finish a database write even when cancelled meanwhile (then re-raise the cancellation)."""
    task = asyncio.ensure_future(write)
    try:
        await asyncio.shield(task)
    except asyncio.CancelledError:
        await task
        raise
