"""Each example recording replays to the final state its `.expected.json` describes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.provider_sim.conftest import BASIC, CORRECTION, THREE_MATCHES, StartSim, recording_lines

Key = tuple[str, int]


def shown_keys(fixture: dict[str, Any]) -> set[Key]:
    """`(stream, id)` for every event and timeline entry a fixture shows."""
    return {(stream, entry["id"]) for stream in ("events", "timeline") for entry in fixture.get(stream, [])}


def current_score(fixture: dict[str, Any]) -> dict[str, int]:
    """The `CURRENT` goals per side."""
    return {
        row["score"]["participant"]: row["score"]["goals"]
        for row in fixture["scores"]
        if row["description"] == "CURRENT"
    }


def moments_with_new_keys(path: Path) -> list[float]:
    """Replay times at which some fixture's event or timeline ids change (to check each once)."""
    previous: dict[int, set[Key]] = {}
    moments: list[float] = []
    for line in recording_lines(path):
        fixture = line.get("fixture")
        if fixture is None:
            continue
        keys = shown_keys(fixture)
        if keys != previous.get(fixture["id"], set()) and line["t"] not in moments:
            moments.append(line["t"])
        previous[fixture["id"]] = keys
    return moments


@pytest.mark.parametrize("path", [BASIC, CORRECTION, THREE_MATCHES], ids=lambda p: p.stem)
async def test_recording_reaches_its_expected_final_state(path: Path, start_sim: StartSim) -> None:
    """Final state and score match; every key ever shown is stored or retracted, as expected."""
    expected: dict[str, Any] = json.loads(path.with_suffix(".expected.json").read_text())
    fixture_ids = ",".join(expected)
    sim = await start_sim([path])
    query = {"include": "state;scores;events;timeline"}

    ever_shown: dict[int, set[Key]] = {int(fixture_id): set() for fixture_id in expected}
    for t in moments_with_new_keys(path):
        await sim.clock(t=t)
        for fixture in (await sim.get(f"fixtures/multi/{fixture_ids}", **query)).json()["data"]:
            ever_shown[fixture["id"]] |= shown_keys(fixture)

    status = await sim.clock(t=recording_lines(path)[-1]["t"])
    assert status["end_t"] == status["t"]
    final = {f["id"]: f for f in (await sim.get(f"fixtures/multi/{fixture_ids}", **query)).json()["data"]}
    for fixture_id, want in expected.items():
        fixture = final[int(fixture_id)]
        stored = {(stream, entry_id) for stream, entry_id in want["events"]}
        retracted = {(stream, entry_id) for stream, entry_id in want["retracted"]}
        assert fixture["state"]["developer_name"] == want["state"]
        assert current_score(fixture) == want["score"]
        assert shown_keys(fixture) == stored
        assert ever_shown[int(fixture_id)] - stored == retracted
