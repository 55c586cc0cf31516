"""A circuit breaker for one upstream, for asyncio code in one event loop.

Written by hand because no maintained library fits: `pybreaker` is thread-based and supports
async only through Tornado coroutines; `aiobreaker` (its asyncio port) has had no release since
2021; `purgatory` and `circuitbreaker` let *every* call through while half-open (we want exactly
one probe) and read `time.time()` directly (we want an injectable clock, so tests move time instead
of sleeping). None of them is a project dependency either. The logic is ~100 lines.

State machine: CLOSED --N consecutive failures--> OPEN --cooldown--> HALF_OPEN, where exactly one
caller (the probe) is admitted; its success closes the breaker, its failure re-opens it for another
cooldown. Every transition is logged and counted in `BreakerStats`.

All methods are synchronous and never await, so within one event loop no lock is needed: a check
and the state change it leads to cannot interleave with another task.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from activities.provider.config import BreakerPolicy, Clock
from scoreline.logging import get_logger
from scoreline.metrics.instruments import metrics

log = get_logger(__name__)


class BreakerState(StrEnum):
    """Where the breaker is."""

    CLOSED = "closed"
    OPEN = "open"
    HALF_OPEN = "half_open"


@dataclass(frozen=True)
class BreakerStats:
    """What the breaker has done, for metrics and health endpoints.

    Attributes:
        state: The current state (an expired cooldown already reads as `half_open`).
        consecutive_failures: Failures since the last success.
        opened: Times it went to OPEN.
        rejected: Calls refused without a request while open (or while a probe was out).
        retry_in: Seconds until a probe is admitted; 0 unless open.
    """

    state: BreakerState
    consecutive_failures: int
    opened: int
    rejected: int
    retry_in: float


class BreakerOpen(Exception):
    """Internal: the breaker refused the call. The client turns it into `ProviderUnavailable`."""

    def __init__(self, retry_in: float) -> None:
        super().__init__(retry_in)
        self.retry_in = retry_in


class CircuitBreaker:
    """Consecutive-failure breaker with a single half-open probe.

    Use: `admit()` before sending (raises `BreakerOpen`), then exactly one of `success(probe)`,
    `failure(probe)` or `release(probe)` (no verdict, e.g. the caller was cancelled) with what
    `admit()` returned.

    Args:
        name: The upstream (`football`), in log lines and the `upstream` label of its gauge.
        policy: Threshold and cooldown.
        clock: Monotonic seconds.
    """

    def __init__(self, name: str, policy: BreakerPolicy, clock: Clock) -> None:
        if policy.failure_threshold < 1 or policy.cooldown < 0:
            raise ValueError(f"invalid breaker policy {policy}")
        self._name = name
        self._policy = policy
        self._clock = clock
        self._state = BreakerState.CLOSED
        self._failures = 0
        self._opened_at = 0.0
        self._probe_out = False
        self._opened = 0
        self._rejected = 0
        # Exported from the start: "closed" must read 0, not look like a series that is missing.
        metrics().breaker_open.set(0, {"upstream": name})

    @property
    def state(self) -> BreakerState:
        """The current state; an open breaker whose cooldown has run out reads as half-open."""
        if self._state is BreakerState.OPEN and self._cooled_down():
            return BreakerState.HALF_OPEN
        return self._state

    @property
    def stats(self) -> BreakerStats:
        """A snapshot of state and counters."""
        retry_in = 0.0
        if self._state is BreakerState.OPEN:
            retry_in = max(0.0, self._opened_at + self._policy.cooldown - self._clock())
        return BreakerStats(
            state=self.state,
            consecutive_failures=self._failures,
            opened=self._opened,
            rejected=self._rejected,
            retry_in=retry_in,
        )

    def check(self) -> None:
        """Raise `BreakerOpen` if a call would be refused now, without taking the probe slot."""
        if self._refuses():
            self._rejected += 1
            raise BreakerOpen(self.stats.retry_in)

    def admit(self) -> bool:
        """Let one request through or raise `BreakerOpen`; half-open admits only the probe.

        Returns:
            True if this request is the half-open probe; pass it to the verdict.
        """
        if self._state is BreakerState.OPEN and self._cooled_down():
            self._move(BreakerState.HALF_OPEN)
        if self._refuses():
            self._rejected += 1
            raise BreakerOpen(self.stats.retry_in)
        if self._state is BreakerState.HALF_OPEN:
            self._probe_out = True
            return True
        return False

    def success(self, probe: bool) -> None:
        """The admitted request reached a working upstream: the breaker closes."""
        if probe:
            self._probe_out = False
        self._failures = 0
        if self._state is not BreakerState.CLOSED:
            self._move(BreakerState.CLOSED)

    def failure(self, probe: bool) -> None:
        """The admitted request failed in a way that says the upstream is unwell.

        A failure of a request admitted before the breaker opened (a straggler) changes nothing
        once it is open: only the probe decides a half-open breaker.
        """
        if probe:
            self._probe_out = False
        if self._state is BreakerState.CLOSED:
            self._failures += 1
            if self._failures >= self._policy.failure_threshold:
                self._open()
        elif probe and self._state is BreakerState.HALF_OPEN:
            self._failures += 1
            self._open()

    def release(self, probe: bool) -> None:
        """The admitted request ended without a verdict; a half-open breaker admits a new probe."""
        if probe:
            self._probe_out = False

    def _refuses(self) -> bool:
        if self._state is BreakerState.OPEN:
            return not self._cooled_down()
        return self._state is BreakerState.HALF_OPEN and self._probe_out

    def _cooled_down(self) -> bool:
        return self._clock() >= self._opened_at + self._policy.cooldown

    def _open(self) -> None:
        self._opened_at = self._clock()
        self._opened += 1
        self._move(BreakerState.OPEN)

    def _move(self, new: BreakerState) -> None:
        old, self._state = self._state, new
        metrics().breaker_open.set(0 if new is BreakerState.CLOSED else 1, {"upstream": self._name})
        logger = log.warning if new is BreakerState.OPEN else log.info
        logger(
            "provider.breaker",
            upstream=self._name,
            old=old.value,
            new=new.value,
            consecutive_failures=self._failures,
            cooldown=self._policy.cooldown,
        )
