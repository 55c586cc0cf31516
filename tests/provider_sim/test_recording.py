"""Loading recordings: the examples load, and a bad one fails naming its file and line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from devkit.simulators.provider.app import create_app
from devkit.simulators.provider.config import ProviderSimConfig
from devkit.simulators.provider.faults import StatusFault
from devkit.simulators.provider.recording import RecordingError, load_recording
from tests.provider_sim.conftest import (
    BASIC,
    BASIC_ID,
    CORRECTION,
    THREE_MATCHES,
    recording_lines,
    write_recording,
)

HEADER = (
    '{"recording": 1, "sport": "football", "name": "x", "start": "2026-03-14T15:00:00Z", "fixtures": [1]}'
)
FIXTURE_LINE = '{"t": 0, "fixture": {"id": 1, "starting_at": "2026-03-14 15:02:00"}}'


@pytest.mark.parametrize("path", [BASIC, CORRECTION, THREE_MATCHES], ids=lambda p: p.stem)
def test_every_example_recording_loads(path: Path) -> None:
    """The bundled examples pass every load-time check."""
    recording = load_recording(path)
    assert recording.fixtures
    assert set(recording.header.fixtures) == {line.fixture["id"] for line in recording.fixtures}


@pytest.mark.parametrize(
    ("lines", "line_number", "reason"),
    [
        ([], 1, "empty file"),
        (['{"recording": 2}'], 1, "header"),
        ([HEADER, "{not json"], 2, "not valid JSON"),
        ([HEADER, "[1, 2]"], 2, "expected a JSON object"),
        ([HEADER, FIXTURE_LINE, '{"t": 5}'], 3, "exactly one of"),
        ([HEADER, FIXTURE_LINE, '{"t": 5, "fixture": {"id": 2}}'], 3, "not listed in the header"),
        ([HEADER, FIXTURE_LINE, '{"t": 5, "fixture": {"id": "1"}}'], 3, "fixture.id must be an integer"),
        ([HEADER, '{"t": 10, "fixture": {"id": 1}}', FIXTURE_LINE], 3, "goes back in time"),
        ([HEADER, '{"t": "10", "fixture": {"id": 1}}'], 2, "t:"),
        ([HEADER, '{"t": 0, "fixture": {"id": 1, "starting_at": "tomorrow"}}'], 2, "bad time field"),
        ([HEADER, FIXTURE_LINE, '{"t": 5, "fault": {"kind": "explode"}}'], 3, "fault"),
        (
            [HEADER, FIXTURE_LINE, '{"t": 5, "fault": {"kind": "status", "endpoints": ["nope"]}}'],
            3,
            "endpoints",
        ),
        ([HEADER.replace("[1]", "[1, 2]"), FIXTURE_LINE], 1, "no line: [2]"),
    ],
)
def test_a_malformed_recording_names_the_file_and_line(
    tmp_path: Path, lines: list[str], line_number: int, reason: str
) -> None:
    """Each kind of damage is reported as `<file>:<line>: <reason>`."""
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(RecordingError) as caught:
        load_recording(path)
    assert caught.value.line == line_number
    assert str(caught.value).startswith(f"{path}:{line_number}: ")
    assert reason in str(caught.value)


def test_create_app_fails_at_start_on_a_bad_recording(tmp_path: Path) -> None:
    """The app is never built from a broken recording, so the server never starts."""
    path = tmp_path / "bad.jsonl"
    path.write_text(HEADER + "\n{oops\n")
    with pytest.raises(RecordingError, match=r"bad\.jsonl:2: not valid JSON"):
        create_app(ProviderSimConfig(recordings=(path,)))


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    """A path that does not exist is reported with the path."""
    with pytest.raises(RecordingError, match="cannot read"):
        load_recording(tmp_path / "missing.jsonl")


def test_two_recordings_may_not_share_a_fixture() -> None:
    """football-three-matches replays 81000001 too, so it cannot run beside football-basic."""
    with pytest.raises(RecordingError, match=r"fixture 81000001 is also in .*football-basic\.jsonl"):
        create_app(ProviderSimConfig(recordings=(BASIC, THREE_MATCHES)))


def test_blank_lines_are_skipped_and_fault_lines_parsed(tmp_path: Path) -> None:
    """Blank lines carry nothing; fault lines become typed faults at their `t`."""
    lines = recording_lines(BASIC)[:2]
    path = write_recording(tmp_path / "r.jsonl", lines)
    text = path.read_text().replace("\n", "\n\n", 1) + json.dumps(
        {"t": 300, "fault": {"kind": "status", "status": 502, "duration": 60}}
    )
    path.write_text(text)
    recording = load_recording(path)
    assert [line.fixture["id"] for line in recording.fixtures] == [BASIC_ID, BASIC_ID]
    assert recording.faults[0].t == 300
    assert recording.faults[0].fault == StatusFault(kind="status", status=502, duration=60)
