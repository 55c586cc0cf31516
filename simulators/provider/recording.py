"""Read a recording (JSON Lines) and reject anything the replay could not serve.

Line 1 is the header; every later line has `t` (seconds since the header's `start`,
non-decreasing) and either a `fixture` (the provider's full view of that fixture from `t` on) or a
`fault` (see `faults.py`). Everything is checked at load, so a bad recording stops the simulator at
start with the file and line, never in the middle of a replay.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, ValidationError

from simulators.provider.faults import FaultSpec
from simulators.provider.timemap import TimeMap


class RecordingError(ValueError):
    """A recording that cannot be replayed; the message names the file and line."""

    def __init__(self, path: Path, line: int | None, reason: str) -> None:
        where = f"{path}:{line}" if line is not None else str(path)
        super().__init__(f"{where}: {reason}")
        self.path = path
        self.line = line
        self.reason = reason


class RecordingHeader(BaseModel):
    """Line 1 of a recording. Unknown keys are kept for people, ignored by the replay."""

    model_config = ConfigDict(frozen=True)

    recording: Literal[1]
    sport: Literal["football"]
    name: str
    start: AwareDatetime
    fixtures: tuple[int, ...] = Field(min_length=1)


class _FixtureLine(BaseModel):
    model_config = ConfigDict(extra="forbid")

    t: float = Field(ge=0, strict=True)
    fixture: dict[str, Any]


class _FaultLine(BaseModel):
    model_config = ConfigDict(extra="forbid")

    t: float = Field(ge=0, strict=True)
    fault: FaultSpec


@dataclass(frozen=True)
class FixtureLine:
    """From replay time `t` on, the provider shows `fixture` exactly like this."""

    t: float
    fixture: dict[str, Any]


@dataclass(frozen=True)
class FaultLine:
    """From replay time `t` on, the simulator misbehaves as `fault` says."""

    t: float
    fault: FaultSpec


@dataclass(frozen=True)
class Recording:
    """A loaded, checked recording."""

    path: Path
    header: RecordingHeader
    fixtures: tuple[FixtureLine, ...]
    faults: tuple[FaultLine, ...]

    @property
    def origin(self) -> float:
        """Epoch seconds of the header's `start`: replay `t = 0`."""
        return self.header.start.timestamp()


def _reason(error: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(part) for part in issue['loc']) or 'line'}: {issue['msg']}"
        for issue in error.errors()
    )


def _object(path: Path, number: int, text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RecordingError(path, number, f"not valid JSON: {exc.msg} (column {exc.colno})") from None
    if not isinstance(value, dict):
        raise RecordingError(path, number, f"expected a JSON object, got {type(value).__name__}")
    return value


def _fixture_line(path: Path, number: int, raw: dict[str, Any], header: RecordingHeader) -> FixtureLine:
    try:
        parsed = _FixtureLine.model_validate(raw)
    except ValidationError as exc:
        raise RecordingError(path, number, _reason(exc)) from None
    fixture_id = parsed.fixture.get("id")
    if not isinstance(fixture_id, int) or isinstance(fixture_id, bool):
        raise RecordingError(path, number, "fixture.id must be an integer")
    if fixture_id not in header.fixtures:
        raise RecordingError(path, number, f"fixture {fixture_id} is not listed in the header's fixtures")
    try:
        # The identity mapping parses every time field, so a bad one fails here, not mid-replay.
        TimeMap(origin=0.0, clock_zero=0.0, speed=1.0).apply(parsed.fixture)
    except ValueError as exc:
        raise RecordingError(path, number, f"fixture {fixture_id}: bad time field: {exc}") from None
    return FixtureLine(t=parsed.t, fixture=parsed.fixture)


def _fault_line(path: Path, number: int, raw: dict[str, Any]) -> FaultLine:
    try:
        parsed = _FaultLine.model_validate(raw)
    except ValidationError as exc:
        raise RecordingError(path, number, _reason(exc)) from None
    return FaultLine(t=parsed.t, fault=parsed.fault)


def load_recording(path: Path) -> Recording:
    """Read and check one recording.

    Raises:
        RecordingError: The file cannot be read, or a line is malformed; the message names both.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RecordingError(path, None, f"cannot read: {exc}") from None
    # Blank lines (a trailing newline, a spacer) carry nothing; line numbers stay the file's.
    numbered = [(number, line) for number, line in enumerate(text.splitlines(), 1) if line.strip()]
    if not numbered:
        raise RecordingError(path, 1, "empty file: expected a header line")
    header_number, header_text = numbered[0]
    try:
        header = RecordingHeader.model_validate(_object(path, header_number, header_text))
    except ValidationError as exc:
        raise RecordingError(path, header_number, f"header: {_reason(exc)}") from None

    fixtures: list[FixtureLine] = []
    faults: list[FaultLine] = []
    last_t = 0.0
    for number, line_text in numbered[1:]:
        raw = _object(path, number, line_text)
        if ("fixture" in raw) == ("fault" in raw):
            raise RecordingError(path, number, "a line needs exactly one of 'fixture' or 'fault'")
        parsed: FixtureLine | FaultLine
        if "fixture" in raw:
            parsed = _fixture_line(path, number, raw, header)
            fixtures.append(parsed)
        else:
            parsed = _fault_line(path, number, raw)
            faults.append(parsed)
        if parsed.t < last_t:
            raise RecordingError(path, number, f"t={parsed.t} goes back in time (previous line t={last_t})")
        last_t = parsed.t

    seen = {line.fixture["id"] for line in fixtures}
    missing = [fixture_id for fixture_id in header.fixtures if fixture_id not in seen]
    if missing:
        raise RecordingError(path, header_number, f"header lists fixtures with no line: {missing}")
    return Recording(path=path, header=header, fixtures=tuple(fixtures), faults=tuple(faults))
