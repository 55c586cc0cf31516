"""The seeded fault plan: which fault happens when, to what, for how long.

Pure: the same seed and window give the same plan on any machine, so a failing soak is re-run with
its printed seed and meets the same faults at the same moments. The long faults (`LONG`) come once
each, placed first: an APNs outage across the matches' full time, one token failing for a whole
match, Postgres stopped for minutes, a worker paused for a minute and a half. Their lengths are
drawn from ranges that reach well past every patience of the delivery code (its lease, start
grace, backoff cap, Temporal's activity timeouts: all a minute or less), so what is owed must
outlive them. Then every short kind appears at least once when the window has room (a short soak
still meets each), and further short faults follow at random gaps. Different targets may be
broken at the same time, as on a bad Saturday; one target is never broken twice at once (a paused
worker is not also killed: the second fault would hide the first). No fault starts in the last
stretch of the run, so the stack can settle before the checks.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from enum import StrEnum


class FaultKind(StrEnum):
    KILL_WORKER = "kill-worker"
    KILL_API = "kill-api"
    RESTART_POSTGRES = "restart-postgres"
    FLUSH_REDIS = "flush-redis"
    STOP_REDIS = "stop-redis"
    PROVIDER_BURST = "provider-burst"
    APNS_BURST = "apns-burst"
    CUT_WORKER_DATABASE = "cut-worker-database"
    PAUSE_WORKER = "pause-worker"
    LONG_PAUSE_WORKER = "long-pause-worker"
    STOP_POSTGRES = "stop-postgres"
    APNS_OUTAGE = "apns-outage"
    HOT_TOKEN = "hot-token"


LONG = (FaultKind.APNS_OUTAGE, FaultKind.HOT_TOKEN, FaultKind.STOP_POSTGRES, FaultKind.LONG_PAUSE_WORKER)
"""Planned once each, before the others (see the module docstring)."""
SHORT = tuple(kind for kind in FaultKind if kind not in LONG)


WORKERS = ("worker-1", "worker-2")
APIS = ("api-1", "api-2")
CUT_WORKER = "worker-1"
"""The worker whose Postgres connections go through the soak's cuttable TCP proxy."""
PROVIDER_FAULTS = (
    "status",
    "rate_limit",
    "malformed",
    "truncated",
    "hang",
    "reset",
    "drop_include",
    "latency",
)
"""Every kind the provider simulator can inject (`devkit/devkit/simulators/provider/faults.py`)."""
APNS_FAULTS = ("429", "410", "500", "goaway")
APNS_OUTAGES = ("503", "disconnect")
APNS_DISCONNECT = "apns:disconnect"
"""The target of an APNs outage that drops every connection the moment a request arrives."""
"""An APNs outage answers every request 503, or drops every connection as it is used."""
HOT_TOKEN = "apns-token"
"""The hot-token fault's target: one activity's update token, chosen when it starts."""

LONG_PAUSE_S = (75.0, 120.0)
"""A long pause: about 90 s, past the lease, the start grace and the backoff cap."""
POSTGRES_DOWN_S = (100.0, 150.0)
"""Postgres stopped for about two minutes: past every patience of the delivery code."""
APNS_OUTAGE_SHARE = (0.25, 0.5)
"""An APNs outage lasts this share of the window (a 30-minute soak: 7.5 to 15 minutes) ..."""
APNS_OUTAGE_FLOOR_S = 150.0
"""... and at least this long (a 10-minute soak: 2.5 to 5 minutes): always past every patience."""

PAUSE_PAST_HEARTBEAT = 1.5
"""A paused worker stays stopped this many heartbeat timeouts: long enough for its watches to be
given up on and taken over, so the soak sees a worker come back to activities it no longer owns."""


@dataclass(frozen=True)
class PlannedFault:
    """One fault: `at` seconds after the load starts, on `target`, lasting `duration` seconds (0 for
    an instant one: a kill is instant, the restart that follows is the supervisor's)."""

    at: float
    kind: FaultKind
    target: str
    duration: float

    @property
    def ends(self) -> float:
        return self.at + self.duration


@dataclass(frozen=True)
class PlanShape:
    """The knobs of a plan; the defaults suit a soak of a few minutes or more."""

    mean_gap: float = 12.0
    """Average seconds between the starts of two faults."""
    min_gap: float = 3.0
    quiet_tail: float = 0.25
    """Share of the window at its end with no fault starting (the stack settles before the checks)."""
    heartbeat_timeout: float = 10.0
    recovery: float = 5.0
    """Seconds a target is left alone after its fault ends before it may be broken again."""
    full_time: float = 0.55
    """Share of the window by which the matches reach full time (the soak ends its recordings by
    60 % of it, the desks' matches a little earlier): the APNs outage spans it, and the hot token
    fails until a little after it."""


def _target_of(kind: FaultKind, rng: random.Random) -> str:
    match kind:
        case FaultKind.KILL_WORKER | FaultKind.PAUSE_WORKER | FaultKind.LONG_PAUSE_WORKER:
            return rng.choice(WORKERS)
        case FaultKind.CUT_WORKER_DATABASE:
            return CUT_WORKER
        case FaultKind.KILL_API:
            return rng.choice(APIS)
        case FaultKind.RESTART_POSTGRES | FaultKind.STOP_POSTGRES:
            return "postgres"
        case FaultKind.FLUSH_REDIS | FaultKind.STOP_REDIS:
            return "redis"
        case FaultKind.PROVIDER_BURST:
            return f"provider:{rng.choice(PROVIDER_FAULTS)}"
        case FaultKind.APNS_BURST:
            return f"apns:{rng.choice(APNS_FAULTS)}"
        case FaultKind.APNS_OUTAGE:
            return f"apns:{rng.choice(APNS_OUTAGES)}"
        case FaultKind.HOT_TOKEN:
            return HOT_TOKEN


def _duration_of(kind: FaultKind, shape: PlanShape, rng: random.Random) -> float:
    """A short fault's length."""
    match kind:
        case FaultKind.KILL_WORKER | FaultKind.KILL_API | FaultKind.FLUSH_REDIS:
            return 0.0
        case FaultKind.PAUSE_WORKER:
            return round(shape.heartbeat_timeout * PAUSE_PAST_HEARTBEAT + rng.uniform(0, 5), 1)
        case FaultKind.RESTART_POSTGRES:
            return round(rng.uniform(2, 8), 1)
        case _:
            return round(rng.uniform(5, 20), 1)


def _busy_key(target: str) -> str:
    """What two faults must not break at once: a worker, an API, Postgres, Redis, a simulator."""
    return target.partition(":")[0]


def _long_fault(kind: FaultKind, window: float, shape: PlanShape, rng: random.Random) -> PlannedFault:
    """Where a long fault goes and how long it lasts (before any short fault is placed)."""
    full_time = window * shape.full_time
    match kind:
        case FaultKind.APNS_OUTAGE:
            length = max(APNS_OUTAGE_FLOOR_S, window * rng.uniform(*APNS_OUTAGE_SHARE))
            at = full_time - length * rng.uniform(0.3, 0.7)
        case FaultKind.HOT_TOKEN:
            at = window * rng.uniform(0.05, 0.15)
            length = full_time + window * rng.uniform(0.05, 0.15) - at
        case FaultKind.STOP_POSTGRES:
            length = rng.uniform(*POSTGRES_DOWN_S)
            at = rng.uniform(window * 0.1, max(window * 0.1, window * (1 - shape.quiet_tail) - length))
        case _:
            length = rng.uniform(*LONG_PAUSE_S)
            at = rng.uniform(window * 0.1, max(window * 0.1, window * (1 - shape.quiet_tail) - length))
    return PlannedFault(
        math.ceil(max(at, shape.min_gap) * 10) / 10, kind, _target_of(kind, rng), round(length, 1)
    )


class _Busy:
    """Per target, the stretches its faults (and their recovery) hold it."""

    def __init__(self, recovery: float) -> None:
        self._recovery = recovery
        self._spans: dict[str, list[tuple[float, float]]] = {}

    def free(self, target: str, at: float, duration: float) -> float:
        """The first moment from `at` on when `target` can take a fault of `duration`."""
        for began, ended in sorted(self._spans.get(_busy_key(target), [])):
            if at < ended + self._recovery and at + duration + self._recovery > began:
                at = ended + self._recovery
        return at

    def hold(self, fault: PlannedFault) -> None:
        self._spans.setdefault(_busy_key(fault.target), []).append((fault.at, fault.ends))


def plan(seed: int, window: float, shape: PlanShape = PlanShape()) -> tuple[PlannedFault, ...]:
    """The faults of a run whose load lasts `window` seconds, by start time."""
    rng = random.Random(seed)
    last_start = window * (1 - shape.quiet_tail)
    busy = _Busy(shape.recovery)
    faults: list[PlannedFault] = []
    for kind in LONG:
        fault = _long_fault(kind, window, shape, rng)
        if fault.at < last_start and busy.free(fault.target, fault.at, fault.duration) == fault.at:
            faults.append(fault)
            busy.hold(fault)
    kinds = list(SHORT)
    rng.shuffle(kinds)
    at = rng.uniform(shape.min_gap, shape.mean_gap)
    while at < last_start:
        kind = kinds.pop(0) if kinds else rng.choice(SHORT)
        target = _target_of(kind, rng)
        duration = _duration_of(kind, shape, rng)
        start = math.ceil(busy.free(target, at, duration) * 10) / 10
        if start >= last_start:
            break
        fault = PlannedFault(start, kind, target, duration)
        faults.append(fault)
        busy.hold(fault)
        at += max(shape.min_gap, rng.expovariate(1 / shape.mean_gap))
    return tuple(sorted(faults, key=lambda fault: fault.at))
