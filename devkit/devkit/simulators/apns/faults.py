"""Scripted failures: make the next N requests (or all for a while), for one token or any, fail.

This is how tests and the dev stack exercise the sender's handling of throttling, outages, dead
tokens and dropped connections without waiting for Apple to misbehave.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass
from typing import Literal

FaultAction = Literal["respond", "goaway", "disconnect"]

# The reason Apple sends with each status, used when a fault names only the status.
DEFAULT_REASONS: dict[int, str] = {
    400: "BadDeviceToken",
    403: "ExpiredProviderToken",
    404: "BadPath",
    405: "MethodNotAllowed",
    410: "Unregistered",
    413: "PayloadTooLarge",
    429: "TooManyRequests",
    500: "InternalServerError",
    503: "ServiceUnavailable",
}


@dataclass
class Fault:
    """One injected failure.

    Attributes:
        id: Handle shown in the admin API and the journal.
        action: `respond` answers with `status`/`reason`, or only delays when `status` is None;
            `goaway` sends GOAWAY carrying `{"reason": ...}` and closes the connection, as APNs
            does when shutting down; `disconnect` drops the TCP connection with no goodbye.
        status: HTTP status for `respond`.
        reason: Apple reason string; defaults from the status (`Shutdown` for `goaway`).
        token: Only requests to this device token; None means every request.
        latency_ms: Delay before the (faulty or normal) answer.
        remaining: Requests still to affect; None means until `expires_at` or cleared.
        expires_at: Epoch seconds after which the fault is gone; None means no deadline.
        hits: Requests affected so far.
    """

    id: str
    action: FaultAction
    status: int | None
    reason: str | None
    token: str | None
    latency_ms: int
    remaining: int | None
    expires_at: float | None
    hits: int = 0

    def live(self, now: float) -> bool:
        """Whether the fault still applies."""
        exhausted = self.remaining is not None and self.remaining <= 0
        expired = self.expires_at is not None and now >= self.expires_at
        return not exhausted and not expired


class FaultInjector:
    """Holds active faults; token-specific ones win over global ones, older before newer."""

    def __init__(self) -> None:
        self._faults: list[Fault] = []
        self._ids = itertools.count(1)

    def add(
        self,
        *,
        action: FaultAction = "respond",
        status: int | None = None,
        reason: str | None = None,
        token: str | None = None,
        latency_ms: int = 0,
        count: int | None = None,
        duration_s: float | None = None,
    ) -> Fault:
        """Register a fault. Without `count` or `duration_s` it affects the next request only.

        Raises:
            ValueError: The combination does nothing, or the status is not one APNs uses.
        """
        if action == "respond":
            if status is None and latency_ms <= 0:
                raise ValueError("a 'respond' fault needs a status, a latency_ms, or both")
            if status is not None and status not in DEFAULT_REASONS:
                raise ValueError(f"APNs does not answer {status}; use one of {sorted(DEFAULT_REASONS)}")
            if status is not None and reason is None:
                reason = DEFAULT_REASONS[status]
        else:
            status = None
            if action == "goaway" and reason is None:
                reason = "Shutdown"
        if count is not None and count < 1:
            raise ValueError("count must be at least 1")
        if duration_s is not None and duration_s <= 0:
            raise ValueError("duration_s must be positive")
        if latency_ms < 0:
            raise ValueError("latency_ms cannot be negative")
        if count is None and duration_s is None:
            count = 1
        fault = Fault(
            id=f"fault-{next(self._ids)}",
            action=action,
            status=status,
            reason=reason,
            token=token,
            latency_ms=latency_ms,
            remaining=count,
            expires_at=None if duration_s is None else time.time() + duration_s,
        )
        self._faults.append(fault)
        return fault

    def take(self, token: str | None) -> Fault | None:
        """The fault that applies to a request for `token`, counting the request against it."""
        now = time.time()
        self._faults = [fault for fault in self._faults if fault.live(now)]
        matching = [fault for fault in self._faults if fault.token is not None and fault.token == token]
        matching += [fault for fault in self._faults if fault.token is None]
        if not matching:
            return None
        fault = matching[0]
        fault.hits += 1
        if fault.remaining is not None:
            fault.remaining -= 1
        return fault

    def active(self) -> list[Fault]:
        """Faults that still apply."""
        now = time.time()
        return [fault for fault in self._faults if fault.live(now)]

    def clear(self) -> int:
        """Remove every fault; returns how many were active."""
        cleared = len(self.active())
        self._faults.clear()
        return cleared
