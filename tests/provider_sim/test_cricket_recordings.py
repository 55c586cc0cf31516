"""Cricket recordings and gzip: loading, checking, and every tool that reads recordings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from devkit.devstack.monitor import fixture_ids
from devkit.simulators.provider.recording import RecordingError, load_recording
from devkit.simulators.provider.recording_file import find_recording, read_recording, recording_name
from domain.cricket.board import cricket_fixture_id
from tests.provider_sim.conftest import BASIC, BASIC_ID, StartSim
from tests.provider_sim.test_cricket import T20, T20_ID, ball, cget, cricket_fixture, data, write_cricket
from tests.support.provider import expected, line_times, recording


def lines() -> list[dict[str, object]]:
    return [
        {"t": 0, "fixture": cricket_fixture(7, "NS")},
        {"t": 60, "fixture": cricket_fixture(7, "1st Innings", balls=[ball(1, 0.1, 60)])},
        {"t": 90, "fixture": cricket_fixture(7, "1st Innings", balls=[ball(1, 0.1, 60), ball(4, 0.2, 90)])},
    ]


async def test_a_gzip_recording_serves_like_the_plain_one(tmp_path: Path, start_sim: StartSim) -> None:
    """`NAME.jsonl.gz` and `NAME.jsonl` load to the same lines and serve the same bodies."""
    plain = write_cricket(tmp_path / "match.jsonl", lines())
    (tmp_path / "packed").mkdir()
    packed = write_cricket(tmp_path / "packed" / "match.jsonl.gz", lines())
    assert packed.read_bytes()[:2] == b"\x1f\x8b"
    assert load_recording(plain).fixtures == load_recording(packed).fixtures
    assert load_recording(packed).sport == "cricket"
    bodies = []
    for path in (plain, packed):
        sim = await start_sim([path], t=90, wall=lambda: 1893499200.0)
        bodies.append(data(await cget(sim, "fixtures/7", include="balls")))
    assert bodies[0] == bodies[1]
    assert [item["id"] for item in bodies[0]["balls"]] == [1, 4]


def test_the_content_decides_not_the_name(tmp_path: Path) -> None:
    """A compressed file with a plain name still loads; a broken gzip names the file."""
    renamed = write_cricket(tmp_path / "renamed.jsonl", lines(), compress=True)
    assert len(load_recording(renamed).fixtures) == 3
    broken = tmp_path / "broken.jsonl.gz"
    broken.write_bytes(b"\x1f\x8b" + b"not gzip at all")
    with pytest.raises(RecordingError) as caught:
        load_recording(broken)
    assert str(broken) in str(caught.value)
    assert "cannot read" in str(caught.value)


def test_cricket_headers_and_times_are_checked(tmp_path: Path) -> None:
    """An unknown sport and a cricket time in football's form are refused at load, with the line."""
    tennis = tmp_path / "tennis.jsonl"
    header = {
        "recording": 1,
        "sport": "tennis",
        "name": "x",
        "start": "2024-04-01T12:00:00Z",
        "fixtures": [7],
    }
    tennis.write_text(json.dumps(header) + "\n")
    with pytest.raises(RecordingError, match="sport"):
        load_recording(tennis)
    bad = cricket_fixture(7, "NS")
    bad["starting_at"] = "2024-04-01 13:00:00"
    path = write_cricket(tmp_path / "bad.jsonl.gz", [{"t": 0, "fixture": bad}])
    with pytest.raises(RecordingError, match="bad time field") as caught:
        load_recording(path)
    assert caught.value.line == 2


def test_the_bundled_match_loads_with_its_expected_outcome() -> None:
    """`recordings/cricket-t20.jsonl.gz` is found by name by the test helpers, as a `.jsonl` is."""
    assert recording("cricket-t20") == T20
    assert find_recording(T20.parent, "football-basic") == BASIC
    assert recording_name(T20) == "cricket-t20"
    loaded = load_recording(T20)
    assert loaded.header.fixtures == (T20_ID,)
    assert (
        loaded.fixtures[-1].fixture["status"] == expected("cricket-t20")[str(T20_ID)]["status"] == "Finished"
    )
    times = line_times(["cricket-t20"])
    assert times[0] == 0.0 and times[-1] == 16368.0
    assert read_recording(T20).splitlines()[0].startswith('{"recording": 1, "sport": "cricket"')


def test_the_dev_stack_reads_fixture_ids_of_both_kinds() -> None:
    """`scoreline dev --recording` with football and gzip cricket recordings together; the
    cricket fixture under Scoreline's id (the demo's monitor reads the API with it)."""
    assert fixture_ids((BASIC, T20)) == [BASIC_ID, cricket_fixture_id(T20_ID)]
