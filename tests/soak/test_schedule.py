"""The seeded fault plan: reproducible, complete, and never breaking one target twice at once."""

from __future__ import annotations

import itertools

import pytest

from devkit.soak.schedule import (
    APIS,
    CUT_WORKER,
    HOT_TOKEN,
    LONG,
    WORKERS,
    FaultKind,
    PlanShape,
    plan,
)

pytestmark = pytest.mark.unit

TEN_MINUTES = 600.0
THIRTY_MINUTES = 1800.0
PATIENCE_S = 60.0
"""The longest patience of the delivery code (its start grace and backoff cap): every long fault
must reach well past it."""


def test_one_seed_gives_one_plan_and_another_seed_another() -> None:
    """A failing soak is re-run with its printed seed: the same faults at the same moments."""
    assert plan(7, TEN_MINUTES) == plan(7, TEN_MINUTES)
    assert plan(7, TEN_MINUTES) != plan(8, TEN_MINUTES)


@pytest.mark.parametrize("seed", range(20))
def test_a_ten_minute_plan_meets_every_kind_of_fault(seed: int) -> None:
    kinds = {fault.kind for fault in plan(seed, TEN_MINUTES)}
    assert kinds == set(FaultKind)


@pytest.mark.parametrize("seed", range(20))
def test_no_target_is_broken_twice_at_once_and_the_tail_is_quiet(seed: int) -> None:
    shape = PlanShape()
    faults = plan(seed, TEN_MINUTES, shape)
    assert [fault.at for fault in faults] == sorted(fault.at for fault in faults)
    assert all(fault.at < TEN_MINUTES * (1 - shape.quiet_tail) for fault in faults)
    by_target: dict[str, list[tuple[float, float]]] = {}
    for fault in faults:
        by_target.setdefault(fault.target.partition(":")[0], []).append((fault.at, fault.ends))
    for target, spans in by_target.items():
        for (_, ended), (started, _) in itertools.pairwise(spans):
            assert started >= ended + shape.recovery - 1e-6, f"{target} broken again before it recovered"


def test_targets_are_the_stack_s_processes_and_each_simulator_fault_kind() -> None:
    faults = [fault for seed in range(10) for fault in plan(seed, TEN_MINUTES)]
    for fault in faults:
        match fault.kind:
            case FaultKind.KILL_WORKER | FaultKind.PAUSE_WORKER | FaultKind.LONG_PAUSE_WORKER:
                assert fault.target in WORKERS
            case FaultKind.CUT_WORKER_DATABASE:
                assert fault.target == CUT_WORKER
            case FaultKind.KILL_API:
                assert fault.target in APIS
            case FaultKind.PROVIDER_BURST:
                assert fault.target.startswith("provider:")
            case FaultKind.APNS_BURST | FaultKind.APNS_OUTAGE:
                assert fault.target.startswith("apns:")
            case FaultKind.HOT_TOKEN:
                assert fault.target == HOT_TOKEN
            case FaultKind.RESTART_POSTGRES | FaultKind.STOP_POSTGRES:
                assert fault.target == "postgres"
    pauses = [fault for fault in faults if fault.kind is FaultKind.PAUSE_WORKER]
    assert all(fault.duration > PlanShape().heartbeat_timeout for fault in pauses), (
        "a pause must outlast the watch heartbeat timeout, or no watch is ever taken over"
    )


def test_a_window_too_short_for_any_fault_plans_none() -> None:
    assert plan(1, 2.0) == ()


@pytest.mark.parametrize("window", [TEN_MINUTES, THIRTY_MINUTES])
@pytest.mark.parametrize("seed", range(20))
def test_the_long_faults_come_once_each_and_outlast_every_patience(seed: int, window: float) -> None:
    shape = PlanShape()
    faults = plan(seed, window, shape)
    long = {fault.kind: fault for fault in faults if fault.kind in LONG}
    full_time = window * shape.full_time

    assert sorted(long) == sorted(LONG)
    assert sum(fault.kind in LONG for fault in faults) == len(LONG)
    assert all(fault.duration >= PATIENCE_S * 1.25 for fault in long.values())
    outage = long[FaultKind.APNS_OUTAGE]
    assert 120 < outage.duration <= max(150.0, window / 2)
    assert outage.at < full_time < outage.ends, "the outage spans full time"
    hot = long[FaultKind.HOT_TOKEN]
    assert hot.at < window * 0.2 and hot.ends > full_time, "the token fails for a whole match"
    assert 90 <= long[FaultKind.STOP_POSTGRES].duration <= 150
    assert 75 <= long[FaultKind.LONG_PAUSE_WORKER].duration <= 120


def test_a_thirty_minute_soak_meets_an_apns_outage_of_up_to_fifteen_minutes() -> None:
    outages = [
        f.duration
        for seed in range(40)
        for f in plan(seed, THIRTY_MINUTES)
        if f.kind is FaultKind.APNS_OUTAGE
    ]

    assert min(outages) >= THIRTY_MINUTES / 4 and max(outages) > 12 * 60
    assert max(outages) <= 15 * 60
