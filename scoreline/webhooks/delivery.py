"""The delivery loop: lease due messages, POST each one, record every attempt, back off on failure.

Concurrency is bounded twice: `concurrency` POSTs in flight in all, `per_endpoint` per endpoint
(the claim asks for no more than each endpoint has room for). Each leased match of an endpoint is
its own task, which sends the match's leased messages in seq order, each only after the one
before was answered 2xx, and stops at the first that was not (or after `CHAIN_FOR`), releasing the
rest: a match's consecutive changes need no database round trip between them. A receiver that
times out holds at most its endpoint's slots, never another endpoint's, and a failing match never
holds another match (each match's head is leased on its own). Answers are recorded in batches by
one recorder task; a task's slot is freed once its answers are recorded, which is also what lets
the claim see that match's next seq.

A message that has failed for `retry_for` pauses its endpoint (logged once, counted by
`scoreline_webhook_pauses`): nothing is dropped, and a resume sends from that message on.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter
from dataclasses import dataclass
from datetime import timedelta
from typing import Final

from sqlalchemy.ext.asyncio import AsyncEngine

from scoreline.logging import get_logger
from scoreline.metrics.instruments import metrics
from scoreline.webhooks.backoff import next_delay, parse_retry_after
from scoreline.webhooks.claims import (
    Claimed,
    Outcome,
    claim,
    pause_failing,
    record,
    release,
    seconds_to_next_due,
)
from scoreline.webhooks.endpoints import signing_secrets
from scoreline.webhooks.sender import Answer, Sender
from scoreline.webhooks.signing import message_id

log = get_logger(__name__)

RECORD_BATCH: Final = 500
LEASE_MARGIN: Final = timedelta(seconds=30)
"""A lease outlives the send's deadline by this much, so a slow recorder never lets a second send start."""
CHAIN: Final = 32
"""At most this many messages of one match leased and sent by one task."""
CHAIN_FOR: Final = 2.0
"""Seconds after its claim that a task still starts a send: far inside `LEASE_MARGIN`, so each send
ends before its lease does, and a pause or a secret rotation takes effect within about this long."""


@dataclass(frozen=True, slots=True)
class _Done:
    """What one task did: its answers, and the leased messages it did not send."""

    endpoint_id: int
    outcomes: list[Outcome]
    released: list[tuple[int, int, int]]


@dataclass(frozen=True, slots=True)
class DeliveryOptions:
    retry_for: timedelta
    backoff_first: timedelta
    backoff_cap: timedelta
    timeout: timedelta
    concurrency: int
    per_endpoint: int
    idle_check: timedelta
    """The longest the loop sleeps without looking for due messages (a wake-up may come sooner)."""


class Deliverer:
    """`run()` until cancelled; `wake()` when new messages may be due (the filler calls it)."""

    def __init__(self, engine: AsyncEngine, sender: Sender, options: DeliveryOptions) -> None:
        self._engine = engine
        self._sender = sender
        self._options = options
        self._wake = asyncio.Event()
        self._answers: asyncio.Queue[_Done] = asyncio.Queue()
        self._in_flight: Counter[int] = Counter()
        self._tasks: set[asyncio.Task[None]] = set()

    def wake(self) -> None:
        self._wake.set()

    async def run(self) -> None:
        recorder = asyncio.create_task(self._record_forever(), name="webhook-recorder")
        try:
            await self._claim_forever()
        finally:
            recorder.cancel()
            for task in list(self._tasks):
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await recorder
            await asyncio.gather(*self._tasks, return_exceptions=True)
            self._in_flight.clear()

    async def _claim_forever(self) -> None:
        options = self._options
        lease = options.timeout + LEASE_MARGIN
        while True:
            self._wake.clear()
            free = options.concurrency - sum(self._in_flight.values())
            claimed: list[Claimed] = []
            if free > 0:
                claimed_at = time.monotonic()
                async with self._engine.connect() as conn:
                    claimed = await claim(
                        conn,
                        limit=free,
                        per_endpoint=options.per_endpoint,
                        busy={k: v for k, v in self._in_flight.items() if v},
                        lease=lease,
                        chain=CHAIN,
                    )
                    await conn.commit()
                    wait = None if claimed else await seconds_to_next_due(conn)
                chains: dict[tuple[int, int], list[Claimed]] = {}
                for message in claimed:  # sorted: each match's head, then its followers
                    chains.setdefault((message.endpoint_id, message.fixture_id), []).append(message)
                for endpoint_id, _fixture_id in chains:
                    self._in_flight[endpoint_id] += 1
                for messages in chains.values():
                    task = asyncio.create_task(self._send_chain(messages, claimed_at))
                    self._tasks.add(task)
                    task.add_done_callback(self._tasks.discard)
                if claimed:
                    continue
            else:
                wait = None
            idle = options.idle_check.total_seconds()
            timeout = idle if wait is None else min(max(wait, 0.001), idle)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(timeout):
                    await self._wake.wait()

    async def _send_chain(self, messages: list[Claimed], claimed_at: float) -> None:
        """Send one match's leased messages in order while each is answered 2xx and time is left."""
        outcomes: list[Outcome] = []
        for message in messages:
            if outcomes and (not outcomes[-1].delivered or time.monotonic() - claimed_at > CHAIN_FOR):
                break
            outcomes.append(await self._send(message))
        released = [(m.endpoint_id, m.fixture_id, m.seq) for m in messages[len(outcomes) :]]
        self._answers.put_nowait(_Done(messages[0].endpoint_id, outcomes, released))

    async def _send(self, message: Claimed) -> Outcome:
        msg_id = message_id(message.endpoint_id, message.fixture_id, message.seq)
        keys = signing_secrets(
            message.secret, message.previous_secret, message.previous_secret_until, message.now
        )
        answer = await self._sender.post(message.url, msg_id, message.body, keys)
        return self._outcome(message, msg_id, answer)

    def _outcome(self, message: Claimed, msg_id: str, answer: Answer) -> Outcome:
        options = self._options
        retry_in = timedelta(0)
        if not answer.delivered:
            retry_after = parse_retry_after(answer.retry_after, message.now)
            retry_in = next_delay(
                message.attempts + 1, options.backoff_first, options.backoff_cap, retry_after
            )
        outcome = (
            "delivered" if answer.delivered else ("failed" if answer.status is not None else "no_answer")
        )
        metrics().webhook_deliveries.add(1, {"outcome": outcome})
        return Outcome(
            endpoint_id=message.endpoint_id,
            fixture_id=message.fixture_id,
            seq=message.seq,
            message_id=msg_id,
            status=answer.status,
            latency_ms=answer.latency_ms,
            head=answer.head,
            error=answer.error,
            delivered=answer.delivered,
            retry_in=retry_in,
        )

    async def _record_forever(self) -> None:
        while True:
            batch = [await self._answers.get()]
            answers = len(batch[0].outcomes)
            while answers < RECORD_BATCH and not self._answers.empty():
                batch.append(self._answers.get_nowait())
                answers += len(batch[-1].outcomes)
            await self._record(
                [outcome for done in batch for outcome in done.outcomes],
                [key for done in batch for key in done.released],
            )
            for done in batch:
                self._in_flight[done.endpoint_id] -= 1
            self._wake.set()

    async def _record(self, batch: list[Outcome], released: list[tuple[int, int, int]]) -> None:
        """Write the batch, retrying until Postgres takes it: an answer is never forgotten while
        this process lives (if it dies, the lease runs out and the message is sent again)."""
        while True:
            try:
                async with self._engine.begin() as conn:
                    await release(conn, released)
                    expired = await record(conn, batch, self._options.retry_for)
                    paused = [
                        endpoint_id
                        for endpoint_id in sorted({e for e, _, _ in expired})
                        if await pause_failing(conn, endpoint_id, self._pause_reason(expired, endpoint_id))
                    ]
            except Exception as error:  # noqa: BLE001 - the database went away: keep the answers, retry
                log.warning("webhooks.record_failed", error=f"{type(error).__name__}: {error}", retry_in=1.0)
                await asyncio.sleep(1.0)
                continue
            for endpoint_id in paused:
                metrics().webhook_pauses.add(1)
                log.warning(
                    "webhooks.endpoint_paused",
                    endpoint_id=endpoint_id,
                    reason=self._pause_reason(expired, endpoint_id),
                )
            return

    def _pause_reason(self, expired: list[tuple[int, int, int]], endpoint_id: int) -> str:
        fixture_id, seq = next((f, s) for e, f, s in expired if e == endpoint_id)
        return (
            f"fixture {fixture_id} seq {seq} failed for {self._options.retry_for} without a 2xx; "
            "resume to send again from there"
        )
