"""Read a recording (JSON Lines, plain or gzip) and reject anything the replay could not serve.

Line 1 is the header; every later line has `t` (seconds since the header's `start`,
non-decreasing) and either a `fixture` (the provider's full view of that fixture from `t` on) or a
`fault` (see `faults.py`). The header's `sport` says which API the fixtures belong to: Football v3
objects, or Cricket v2 ones (`cricket/`). Everything is checked at load, so a bad recording stops
the simulator at start with the file and line, never in the middle of a replay.

Every line repeats the fixture's whole relation lists (a cricket line carries every ball so far), so
identical relation items are shared between lines (`_Sharing`): a T20 recording holds a few hundred
distinct balls, not tens of thousands of copies. A loaded recording is kept for the process (by
path and content), since loading a large one takes seconds and tests start many simulators.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gzip
import hashlib
import io
import json
from collections import OrderedDict
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal, cast

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, ValidationError

from devkit.simulators.provider.cricket_timemap import CricketTimeMap
from devkit.simulators.provider.faults import FaultSpec
from devkit.simulators.provider.recording_file import GZIP_MAGIC
from devkit.simulators.provider.timemap import TimeMap

Sport = Literal["football", "cricket"]


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
    sport: Sport
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

    @property
    def sport(self) -> Sport:
        """Which API its fixtures belong to."""
        return self.header.sport


class _Sharing:
    """Identical relation items (a ball, an event, a team) become one object across lines.

    Served fixtures are always copies (includes and time mapping build new objects), so the
    shared ones are never changed. The JSON text is the identity: `1` and `1.0` stay apart. Each
    distinct item's times are checked once, when it is first seen.

    Args:
        sport: Which time mapping checks the times.
    """

    def __init__(self, sport: Sport) -> None:
        self._seen: dict[str, Any] = {}
        self._check = (
            CricketTimeMap(origin=0.0, clock_zero=0.0, speed=1.0).apply
            if sport == "cricket"
            else TimeMap(origin=0.0, clock_zero=0.0, speed=1.0).apply
        )

    def _one(self, item: Any) -> Any:
        if not isinstance(item, dict | list):
            return item
        key = json.dumps(item, sort_keys=True, separators=(",", ":"))
        shared = self._seen.get(key)
        if shared is None:
            self._check(item)
            shared = self._seen[key] = item
        return shared

    def fixture(self, fixture: dict[str, Any]) -> dict[str, Any]:
        """`fixture` with its relation items (and object-valued fields) shared.

        Raises:
            ValueError: A time field that is not a datetime of the recording's sport.
        """
        shared: dict[str, Any] = {}
        for key, value in fixture.items():
            if isinstance(value, list):
                shared[key] = [self._one(item) for item in value]
            else:
                shared[key] = self._one(value)
        # The identity mapping parses every time field, so a bad one fails here, not mid-replay;
        # its own fields only: the shared items are checked already.
        self._check({key: value for key, value in fixture.items() if not isinstance(value, dict | list)})
        return shared


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


def _fixture_line(
    path: Path, number: int, raw: dict[str, Any], header: RecordingHeader, sharing: _Sharing
) -> FixtureLine:
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
        shared = sharing.fixture(parsed.fixture)
    except ValueError as exc:
        raise RecordingError(path, number, f"fixture {fixture_id}: bad time field: {exc}") from None
    return FixtureLine(t=parsed.t, fixture=shared)


def _fault_line(path: Path, number: int, raw: dict[str, Any]) -> FaultLine:
    try:
        parsed = _FaultLine.model_validate(raw)
    except ValidationError as exc:
        raise RecordingError(path, number, _reason(exc)) from None
    return FaultLine(t=parsed.t, fault=parsed.fault)


def _lines(path: Path, raw: bytes) -> Generator[tuple[int, str], None, None]:
    """The non-blank lines with their numbers, decoded as they are parsed (a cricket recording is
    tens of megabytes once decompressed)."""
    binary: IO[bytes] = io.BytesIO(raw)
    if raw.startswith(GZIP_MAGIC):
        binary = cast(IO[bytes], gzip.GzipFile(fileobj=binary))
    try:
        with io.TextIOWrapper(binary, encoding="utf-8") as handle:
            # Blank lines (a trailing newline, a spacer) carry nothing; line numbers stay the file's.
            for number, line in enumerate(handle, 1):
                if line.strip():
                    yield number, line
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise RecordingError(path, None, f"cannot read: {exc}") from None


# Recordings already loaded in this process, by path and content: a recording is immutable once
# loaded (served fixtures are copies), and tests start many simulators on the same large file.
_LOADED: OrderedDict[tuple[Path, str], Recording] = OrderedDict()
LOADED_KEPT = 4


def load_recording(path: Path) -> Recording:
    """Read and check one recording, `NAME.jsonl` or gzip-compressed `NAME.jsonl.gz`.

    Raises:
        RecordingError: The file cannot be read, or a line is malformed; the message names both.
    """
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise RecordingError(path, None, f"cannot read: {exc}") from None
    key = (path.resolve(), hashlib.sha256(raw).hexdigest())
    loaded = _LOADED.get(key)
    if loaded is None:
        with contextlib.closing(_lines(path, raw)) as numbered:
            loaded = _load(path, numbered)
        _LOADED[key] = loaded
        while len(_LOADED) > LOADED_KEPT:
            _LOADED.popitem(last=False)
    _LOADED.move_to_end(key)
    return loaded if loaded.path == path else dataclasses.replace(loaded, path=path)


def _load(path: Path, numbered: Iterator[tuple[int, str]]) -> Recording:
    first = next(numbered, None)
    if first is None:
        raise RecordingError(path, 1, "empty file: expected a header line")
    header_number, header_text = first
    try:
        header = RecordingHeader.model_validate(_object(path, header_number, header_text))
    except ValidationError as exc:
        raise RecordingError(path, header_number, f"header: {_reason(exc)}") from None

    fixtures: list[FixtureLine] = []
    faults: list[FaultLine] = []
    sharing = _Sharing(header.sport)
    last_t = 0.0
    for number, line_text in numbered:
        raw = _object(path, number, line_text)
        if ("fixture" in raw) == ("fault" in raw):
            raise RecordingError(path, number, "a line needs exactly one of 'fixture' or 'fault'")
        parsed: FixtureLine | FaultLine
        if "fixture" in raw:
            parsed = _fixture_line(path, number, raw, header, sharing)
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
