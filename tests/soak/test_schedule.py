"""The seeded fault plan: reproducible, complete, and never breaking one target twice at once."""

from __future__ import annotations

import itertools

import pytest

from scoreline.soak.schedule import (
    APIS,
    CUT_WORKER,
    WORKERS,
    FaultKind,
    PlanShape,
    plan,
)

pytestmark = pytest.mark.unit

TEN_MINUTES = 600.0


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
            case FaultKind.KILL_WORKER | FaultKind.PAUSE_WORKER:
                assert fault.target in WORKERS
            case FaultKind.CUT_WORKER_DATABASE:
                assert fault.target == CUT_WORKER
            case FaultKind.KILL_API:
                assert fault.target in APIS
            case FaultKind.PROVIDER_BURST:
                assert fault.target.startswith("provider:")
            case FaultKind.APNS_BURST:
                assert fault.target.startswith("apns:")
    pauses = [fault for fault in faults if fault.kind is FaultKind.PAUSE_WORKER]
    assert all(fault.duration > PlanShape().heartbeat_timeout for fault in pauses), (
        "a pause must outlast the watch heartbeat timeout, or no watch is ever taken over"
    )


def test_a_window_too_short_for_any_fault_plans_none() -> None:
    assert plan(1, 2.0) == ()
