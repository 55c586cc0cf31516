"""The drainer's statements (docs/live-activities.md, "Draining") and the rows they carry: what a
take leases, what a settle writes, and how much is owed; the loop that runs them is `drain`.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from activities.push.answers import Outcome

OWED = """
SELECT count(*) AS owed,
       COALESCE(extract(epoch FROM now() - min(la.next_try_at) FILTER (WHERE la.next_try_at <= now())), 0) AS lag
FROM live_activity la JOIN device d ON d.id = la.device_id
WHERE la.next_try_at IS NOT NULL AND d.environment = :environment
"""
"""Every mailbox of this drainer's APNs environment that owes a push, and how late the most
overdue due one is: a lag that grows while drainers run means they cannot keep up, or are wedged."""

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
           -- A push committed since this statement began is not seen here, although its locked
           -- row may already name it: a push not found is not expired.
           COALESCE(a.stale_date <= extract(epoch FROM now()), false) AS expired
    FROM due LEFT JOIN la_push a ON a.fixture_id = due.fixture_id AND a.stamp = due.alert_stamp
), decided AS (
    SELECT seen.*,
           -- The owed alert rides on this request (and is marked) unless the drainer holds alerts
           -- back: then the state goes alone and the alert stays owed.
           alert_stamp IS NOT NULL AND NOT lost AND NOT expired AND NOT needs_start
               AND CAST(:carry_alerts AS boolean) AS carried,
           CASE WHEN token IS NULL THEN 'park'
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
        alert_dropped_stamp = CASE WHEN s.action = 'send' AND s.lost THEN s.alert_stamp
                                   ELSE la.alert_dropped_stamp END,
        alert_dropped_mark = CASE WHEN s.action = 'send' AND s.lost THEN s.alert_marked_at
                                  ELSE la.alert_dropped_mark END,
        alert_marked_at = CASE
            WHEN s.action = 'send' AND (s.needs_start OR s.carried) THEN now()
            WHEN s.action = 'send' OR s.action = 'close' THEN NULL
            ELSE s.alert_marked_at END,
        alert_marked_stamp = CASE
            WHEN s.action = 'send' AND s.needs_start THEN s.want_stamp
            WHEN s.action = 'send' AND s.carried THEN s.alert_stamp
            WHEN s.action = 'send' OR s.action = 'close' THEN NULL
            ELSE s.alert_marked_stamp END,
        next_try_at = CASE s.action WHEN 'send' THEN la.next_try_at
                                    WHEN 'wait' THEN s.alert_marked_at + make_interval(secs => :grace) END,
        status = CASE WHEN s.action = 'close' THEN 'ended' ELSE la.status END,
        ended_at = CASE WHEN s.action = 'close' THEN now() ELSE la.ended_at END,
        updated_at = now()
    FROM decided s WHERE la.id = s.id
    RETURNING la.id, la.fixture_id, la.device_id, s.token, s.action, s.needs_start, s.want_end,
              s.want_stamp, la.lease_until, la.alert_marked_at,
              CASE WHEN (s.needs_start AND NOT s.lost AND NOT s.expired) OR s.carried THEN s.alert_stamp
              END AS alert_stamp,
              s.alert_stamp IS NOT NULL AND NOT (s.lost OR s.expired OR s.needs_start OR s.carried) AS held,
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
`START_GRACE_S` after the mark. With `carry_alerts` false an update goes without its owed alert,
which stays owed and unmarked. A row with no live token is parked until a report or publish; a
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

LOCK_BATCH = """
SELECT id FROM live_activity WHERE id = ANY(CAST(:ids AS bigint[])) ORDER BY id FOR NO KEY UPDATE
"""
"""Run before `SETTLE` in its transaction: a take of these rows still open commits first, so
`SETTLE`'s snapshot sees it (a row changed by a take after that snapshot would be skipped by
`given_back` unseen), and settles lock in one order."""

SETTLE = f"""
WITH r AS (
    SELECT * FROM unnest(
        CAST(:ids AS bigint[]), CAST(:devices AS uuid[]), CAST(:results AS text[]),
        CAST(:tokens AS text[]), CAST(:events AS text[]), CAST(:sent AS bigint[]),
        CAST(:carried AS bigint[]), CAST(:routine AS boolean[]), CAST(:backoff AS float8[]),
        CAST(:dead_at AS float8[]), CAST(:leased_until AS timestamptz[]), CAST(:marked_at AS timestamptz[])
    ) AS r(id, device_id, result, token, event, sent, carried, routine, backoff_s, dead_at, leased_until,
           marked_at)
), settled AS (
    UPDATE live_activity la SET
        sent_stamp = CASE WHEN {_DELIVERED} THEN GREATEST(la.sent_stamp, r.sent) ELSE la.sent_stamp END,
        -- An end APNs accepted closes the activity: an alert still owed could no longer show.
        alert_stamp = CASE WHEN r.result IN ('sent', 'impossible', 'unknown') AND la.alert_stamp <= r.carried
                                OR r.result = 'sent' AND r.event = 'end' AND {_SAME}
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
                 OR (la.alert_stamp IS NOT NULL AND NOT coalesce(la.alert_stamp <= r.carried, false))
            THEN now() END,
        updated_at = now()
    FROM r JOIN device d ON d.id = r.device_id
    -- This take still holds the row, or takes since sent nothing (waited or parked: the mark is
    -- still this request's) and the late outcome is the row's latest.
    WHERE la.id = r.id AND (la.lease_owner = :me AND la.lease_until = r.leased_until
                            OR la.lease_until IS NULL AND la.alert_marked_at = r.marked_at)
    RETURNING la.id
), given_back AS (
    -- Taken again since, by a take that dropped as in doubt the alert this very request carried
    -- (its mark names it): an answer that did not deliver makes that alert owed again, unless a
    -- newer alert replaced it, the end went, or the device stopped following.
    UPDATE live_activity la SET alert_stamp = la.alert_dropped_stamp, alert_dropped_stamp = NULL,
                                alert_dropped_mark = NULL, next_try_at = COALESCE(la.next_try_at, now()),
                                updated_at = now()
    FROM r
    WHERE la.id = r.id AND la.lease_until IS DISTINCT FROM r.leased_until
      AND la.alert_dropped_mark = r.marked_at AND r.result IN ('retry', 'wrong', 'dead', 'withheld')
      AND la.alert_stamp IS NULL AND la.status <> 'ended'
      AND EXISTS (SELECT FROM follow f WHERE f.device_id = la.device_id AND f.fixture_id = la.fixture_id)
      AND NOT EXISTS (SELECT FROM la_push p WHERE p.fixture_id = la.fixture_id
                      AND p.stamp > la.alert_dropped_stamp AND p.alert IS NOT NULL)
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
"""Write a batch's outcomes (doc, "Draining") where this drainer's take still holds the row, give
back an alert a later take dropped although its request did not deliver, switch dead tokens off,
and log every request. A dead token's row is parked (waiting for a report) where
its token went off, and backs off where the token stays on (registered again since APNs' 410)."""
ROW_ARRAYS = tuple(
    "ids devices results tokens events sent carried routine backoff dead_at leased_until marked_at".split()
)
ATTEMPT_ARRAYS = tuple(
    f"a_{name}"
    for name in "fixture event_key effect device activity kind attempt priority bytes apns_id status reason"
    " latency trace".split()
)
"""`SETTLE`'s array parameters, in the order `Drainer._settle_params` fills them."""


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
    """The owed alert it carries: not expired, not in doubt, not held back (`Drainer` in doubt)."""
    held: bool
    """An alert is owed and held back: this request goes without it, and it follows."""
    start_stamp: int | None
    """A start's: its generation's start push (the attributes)."""
    tries: int
    leased_until: datetime
    """The lease this take set: it names the take, so only its own outcome is written as one."""
    marked_at: datetime | None
    """The alert mark this take set (its request carries an alert or is a start): it names the
    request whose outcome a later take may find in doubt."""


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
