"""The example recordings normalise line by line and end where their `.expected.json` says."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from activities.provider.normaliser import normalise_fixture
from domain.snapshot import MatchState, Snapshot, Stream
from tests.normaliser.samples import recording_files, recording_lines

pytestmark = pytest.mark.unit

RECORDINGS = recording_files()


def _snapshots(path: Path) -> list[Snapshot]:
    return [normalise_fixture(line["fixture"]) for line in recording_lines(path) if "fixture" in line]


@pytest.mark.parametrize("path", RECORDINGS, ids=lambda p: p.stem)
def test_every_fixture_line_normalises(path: Path) -> None:
    """Every fixture line of a recording gives a snapshot, and fault lines carry no fixture."""
    lines = recording_lines(path)
    snapshots = _snapshots(path)
    assert len(snapshots) == sum(1 for line in lines if "fixture" in line)
    assert all(snapshot.state is not MatchState.UNKNOWN for snapshot in snapshots)


@pytest.mark.parametrize("path", RECORDINGS, ids=lambda p: p.stem)
def test_final_line_matches_expected(path: Path) -> None:
    """The last snapshot per fixture has the expected state, score and item keys."""
    expected = json.loads(path.with_name(f"{path.stem}.expected.json").read_text())
    last: dict[int, Snapshot] = {}
    for snapshot in _snapshots(path):
        last[snapshot.fixture_id] = snapshot
    assert sorted(last) == sorted(int(fixture_id) for fixture_id in expected)
    for fixture_id, want in expected.items():
        final = last[int(fixture_id)]
        assert final.provider_state == want["state"]
        assert final.scores is not None and final.scores.current is not None
        assert final.scores.current.model_dump() == want["score"]
        assert {item.key for item in final.items()} == {(Stream(s), i) for s, i in want["events"]}


@pytest.mark.parametrize("path", RECORDINGS, ids=lambda p: p.stem)
def test_keys_seen_but_gone_are_the_expected_retractions(path: Path) -> None:
    """Keys shown once and missing at the end are exactly the expected retractions."""
    expected = json.loads(path.with_name(f"{path.stem}.expected.json").read_text())
    seen: dict[int, set[tuple[Stream, int]]] = {}
    last: dict[int, Snapshot] = {}
    for snapshot in _snapshots(path):
        seen.setdefault(snapshot.fixture_id, set()).update(item.key for item in snapshot.items())
        last[snapshot.fixture_id] = snapshot
    for fixture_id, want in expected.items():
        final_keys = {item.key for item in last[int(fixture_id)].items()}
        gone = seen[int(fixture_id)] - final_keys
        assert gone == {(Stream(s), i) for s, i in want["retracted"]}


@pytest.mark.parametrize("path", RECORDINGS, ids=lambda p: p.stem)
def test_snapshots_round_trip_through_json(path: Path) -> None:
    """Each snapshot survives the JSON trip a Temporal payload takes."""
    for snapshot in _snapshots(path):
        assert Snapshot.model_validate_json(snapshot.model_dump_json()) == snapshot
        assert Snapshot.model_validate(snapshot.model_dump(mode="json")) == snapshot
