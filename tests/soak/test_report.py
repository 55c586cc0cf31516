"""The soak's verdict: the table, the violations named, and the last line other tools parse."""

from __future__ import annotations

import re

import pytest

from devkit.soak.faults import InjectedFault
from devkit.soak.model import CheckResult, Violation
from devkit.soak.report import SoakVerdict, render
from devkit.soak.schedule import FaultKind, PlannedFault

pytestmark = pytest.mark.unit

LAST_LINE = re.compile(r"^soak: seed (\d+), ([\d.]+) min: (\d+) faults survived, (\d+) violations$")


def _fault(kind: FaultKind, target: str, error: str | None = None) -> InjectedFault:
    return InjectedFault(PlannedFault(12.0, kind, target, 0.0), 12.1, 12.1, f"{target} pid 4242", error)


def _verdict(checks: list[CheckResult], faults: list[InjectedFault]) -> SoakVerdict:
    return SoakVerdict(
        seed=42, minutes=10, checks=checks, faults=faults, duration_seconds=900, restarts={"api-1": 2}
    )


def test_a_clean_run_passes_and_ends_with_the_verdict_line() -> None:
    verdict = _verdict(
        [CheckResult("provider", 120, figures={"events": 120}), CheckResult("desks", 400)],
        [_fault(FaultKind.KILL_WORKER, "worker-1"), _fault(FaultKind.FLUSH_REDIS, "redis")],
    )
    lines = render(verdict)
    assert verdict.passed
    assert lines[-1] == "soak: seed 42, 10 min: 2 faults survived, 0 violations"
    assert LAST_LINE.match(lines[-1])
    assert any("worker-1 pid 4242" in line for line in lines)
    assert "processes restarted: api-1 2" in lines


def test_every_violation_is_named_and_fails_the_run() -> None:
    broken = Violation("devices", "fixture 81000001 device 9f3", "two starts reached the phone")
    verdict = _verdict([CheckResult("devices", 10, (broken,))], [_fault(FaultKind.KILL_API, "api-2")])
    lines = render(verdict)
    assert not verdict.passed
    assert "  devices: fixture 81000001 device 9f3: two starts reached the phone" in lines
    assert lines[-1].endswith("1 faults survived, 1 violations")


def test_a_fault_that_could_not_be_injected_is_not_counted_as_survived() -> None:
    """A soak whose faults never happened proves nothing: it fails, and says which one."""
    verdict = _verdict(
        [CheckResult("desks", 1)], [_fault(FaultKind.APNS_BURST, "apns:429", "ConnectError: refused")]
    )
    assert not verdict.passed
    assert verdict.survived == 0
    assert any("NOT INJECTED: ConnectError: refused" in line for line in render(verdict))
