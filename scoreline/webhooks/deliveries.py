"""The delivery log and each endpoint's state, as partners and operators read them; redelivery.

Reads only: the delivery engine writes `webhook_message` (what each endpoint is owed, one row per
log entry) and `webhook_attempt` (every POST it made). An endpoint's *lag* is the age of its oldest
owed message: zero when it is caught up, growing while a receiver fails or the endpoint is paused.
`redeliver` is the one write: it makes delivered messages owed again, and the engine sends them as
it sends anything owed, in seq order per match.
"""

from __future__ import annotations

from datetime import datetime
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict
from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncEngine

from scoreline.db.tables import webhook_attempt
from scoreline.feeds.partners import hash_api_key

MAX_PAGE: Final = 200
DEFAULT_PAGE: Final = 50


class NothingOwedError(Exception):
    """Redelivery from a seq the endpoint was never owed (or whose row retention has deleted)."""


class PartnerRef(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: int
    name: str
    active: bool


class Attempt(BaseModel):
    """One POST to an endpoint, as the delivery log shows it."""

    model_config = ConfigDict(frozen=True)

    id: int
    at: datetime
    fixture_id: int
    seq: int
    webhook_id: str
    """The `webhook-id` header: the same on every attempt of one message, so receivers dedupe on it."""
    status: int | None
    """The receiver's HTTP status; None when no answer came (see `error`)."""
    latency_ms: int
    answer_head: str
    """The first bytes of the receiver's answer."""
    error: str | None


class AttemptPage(BaseModel):
    model_config = ConfigDict(frozen=True)

    attempts: list[Attempt]
    next: int | None
    """Pass as `before` for the next (older) page; None on the last page."""


class EndpointState(BaseModel):
    """An endpoint as a partner or operator sees it: where it sends, and how far behind it is."""

    model_config = ConfigDict(frozen=True)

    id: int
    partner: str
    url: str
    delay_seconds: int
    state: Literal["active", "paused"]
    paused_at: datetime | None
    paused_reason: str | None
    owed: int
    """Messages not yet answered 2xx."""
    lag_seconds: float
    """Age of the oldest owed message (0 when nothing is owed)."""
    last_success_at: datetime | None
    last_failure_at: datetime | None
    last_failure: str | None
    """`HTTP 503`, or the network error, of the last attempt without a 2xx."""
    created_at: datetime


class Redelivery(BaseModel):
    model_config = ConfigDict(frozen=True)

    endpoint_id: int
    fixture_id: int
    from_seq: int
    owed_again: int
    """Delivered messages this call made owed again (0 when a previous call already had)."""
    owed: int
    """Messages of the match from `from_seq` on that are now owed."""


_PARTNER_BY_KEY = text("SELECT id, name, active FROM partner WHERE api_key_hash = :hash")
_PARTNER_BY_NAME = text("SELECT id, name, active FROM partner WHERE name = :name")

# One round trip for every endpoint: owed counts come from the partial index of owed rows, the
# last success and failure from a backward walk of the endpoint's attempts (newest first).
_STATES = text(
    """SELECT e.id, p.name AS partner, e.url, e.delay_seconds, e.paused_at, e.paused_reason,
        e.created_at, COALESCE(o.owed, 0) AS owed,
        COALESCE(EXTRACT(EPOCH FROM now() - o.oldest), 0)::float8 AS lag_seconds,
        ok.created_at AS last_success_at, bad.created_at AS last_failure_at,
        bad.status AS last_failure_status, bad.error AS last_failure_error
    FROM webhook_endpoint e
    JOIN partner p ON p.id = e.partner_id
    LEFT JOIN LATERAL (
        SELECT count(*) AS owed, min(m.committed_at) AS oldest FROM webhook_message m
        WHERE m.endpoint_id = e.id AND m.delivered_at IS NULL) o ON true
    LEFT JOIN LATERAL (
        SELECT a.created_at FROM webhook_attempt a
        WHERE a.endpoint_id = e.id AND a.status BETWEEN 200 AND 299
        ORDER BY a.id DESC LIMIT 1) ok ON true
    LEFT JOIN LATERAL (
        SELECT a.created_at, a.status, a.error FROM webhook_attempt a
        WHERE a.endpoint_id = e.id AND (a.status IS NULL OR a.status NOT BETWEEN 200 AND 299)
        ORDER BY a.id DESC LIMIT 1) bad ON true
    WHERE (CAST(:partner_id AS bigint) IS NULL OR e.partner_id = :partner_id)
      AND (CAST(:endpoint_id AS bigint) IS NULL OR e.id = :endpoint_id)
    ORDER BY p.name, e.id"""
)

_FIRST_OWED = text(
    "SELECT 1 FROM webhook_message WHERE endpoint_id = :endpoint AND fixture_id = :fixture AND seq = :seq"
)
# Only delivered rows change: a row still owed keeps its attempts, backoff and `failing_since`, so
# asking twice never stretches a failing message's day of retries.
_OWE_AGAIN = text(
    """UPDATE webhook_message SET delivered_at = NULL, next_attempt_at = now(), attempts = 0,
        failing_since = NULL
    WHERE endpoint_id = :endpoint AND fixture_id = :fixture AND seq >= :seq
      AND delivered_at IS NOT NULL"""
)
_OWED_FROM = text(
    """SELECT count(*) FROM webhook_message
    WHERE endpoint_id = :endpoint AND fixture_id = :fixture AND seq >= :seq AND delivered_at IS NULL"""
)


async def find_partner(engine: AsyncEngine, api_key: str) -> PartnerRef | None:
    """The partner an API key belongs to (revoked ones too, so they get 403 rather than 401)."""
    async with engine.connect() as conn:
        row = (await conn.execute(_PARTNER_BY_KEY, {"hash": hash_api_key(api_key)})).first()
    return None if row is None else PartnerRef(id=row.id, name=row.name, active=row.active)


async def partner_named(engine: AsyncEngine, name: str) -> PartnerRef | None:
    async with engine.connect() as conn:
        row = (await conn.execute(_PARTNER_BY_NAME, {"name": name})).first()
    return None if row is None else PartnerRef(id=row.id, name=row.name, active=row.active)


async def endpoint_states(
    engine: AsyncEngine, *, partner_id: int | None = None, endpoint_id: int | None = None
) -> list[EndpointState]:
    """Every endpoint (or a partner's, or one), by partner name then id, with its lag and owed count."""
    async with engine.connect() as conn:
        rows = (await conn.execute(_STATES, {"partner_id": partner_id, "endpoint_id": endpoint_id})).all()
    return [
        EndpointState(
            id=row.id,
            partner=row.partner,
            url=row.url,
            delay_seconds=row.delay_seconds,
            state="active" if row.paused_at is None else "paused",
            paused_at=row.paused_at,
            paused_reason=row.paused_reason,
            owed=row.owed,
            lag_seconds=max(0.0, row.lag_seconds),
            last_success_at=row.last_success_at,
            last_failure_at=row.last_failure_at,
            last_failure=_failure(row.last_failure_status, row.last_failure_error),
            created_at=row.created_at,
        )
        for row in rows
    ]


async def endpoint_state(
    engine: AsyncEngine, endpoint_id: int, *, partner_id: int | None = None
) -> EndpointState | None:
    """One endpoint's state; None when there is none with that id (for that partner, if given)."""
    found = await endpoint_states(engine, partner_id=partner_id, endpoint_id=endpoint_id)
    return found[0] if found else None


async def attempts(
    engine: AsyncEngine, endpoint_id: int, *, before: int | None = None, limit: int = DEFAULT_PAGE
) -> AttemptPage:
    """An endpoint's attempts, newest first, older than attempt `before` when given.

    Attempt ids grow with time, so the id is the cursor: a page never repeats or skips an attempt
    however many arrive while a partner pages back.
    """
    limit = max(1, min(limit, MAX_PAGE))
    query = select(webhook_attempt).where(webhook_attempt.c.endpoint_id == endpoint_id)
    if before is not None:
        query = query.where(webhook_attempt.c.id < before)
    query = query.order_by(webhook_attempt.c.id.desc()).limit(limit + 1)
    async with engine.connect() as conn:
        rows = (await conn.execute(query)).all()
    page = [
        Attempt(
            id=row.id,
            at=row.created_at,
            fixture_id=row.fixture_id,
            seq=row.seq,
            webhook_id=row.message_id,
            status=row.status,
            latency_ms=row.latency_ms,
            answer_head=row.answer_head,
            error=row.error,
        )
        for row in rows[:limit]
    ]
    return AttemptPage(attempts=page, next=page[-1].id if len(rows) > limit else None)


async def redeliver(engine: AsyncEngine, endpoint_id: int, fixture_id: int, from_seq: int) -> Redelivery:
    """Make every message of the match from `from_seq` on owed again, due now.

    The engine sends owed messages strictly in seq order per match, so they go again in order,
    starting at `from_seq`. Idempotent: messages already owed are left as they are.

    Raises:
        NothingOwedError: the endpoint was never owed `from_seq` of that match (or retention has
            deleted that message).
    """
    params = {"endpoint": endpoint_id, "fixture": fixture_id, "seq": from_seq}
    async with engine.begin() as conn:
        if (await conn.execute(_FIRST_OWED, params)).first() is None:
            raise NothingOwedError(
                f"endpoint {endpoint_id} has no message for seq {from_seq} of fixture {fixture_id}: "
                "it was never sent one, or the message is older than what is kept"
            )
        again = (await conn.execute(_OWE_AGAIN, params)).rowcount
        owed = int((await conn.execute(_OWED_FROM, params)).scalar_one())
    return Redelivery(
        endpoint_id=endpoint_id, fixture_id=fixture_id, from_seq=from_seq, owed_again=again, owed=owed
    )


def _failure(status: int | None, error: str | None) -> str | None:
    if status is not None:
        return f"HTTP {status}"
    return error
