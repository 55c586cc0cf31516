"""The seeded fault plan: which fault happens when, to what, for how long.

Pure: the same seed and window give the same plan on any machine, so a failing soak is re-run with
its printed seed and meets the same faults at the same moments. Every kind appears at least once
when the window has room (a short soak still meets each), then further faults follow at random
gaps. Different targets may be broken at the same time, as on a bad Saturday; one target is never
broken twice at once (a paused worker is not also killed: the second fault would hide the first).
The last stretch of the run is left quiet so the stack can settle before the checks.
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
"""Every kind the provider simulator can inject (`simulators/provider/faults.py`)."""
APNS_FAULTS = ("429", "410", "500", "goaway")

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


def _target_of(kind: FaultKind, rng: random.Random) -> str:
    match kind:
        case FaultKind.KILL_WORKER | FaultKind.PAUSE_WORKER:
            return rng.choice(WORKERS)
        case FaultKind.CUT_WORKER_DATABASE:
            return CUT_WORKER
        case FaultKind.KILL_API:
            return rng.choice(APIS)
        case FaultKind.RESTART_POSTGRES:
            return "postgres"
        case FaultKind.FLUSH_REDIS | FaultKind.STOP_REDIS:
            return "redis"
        case FaultKind.PROVIDER_BURST:
            return f"provider:{rng.choice(PROVIDER_FAULTS)}"
        case FaultKind.APNS_BURST:
            return f"apns:{rng.choice(APNS_FAULTS)}"


def _duration_of(kind: FaultKind, shape: PlanShape, rng: random.Random) -> float:
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


def plan(seed: int, window: float, shape: PlanShape = PlanShape()) -> tuple[PlannedFault, ...]:
    """The faults of a run whose load lasts `window` seconds, by start time."""
    rng = random.Random(seed)
    last_start = window * (1 - shape.quiet_tail)
    kinds = list(FaultKind)
    rng.shuffle(kinds)
    free_at: dict[str, float] = {}
    faults: list[PlannedFault] = []
    at = rng.uniform(shape.min_gap, shape.mean_gap)
    while at < last_start:
        kind = kinds.pop(0) if kinds else rng.choice(list(FaultKind))
        target = _target_of(kind, rng)
        start = max(at, free_at.get(_busy_key(target), 0.0))
        if start >= last_start:
            break
        fault = PlannedFault(math.ceil(start * 10) / 10, kind, target, _duration_of(kind, shape, rng))
        faults.append(fault)
        free_at[_busy_key(target)] = fault.ends + shape.recovery
        at += max(shape.min_gap, rng.expovariate(1 / shape.mean_gap))
    return tuple(sorted(faults, key=lambda fault: fault.at))
