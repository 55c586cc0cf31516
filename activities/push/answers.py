"""What one request's answers mean for its mailbox (pure): the result a drainer settles, and the backoff.

A row gets one request per lease; its result decides what the settle writes (`drain.SETTLE`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from enum import StrEnum

from activities.push.outcomes import Verdict

BACKOFF_FIRST_S = 1.0
"""The first wait after an answer that did not deliver: APNs' trouble (429 for one token, a 5xx,
a refused connection) is mostly over within a second, and a key moment should not wait longer."""
BACKOFF_CAP_S = 60.0
"""The longest wait between two tries: a row owed through a long APNs outage (or our own wrong
request, once fixed) goes again within a minute of its end, while a hot token costs APNs at most
one request a minute."""


class Result(StrEnum):
    """How a row's request ended, as the settle statement reads it."""

    SENT = "sent"
    """200: APNs has it."""
    DEAD = "dead"
    """410 or 400 BadDeviceToken: the token is switched off; the mailbox waits for a new one."""
    RETRY = "retry"
    """Not delivered for a passing reason (429, 5xx, 403, not sent at all): after a backoff."""
    UNKNOWN = "unknown"
    """The request went out and no answer came: its alert is no longer owed (at most once)."""
    WRONG = "wrong"
    """Another 4xx: our request is wrong; it stays owed, retried at the longest backoff."""
    IMPOSSIBLE = "impossible"
    """Too large even at the smallest variant: no request can ever carry this push."""
    WITHHELD = "withheld"
    """Nothing went out: the lease's local deadline passed, or the drainer is stopping."""


AFTER_ANSWER: dict[Verdict, Result] = {
    Verdict.SENT: Result.SENT,
    Verdict.DEACTIVATE: Result.DEAD,
    Verdict.TRIM: Result.IMPOSSIBLE,
    Verdict.REFRESH_TOKEN: Result.RETRY,
    Verdict.NEW_CONNECTION: Result.RETRY,
    Verdict.RETRY: Result.RETRY,
    Verdict.REJECT: Result.WRONG,
}
"""The result of a row whose last answer had this verdict, once no immediate resend is left (a
413 with no smaller variant, a second `ExpiredProviderToken` in a row)."""


@dataclass(frozen=True)
class Attempt:
    """One request to APNs (or a failure to make one), for `push_attempt`."""

    apns_id: str | None
    status: int | None
    reason: str | None
    latency_ms: float
    payload_bytes: int


@dataclass(frozen=True)
class Outcome:
    """A row's requests and what they came to."""

    result: Result
    attempts: tuple[Attempt, ...] = field(default=())
    dead_at_ms: int | None = None
    """On 410: when APNs learnt the token was dead (a push-to-start token registered again later
    stays on)."""


def backoff(tries: int, first: float = BACKOFF_FIRST_S, cap: float = BACKOFF_CAP_S) -> float:
    """Seconds before the next try after `tries` answers in a row that did not deliver: doubling
    from `first` to `cap`, with jitter (half to full) so a batch's retries spread out."""
    return min(cap, first * 2.0 ** max(0, tries - 1)) * random.uniform(0.5, 1.0)
