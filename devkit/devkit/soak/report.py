"""The soak's verdict as text: the checks' table, the faults, the figures, every violation, and
the last line other tools read (`soak: seed N, M min: <k> faults survived, <n> violations`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from devkit.soak.faults import InjectedFault
from devkit.soak.model import CheckResult


@dataclass(frozen=True)
class SoakVerdict:
    seed: int
    minutes: float
    checks: Sequence[CheckResult]
    faults: Sequence[InjectedFault]
    duration_seconds: float
    restarts: Mapping[str, int]

    @property
    def violations(self) -> int:
        return sum(len(check.violations) for check in self.checks)

    @property
    def survived(self) -> int:
        return sum(1 for fault in self.faults if fault.survived)

    @property
    def passed(self) -> bool:
        return self.violations == 0 and all(fault.survived for fault in self.faults)

    def last_line(self) -> str:
        return (
            f"soak: seed {self.seed}, {self.minutes:g} min: "
            f"{self.survived} faults survived, {self.violations} violations"
        )


def _table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    body = [list(map(str, row)) for row in rows]
    widths = [max(len(cell) for cell in column) for column in zip(header, *body, strict=False)]
    lines = [" | ".join(cell.ljust(width) for cell, width in zip(header, widths, strict=False))]
    lines.append("-+-".join("-" * width for width in widths))
    lines += [" | ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False)) for row in body]
    return lines


def _figures(checks: Sequence[CheckResult]) -> str:
    return "; ".join(
        f"{check.name}: " + ", ".join(f"{key} {value:,}" for key, value in check.figures.items())
        for check in checks
        if check.figures
    )


def render(verdict: SoakVerdict) -> list[str]:
    """Every line of the report, the last line last."""
    lines = ["checks:"]
    lines += _table(
        ("check", "checked", "violations", "verdict"),
        (
            (check.name, f"{check.checked:,}", str(len(check.violations)), "ok" if check.passed else "FAILED")
            for check in verdict.checks
        ),
    )
    lines += ["", "faults:"]
    lines += _table(
        ("at s", "until s", "fault", "target", "hit"),
        (
            (
                f"{fault.started:.1f}",
                f"{fault.ended:.1f}",
                fault.planned.kind.value,
                fault.planned.target,
                fault.hit if fault.error is None else f"NOT INJECTED: {fault.error}",
            )
            for fault in verdict.faults
        ),
    )
    restarts = ", ".join(f"{name} {count}" for name, count in sorted(verdict.restarts.items())) or "none"
    lines += [
        "",
        f"figures: {_figures(verdict.checks)}",
        f"processes restarted: {restarts}",
        f"duration: {verdict.duration_seconds / 60:.1f} min",
    ]
    broken = [violation for check in verdict.checks for violation in check.violations]
    if broken:
        lines += ["", "violations:"] + [f"  {violation.line()}" for violation in broken]
    lines.append(verdict.last_line())
    return lines
