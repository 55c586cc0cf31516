"""The SQL of delivery: take the due messages, and record what each attempt got.

Order per match: of each (endpoint, fixture) only the lowest undelivered seq is ever taken (its
head), so seq n+1 goes only after seq n was answered 2xx. A head is due when its
`next_attempt_at` and its commit time plus the endpoint's delay have passed and the endpoint is
not paused.

A claim leases each chosen head together with the messages due after it in its match (at most
`chain` in all): they go in order in one task, each only after the one before was answered 2xx,
without a round trip to the database between them. Only a head is ever chosen, so the followers
need no lock of their own; one the task did not send (a failure before it, or out of time) is
`release`d, so its lease does not delay it once it is the head.

Taking is a lease, not a lock held across the POST: one short statement picks due heads
(`FOR UPDATE SKIP LOCKED`, so processes claiming at once never take the same row) and sets
`leased_until` past the send's deadline on the chain it takes. No claim takes a match while any of
its messages is leased, whatever a resume or a redelivery made due meanwhile, so a match is never
sent by two tasks at once; if this process dies mid-send the lease runs out and another sends it
again, with the same `webhook-id`. The delay of a message is its endpoint's or its partner's,
whichever is longer. A transaction held open for every POST would instead
hold a connection per request and, worse, hold back every outbox reader's horizon
(`scoreline.outbox.reader`) for as long as the slowest receiver takes.

Recording is batched (`record`): one statement per batch of answers updates the messages and
appends the `webhook_attempt` log rows, and returns the messages that have now failed for longer
than the retry period, whose endpoints `pause_failing` pauses.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

_CLAIM = text(
    """
    WITH heads AS (
        SELECT DISTINCT ON (m.endpoint_id, m.fixture_id)
               m.endpoint_id, m.fixture_id, m.seq, m.next_attempt_at, m.committed_at,
               GREATEST(e.delay_seconds, p.delay_seconds) AS delay_seconds
        FROM webhook_message m
        JOIN webhook_endpoint e ON e.id = m.endpoint_id
        JOIN partner p ON p.id = e.partner_id
        WHERE m.delivered_at IS NULL AND e.paused_at IS NULL
        ORDER BY m.endpoint_id, m.fixture_id, m.seq
    ), ranked AS (
        SELECT h.endpoint_id, h.fixture_id, h.seq, h.next_attempt_at, h.delay_seconds,
               row_number() OVER (PARTITION BY h.endpoint_id ORDER BY h.next_attempt_at, h.fixture_id) AS rank
        FROM heads h
        WHERE h.next_attempt_at <= now()
          AND h.committed_at + make_interval(secs => h.delay_seconds) <= now()
          AND NOT EXISTS (
              SELECT 1 FROM webhook_message l
              WHERE l.endpoint_id = h.endpoint_id AND l.fixture_id = h.fixture_id
                AND l.delivered_at IS NULL AND l.leased_until > now()
          )
    ), chosen AS (
        SELECT m.endpoint_id, m.fixture_id, m.seq, r.delay_seconds
        FROM webhook_message m
        JOIN ranked r USING (endpoint_id, fixture_id, seq)
        LEFT JOIN unnest(CAST(:busy_ids AS bigint[]), CAST(:busy_counts AS int[])) AS b(endpoint_id, n)
               ON b.endpoint_id = r.endpoint_id
        WHERE r.rank <= :per_endpoint - coalesce(b.n, 0)
          AND m.delivered_at IS NULL AND m.next_attempt_at <= now()
          AND (m.leased_until IS NULL OR m.leased_until <= now())
        ORDER BY r.next_attempt_at
        LIMIT :limit
        FOR UPDATE OF m SKIP LOCKED
    ), chain AS (
        SELECT s.endpoint_id, s.fixture_id, s.seq
        FROM chosen c
        CROSS JOIN LATERAL (
            SELECT n.endpoint_id, n.fixture_id, n.seq
            FROM webhook_message n
            WHERE n.endpoint_id = c.endpoint_id AND n.fixture_id = c.fixture_id AND n.seq >= c.seq
              AND n.delivered_at IS NULL
              AND n.committed_at + make_interval(secs => c.delay_seconds) <= now()
            ORDER BY n.seq
            LIMIT :chain
        ) s
    )
    UPDATE webhook_message m
    SET leased_until = now() + make_interval(secs => :lease)
    FROM chain c, webhook_endpoint e
    WHERE m.endpoint_id = c.endpoint_id AND m.fixture_id = c.fixture_id AND m.seq = c.seq
      AND e.id = m.endpoint_id
    RETURNING m.endpoint_id, m.fixture_id, m.seq, m.body::text AS body, m.attempts, e.url,
              e.secret, e.previous_secret, e.previous_secret_until, now() AS now
    """
)
_NEXT_DUE = text(
    """
    SELECT EXTRACT(epoch FROM min(GREATEST(
               h.next_attempt_at,
               h.committed_at + make_interval(secs => h.delay_seconds),
               (SELECT max(l.leased_until) FROM webhook_message l
                WHERE l.endpoint_id = h.endpoint_id AND l.fixture_id = h.fixture_id
                  AND l.delivered_at IS NULL)
           )) - clock_timestamp())::float8
    FROM (
        SELECT DISTINCT ON (m.endpoint_id, m.fixture_id)
               m.endpoint_id, m.fixture_id, m.next_attempt_at, m.committed_at,
               GREATEST(e.delay_seconds, p.delay_seconds) AS delay_seconds
        FROM webhook_message m
        JOIN webhook_endpoint e ON e.id = m.endpoint_id
        JOIN partner p ON p.id = e.partner_id
        WHERE m.delivered_at IS NULL AND e.paused_at IS NULL
        ORDER BY m.endpoint_id, m.fixture_id, m.seq
    ) h
    """
)
_RECORD = text(
    """
    WITH answers AS (
        SELECT * FROM unnest(
            CAST(:endpoint_ids AS bigint[]), CAST(:fixture_ids AS bigint[]), CAST(:seqs AS bigint[]),
            CAST(:message_ids AS text[]), CAST(:statuses AS int[]), CAST(:latencies AS int[]),
            CAST(:heads AS text[]), CAST(:errors AS text[]), CAST(:delivered AS boolean[]),
            CAST(:retry_in AS float8[])
        ) AS a(endpoint_id, fixture_id, seq, message_id, status, latency_ms, head, error, delivered, retry_in)
    ), logged AS (
        INSERT INTO webhook_attempt
            (endpoint_id, fixture_id, seq, message_id, status, latency_ms, answer_head, error)
        SELECT endpoint_id, fixture_id, seq, message_id, status, latency_ms, head, error FROM answers
    ), updated AS (
        UPDATE webhook_message m
        SET attempts = m.attempts + 1,
            delivered_at = CASE WHEN a.delivered THEN now() END,
            next_attempt_at = CASE WHEN a.delivered THEN m.next_attempt_at
                                   ELSE now() + make_interval(secs => a.retry_in) END,
            failing_since = CASE WHEN a.delivered THEN m.failing_since
                                 ELSE coalesce(m.failing_since, now()) END,
            leased_until = NULL
        FROM answers a
        WHERE m.endpoint_id = a.endpoint_id AND m.fixture_id = a.fixture_id AND m.seq = a.seq
          AND m.delivered_at IS NULL  -- a late answer never takes back a delivery
        RETURNING m.endpoint_id, m.fixture_id, m.seq, m.failing_since, a.delivered
    )
    SELECT endpoint_id, fixture_id, seq FROM updated
    WHERE NOT delivered AND failing_since <= now() - make_interval(secs => :retry_for)
    """
)
_RELEASE = text(
    """
    UPDATE webhook_message m SET leased_until = NULL
    FROM unnest(CAST(:endpoint_ids AS bigint[]), CAST(:fixture_ids AS bigint[]), CAST(:seqs AS bigint[]))
         AS r(endpoint_id, fixture_id, seq)
    WHERE m.endpoint_id = r.endpoint_id AND m.fixture_id = r.fixture_id AND m.seq = r.seq
      AND m.delivered_at IS NULL
    """
)
_PAUSE = text(
    """
    UPDATE webhook_endpoint SET paused_at = now(), paused_reason = :reason
    WHERE id = :endpoint_id AND paused_at IS NULL
    RETURNING id
    """
)


@dataclass(frozen=True, slots=True)
class Claimed:
    """A message leased for one attempt, with what sending it needs."""

    endpoint_id: int
    fixture_id: int
    seq: int
    body: bytes
    attempts: int
    """Attempts before this one."""
    url: str
    secret: str
    previous_secret: str | None
    previous_secret_until: datetime | None
    now: datetime


@dataclass(frozen=True, slots=True)
class Outcome:
    """One attempt's result, as the delivery log keeps it."""

    endpoint_id: int
    fixture_id: int
    seq: int
    message_id: str
    status: int | None
    latency_ms: int
    head: str
    error: str | None
    delivered: bool
    retry_in: timedelta
    """When not delivered: how long until the next attempt."""


async def claim(
    conn: AsyncConnection,
    *,
    limit: int,
    per_endpoint: int,
    busy: Mapping[int, int],
    lease: timedelta,
    chain: int = 1,
) -> list[Claimed]:
    """Lease at most `limit` due heads, at most `per_endpoint` in flight per endpoint counting `busy`,
    each with the messages due after it in its match, `chain` in all: sorted by (endpoint, fixture,
    seq), a head first, then its followers."""
    rows = await conn.execute(
        _CLAIM,
        {
            "chain": chain,
            "limit": limit,
            "per_endpoint": per_endpoint,
            "busy_ids": list(busy),
            "busy_counts": list(busy.values()),
            "lease": lease.total_seconds(),
        },
    )
    return [
        Claimed(
            endpoint_id=row.endpoint_id,
            fixture_id=row.fixture_id,
            seq=row.seq,
            body=row.body.encode(),
            attempts=row.attempts,
            url=row.url,
            secret=row.secret,
            previous_secret=row.previous_secret,
            previous_secret_until=row.previous_secret_until,
            now=row.now,
        )
        for row in sorted(rows, key=lambda row: (row.endpoint_id, row.fixture_id, row.seq))
    ]


async def release(conn: AsyncConnection, keys: Sequence[tuple[int, int, int]]) -> None:
    """End the leases of leased followers that were not sent (the head before them was not
    answered 2xx, or the chain ran out of time): due again, for when they are a head."""
    if keys:
        await conn.execute(
            _RELEASE,
            {
                "endpoint_ids": [k[0] for k in keys],
                "fixture_ids": [k[1] for k in keys],
                "seqs": [k[2] for k in keys],
            },
        )


async def seconds_to_next_due(conn: AsyncConnection) -> float | None:
    """Seconds until the earliest head not yet due is due (≤ 0: one is due now); None if none is owed."""
    value = (await conn.execute(_NEXT_DUE)).scalar_one()
    return None if value is None else float(value)


async def record(
    conn: AsyncConnection, outcomes: Sequence[Outcome], retry_for: timedelta
) -> list[tuple[int, int, int]]:
    """Log the attempts and move their messages on; returns (endpoint, fixture, seq) of those that
    have failed for `retry_for` or longer."""
    columns: dict[str, list[Any]] = {
        "endpoint_ids": [o.endpoint_id for o in outcomes],
        "fixture_ids": [o.fixture_id for o in outcomes],
        "seqs": [o.seq for o in outcomes],
        "message_ids": [o.message_id for o in outcomes],
        "statuses": [o.status for o in outcomes],
        "latencies": [o.latency_ms for o in outcomes],
        "heads": [o.head for o in outcomes],
        "errors": [o.error for o in outcomes],
        "delivered": [o.delivered for o in outcomes],
        "retry_in": [o.retry_in.total_seconds() for o in outcomes],
    }
    rows = await conn.execute(_RECORD, {**columns, "retry_for": retry_for.total_seconds()})
    return [(row.endpoint_id, row.fixture_id, row.seq) for row in rows]


async def pause_failing(conn: AsyncConnection, endpoint_id: int, reason: str) -> bool:
    """Pause the endpoint unless it already is; True if this call paused it."""
    return (await conn.execute(_PAUSE, {"endpoint_id": endpoint_id, "reason": reason})).first() is not None
