"""The push journal: every request the APNs side answered, newest last, plus running counts.

Tests and developers assert on this instead of on a phone. The record list is bounded so a long
dev session cannot grow without limit; the counters cover everything since the last reset. A
`RecordSink` (the soak's `JournalFile`), when given, gets every record as well.
"""

from __future__ import annotations

import time
from collections import Counter, deque
from dataclasses import dataclass
from typing import Any, Protocol

from devkit.simulators.apns.provider_token import TokenClaims

_RATE_WINDOW_S = 10.0


@dataclass(frozen=True)
class PushRecord:
    """One request and how it was answered.

    Attributes:
        seq: Position since start; increases by one per request.
        received_at: ISO-8601 UTC time the request was complete.
        connection_id: Which HTTP/2 connection carried it (numbered from 1).
        stream_id: Its HTTP/2 stream.
        method: The `:method`.
        path: The `:path`.
        token: Device token from the path, if there was one.
        headers: Regular request headers, `authorization` left out (see `jwt`).
        jwt: Header and claims of the provider token, when it could be decoded.
        payload: The decoded JSON body, or None when it was not JSON (or too large to keep).
        payload_bytes: Size of the body as sent.
        apns_id: The `apns-id` answered: the request's, or the one generated.
        status: HTTP status answered; None when a fault closed the connection instead.
        reason: Apple's reason string on errors.
        dropped_by_device: Why a phone would silently discard this accepted push (e.g.
            `MissingAlert` on a `start`, `StaleTimestamp` on an out-of-order `update`).
        fault_id: The injected fault that shaped the answer, if any.
        latency_ms: Injected delay before answering.
    """

    seq: int
    received_at: str
    connection_id: int
    stream_id: int
    method: str
    path: str
    token: str | None
    headers: dict[str, str]
    jwt: TokenClaims | None
    payload: Any
    payload_bytes: int
    apns_id: str
    status: int | None
    reason: str | None
    dropped_by_device: str | None
    fault_id: str | None
    latency_ms: int


@dataclass(frozen=True)
class JournalStats:
    """Counts since the last reset."""

    total: int
    by_status: dict[str, int]
    by_reason: dict[str, int]
    pushes_per_second_last_10s: float
    pushes_per_second_since_reset: float
    since: float


class RecordSink(Protocol):
    """Where every record goes besides the bounded list (a soak checks all of them)."""

    def push(self, record: PushRecord) -> None: ...

    def unregister(self, token: str, timestamp_ms: int, after_seq: int) -> None: ...


class Journal:
    """Bounded record of answered pushes with counters that survive eviction."""

    def __init__(self, capacity: int = 10_000, file: RecordSink | None = None) -> None:
        self._file = file
        self._records: deque[PushRecord] = deque(maxlen=capacity)
        self._recent: deque[float] = deque()
        self._by_status: Counter[str] = Counter()
        self._by_reason: Counter[str] = Counter()
        self._total = 0
        self._seq = 0
        self._since = time.time()

    def next_seq(self) -> int:
        """A fresh sequence number for a record about to be written."""
        self._seq += 1
        return self._seq

    def record(self, record: PushRecord) -> None:
        """Keep `record` and count it (and append it to the file, if there is one)."""
        self._records.append(record)
        if self._file is not None:
            self._file.push(record)
        self._total += 1
        self._by_status["no-response" if record.status is None else str(record.status)] += 1
        if record.reason is not None:
            self._by_reason[record.reason] += 1
        now = time.monotonic()
        self._recent.append(now)
        self._trim(now)

    def unregistered(self, token: str, timestamp_ms: int) -> None:
        """Note in the file (if any) that `token` answers 410 from the next push on: a check of
        "never sent to after 410" needs to know where that began."""
        if self._file is not None:
            self._file.unregister(token, timestamp_ms, after_seq=self._seq)

    def pushes(self, token: str | None = None, limit: int = 100) -> list[PushRecord]:
        """The newest `limit` records (optionally only for `token`), oldest first."""
        selected = [r for r in self._records if token is None or r.token == token]
        return selected[-limit:] if limit > 0 else []

    def clear(self) -> None:
        """Forget records and counters."""
        self._records.clear()
        self._recent.clear()
        self._by_status.clear()
        self._by_reason.clear()
        self._total = 0
        self._since = time.time()

    def stats(self) -> JournalStats:
        """Counts by status and reason, and the push rate."""
        now = time.monotonic()
        self._trim(now)
        elapsed = max(time.time() - self._since, 1e-9)
        return JournalStats(
            total=self._total,
            by_status=dict(self._by_status),
            by_reason=dict(self._by_reason),
            pushes_per_second_last_10s=round(len(self._recent) / _RATE_WINDOW_S, 3),
            pushes_per_second_since_reset=round(self._total / elapsed, 3),
            since=self._since,
        )

    def _trim(self, now: float) -> None:
        while self._recent and self._recent[0] < now - _RATE_WINDOW_S:
            self._recent.popleft()
