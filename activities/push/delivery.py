"""Delivering one push to one token: retries, backoff, trimming and token refresh, every attempt kept.

The outcome is what the fan-out writes to the ledger:

- `sent`: APNs answered 200;
- `dead`: the token is dead (400 BadDeviceToken, 410): deactivate it; with no status, Postgres
  had switched it off already when the last look asked (another push got its answer);
- `rejected`: APNs will never take this push (too large even trimmed, not for this topic …);
  with `stop_all`, the cause is ours (key, topic, request shape) and the fan-out stops;
- `released`: not delivered, for a passing reason (5xx, throttling, network, stopping, Postgres
  out of reach for the last look): the ledger claim is released so a later attempt sends it;
- `in_doubt`: sent, never answered, and not safe to send again (an alert or a start: a second one
  would show twice);
- `stale`: not sent (or not sent again) because a newer push has claimed the activity since this
  one did: sent after it, this one would be older than what the device shows (it drops it).
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import Literal

from activities.push.apns import ApnsClient
from activities.push.connection import MaybeSent, NotSent, Withheld
from activities.push.dead_tokens import DeadTokens
from activities.push.last_look import Standing
from activities.push.limiter import AdaptiveLimit
from activities.push.look_lapse import LookLapse
from activities.push.outcomes import Verdict, classify
from scoreline.metrics.instruments import metrics

Outcome = Literal["sent", "dead", "rejected", "released", "in_doubt", "stale"]

LookBeforeSending = Callable[[], Awaitable[Standing]]
"""The last look (`activities.push.last_look`): still the newest claimed, and marked as being sent?"""
Unmark = Callable[[], Awaitable[None]]
"""Take the look's marks off the claim and the activity: APNs answered without delivering (or the
request never left), nothing is on its way."""
ClaimedSince = Callable[[], bool]
"""Whether a newer push has claimed the activity in this worker (`ClaimedHere`): no I/O."""


@dataclass(frozen=True)
class SendPolicy:
    """Retry budget and backoff (seconds); tests shrink the delays."""

    max_attempts: int = 6
    throttle_backoff: float = 1.0
    """First wait after a 429 for a token; doubles with each further 429 for it."""
    error_backoff: float = 0.5
    """First wait after a 5xx or a network failure; doubles likewise."""
    max_backoff: float = 30.0
    longest_held_wait: float = 2.0
    """A push that must not be sent twice (an alert, a start) waits at most this long for its next
    try while its claim is held: a longer wait releases it (settled with its batch; the activity is
    retried from the last written batch and claims it again). A worker SIGKILLed while 50 goal
    alerts waited out an APNs 500 burst left their claims with no answer, in doubt, never sent (the
    soak of 2026-12-02, seed 10); released, a claim is only ever held across a request in flight."""
    look_kept: float = 2.0
    """How long a look's "go" holds: a request that reaches its first byte later than this after
    its look looks again. A worker paused between the two (the soak of 2026-12-04, seed 19: a
    SIGSTOP past the heartbeat timeout) would otherwise send, once resumed, what it looked at
    before the pause: a routine update reached 89 phones 7 s after a newer alert another worker
    had sent meanwhile, and one phone whose token had died in between. Not shorter: a worker
    starved for a second after a Postgres outage (seconds 294 to 297 of the same seed's next run)
    would look again and again, its claims marked all the while, rather than send."""

    behind_wait: tuple[float, float] = (0.02, 0.25)
    """First and longest wait before looking again while an older push's request may still be on
    its way to the activity (`Standing.BEHIND`): mostly until that push's batch is settled (a few
    hundred milliseconds), at most until the activity's mark lapses (three seconds,
    `activities.push.store.SENDING_FENCE_MARGIN_S`; longer while a delivery of that batch backs
    off). The in-flight slot is kept meanwhile: the older push is another fan-out's, with slots of
    its own."""

    def delay(self, base: float, count: int) -> float:
        """Exponential backoff with jitter (half to full), so retries of a batch spread out."""
        return min(self.max_backoff, base * 2.0 ** (count - 1)) * random.uniform(0.5, 1.0)


@dataclass
class _Request:
    """Whether a request of the delivery may be on its way: from its last check's yes (its first
    byte leaves right after) until APNs answers it or it certainly was not sent."""

    on_its_way: bool = False


@dataclass(frozen=True)
class AttemptRecord:
    """One request to APNs (or a failure to make one), for the `push_attempt` table."""

    number: int
    apns_id: str | None
    status: int | None
    reason: str | None
    latency_ms: float
    payload_bytes: int


@dataclass(frozen=True)
class Delivery:
    outcome: Outcome
    attempts: tuple[AttemptRecord, ...]
    status: int | None = None
    reason: str | None = None
    apns_id: str | None = None
    timestamp_ms: int | None = None
    stop_all: bool = False


class Sender:
    """Sends pushes through one `ApnsClient`, sharing an in-flight limit and a stop signal.

    `kind` (start, update, end, alert) labels the `scoreline_pushes_total` series of every answer.
    """

    def __init__(
        self,
        client: ApnsClient,
        policy: SendPolicy,
        limit: AdaptiveLimit,
        stopping: asyncio.Event,
        *,
        kind: str,
        dead: DeadTokens | None = None,
    ) -> None:
        self._client = client
        self._policy = policy
        self._limit = limit
        self._stopping = stopping
        self._kind = kind
        self._dead = dead or DeadTokens()

    async def deliver(
        self,
        device_token: str,
        bodies: tuple[bytes, ...],
        *,
        priority: int,
        expiration: int,
        resend_if_unknown: bool,
        look: LookBeforeSending | None = None,
        unmark: Unmark | None = None,
        claimed_since: ClaimedSince | None = None,
        read_at: float | None = None,
    ) -> Delivery:
        """Send the first of `bodies` (smaller ones follow a 413) until an outcome is certain.

        `resend_if_unknown`: after a timeout or a lost connection, send again (a state-only update,
        which the device shows once however often it comes) or stop as `in_doubt` (alerts, starts).
        `look`: taken before each request, its in-flight slot taken; overtaken, the push is `stale`
        (the lanes run side by side, so a newer push can claim the activity while this one waits
        for a slot or out an outage); gone (Postgres switched the token off), `dead`; unknown,
        `released`; behind (an older push's request may still be on its way), taken again
        shortly (`SendPolicy.behind_wait`). `claimed_since` is asked after it, right before the
        request, where a look older than `SendPolicy.look_kept` is taken again (the worker was
        paused or starved in between); `unmark` is awaited once the look is that old and its
        request has not reached that point (`LookLapse`), and after every answer that did not
        deliver, before it waits or gives up: a worker killed meanwhile leaves its claim for the
        next attempt to send, not in doubt, and a newer push does not wait for it. Before each
        attempt, and again right before its request, the worker's `DeadTokens` is asked too: a
        token another push found dead since `read_at` (when Postgres was read for this target; by
        default, this call), or whose death Postgres did not have yet then, is `dead` without
        another request.

        Cancelled (a stopping fan-out gives up waiting for it), it is `released` when no request
        of its is on its way (the soak of 2026-12-06, seed 23: 60 goal alerts of a fan-out
        stopped after its worker's pause, cancelled while they waited for a connection through a
        GOAWAY burst, were written in doubt, never sent); with one on its way it stays cancelled,
        which the fan-out writes `in_doubt`.
        """
        if not bodies:
            return Delivery("rejected", (), reason="PayloadTooLarge")
        attempts: list[AttemptRecord] = []
        request = _Request()
        try:
            return await self._deliver(
                device_token,
                bodies,
                priority,
                expiration,
                resend_if_unknown,
                look,
                unmark,
                claimed_since,
                read_at,
                attempts,
                request,
            )
        except asyncio.CancelledError:
            if request.on_its_way:
                raise
            return Delivery("released", tuple(attempts), reason="stopped before its request")

    async def _deliver(
        self,
        device_token: str,
        bodies: tuple[bytes, ...],
        priority: int,
        expiration: int,
        resend_if_unknown: bool,
        look: LookBeforeSending | None,
        unmark: Unmark | None,
        claimed_since: ClaimedSince | None,
        read_at: float | None,
        attempts: list[AttemptRecord],
        request: _Request,
    ) -> Delivery:
        level = throttles = errors = 0
        read_at = time.monotonic() if read_at is None else read_at
        for number in range(1, self._policy.max_attempts + 1):
            if (dead := self._known_dead(device_token, read_at, attempts)) is not None:
                return dead
            body = bodies[level]
            async with self._limit.slot():
                if self._stopping.is_set():
                    return Delivery("released", tuple(attempts), reason="stopping")
                # Looked with the in-flight slot taken; what can change while the request still
                # waits for its connection and stream is asked again right before it (`go`).
                looked_at = time.monotonic()  # what the look says is at most this old
                standing = Standing.GO if look is None else await look()
                wait = self._policy.behind_wait[0]
                while standing is Standing.BEHIND:
                    assert look is not None, "only a look finds an older push on its way"
                    if not await self._pause(wait):
                        return Delivery("released", tuple(attempts), reason="stopping")
                    wait = min(2 * wait, self._policy.behind_wait[1])
                    looked_at = time.monotonic()
                    standing = await look()
                if standing is Standing.OVERTAKEN:
                    return Delivery("stale", tuple(attempts), reason="superseded")
                if standing is Standing.UNKNOWN:
                    return Delivery("released", tuple(attempts), reason="last look failed")
                if standing is Standing.GONE:
                    return Delivery("dead", tuple(attempts), reason="token switched off")
                withheld: Delivery | None = None
                lapse = (
                    None
                    if look is None
                    else LookLapse(looked_at, self._policy.look_kept, partial(self._unmark, unmark))
                )

                def go(lapse: LookLapse | None = lapse) -> bool:
                    """Asked once a stream is free and the send window takes the whole request,
                    with nothing between the answer and the request going out."""
                    nonlocal withheld
                    if lapse is not None and not lapse.holds():
                        return False
                    withheld = self._withheld(device_token, read_at, attempts, claimed_since)
                    request.on_its_way = withheld is None
                    return request.on_its_way

                try:
                    try:
                        answer = await self._client.send(
                            device_token, body, priority=priority, expiration=expiration, go=go
                        )
                        request.on_its_way = False
                    except (Withheld, NotSent):
                        request.on_its_way = False
                        raise
                    finally:
                        if lapse is not None:
                            await lapse.close()
                except Withheld:
                    if lapse is not None and lapse.lapsed:
                        # Nothing was sent, and the lapse took the marks off (a worker killed
                        # meanwhile leaves the claim to the next attempt): look again, in a new slot.
                        continue
                    assert withheld is not None, "withheld only when go() said why"
                    return withheld
                except (NotSent, MaybeSent) as error:
                    self._count("connection", "")
                    unknown = isinstance(error, MaybeSent)
                    attempts.append(
                        AttemptRecord(
                            number, None, None, f"{type(error).__name__}: {error}"[:200], 0.0, len(body)
                        )
                    )
                    if unknown and not resend_if_unknown:
                        return Delivery("in_doubt", tuple(attempts), reason=str(error)[:200])
                    await self._unmark(unmark)
                    errors += 1
                    # The first connection-level failure usually means "reconnect": no wait.
                    wait = 0.0 if errors == 1 else self._policy.delay(self._policy.error_backoff, errors)
                    if self._released(wait, resend_if_unknown):
                        return Delivery("released", tuple(attempts), reason="backing off")
                    if not await self._pause(wait):
                        return Delivery("released", tuple(attempts), reason="stopping")
                    continue
            attempts.append(
                AttemptRecord(
                    number, answer.apns_id, answer.status, answer.reason, answer.latency_ms, len(body)
                )
            )
            self._count(str(answer.status), answer.reason or "")
            verdict = classify(answer.status, answer.reason)
            final = Delivery(
                "sent",
                tuple(attempts),
                answer.status,
                answer.reason,
                answer.apns_id,
                answer.timestamp_ms,
            )
            if verdict is Verdict.SENT:
                self._limit.succeeded()
                return final
            if verdict is Verdict.DEACTIVATE:
                self._dead.record(device_token, answer.status, answer.reason, answer.timestamp_ms)
                return replace(final, outcome="dead")
            if verdict is Verdict.REJECT:
                return replace(final, outcome="rejected")
            if verdict is Verdict.CONFIG_ERROR:
                return replace(final, outcome="rejected", stop_all=True)
            # Not delivered, and tried again (or given back): nothing is on its way meanwhile. A
            # dead or rejected push keeps its claim's mark (it is never to be sent again anyway)
            # and the activity's until its batch is settled.
            await self._unmark(unmark)
            if verdict is Verdict.TRIM:
                if level + 1 >= len(bodies):
                    return replace(final, outcome="rejected")
                level += 1
                continue
            delay = 0.0
            if verdict is Verdict.THROTTLED:
                self._limit.throttled()
                throttles += 1
                delay = self._policy.delay(self._policy.throttle_backoff, throttles)
            elif verdict is Verdict.RETRY or (
                verdict is Verdict.REFRESH_TOKEN and not self._client.refresh_token(answer.token)
            ):
                errors += 1
                delay = self._policy.delay(self._policy.error_backoff, errors)
            # REFRESH_TOKEN with a new token and NEW_CONNECTION retry at once, on a new connection.
            if self._released(delay, resend_if_unknown):
                return replace(final, outcome="released")
            if not await self._pause(delay):
                return Delivery("released", tuple(attempts), reason="stopping")
        return Delivery("released", tuple(attempts), reason="attempts exhausted")

    def _withheld(
        self,
        device_token: str,
        read_at: float,
        attempts: list[AttemptRecord],
        claimed_since: ClaimedSince | None,
    ) -> Delivery | None:
        """Why not to send after all, asked with nothing between it and the request: a newer push
        this worker claimed since the look (the soak's seed 14: requests started 155 ms after their
        look; seed 16: a routine update waiting for its connection reached two phones 32 ms after
        the newer alert), or a token death heard since (seed 15: a 410 that came while the push
        waited for its slot)."""
        if claimed_since is not None and claimed_since():
            return Delivery("stale", tuple(attempts), reason="superseded")
        return self._known_dead(device_token, read_at, attempts)

    def _known_dead(
        self, device_token: str, read_at: float, attempts: list[AttemptRecord]
    ) -> Delivery | None:
        """`dead`, without a request, if the worker has heard the token's death since `read_at`."""
        death = self._dead.unknown_to(device_token, read_at)
        if death is None:
            return None
        return Delivery("dead", tuple(attempts), death.status, death.reason, timestamp_ms=death.timestamp_ms)

    @staticmethod
    async def _unmark(unmark: Unmark | None) -> None:
        """Nothing is on its way now: a repeatable push's claims are taken over by the next attempt
        marked or not, but the activity's mark would hold a newer push back (a routine update
        waiting out a 429 burst would hold a goal for seconds)."""
        if unmark is not None:
            await unmark()

    def _released(self, wait: float, resend_if_unknown: bool) -> bool:
        """Whether to give the claim back rather than hold it through `wait` (`longest_held_wait`)."""
        return not resend_if_unknown and wait > self._policy.longest_held_wait

    def _count(self, status: str, reason: str) -> None:
        metrics().pushes.add(1, {"kind": self._kind, "status": status, "reason": reason})

    async def _pause(self, seconds: float) -> bool:
        """Sleep, unless the fan-out is stopping; False when it is."""
        if self._stopping.is_set():
            return False
        if seconds <= 0:
            return True
        try:
            async with asyncio.timeout(seconds):
                await self._stopping.wait()
        except TimeoutError:
            return True
        return False
