"""The fingerprint that lets an unchanged fixture skip normalisation: it must move with every
change the normaliser would see, and never raise."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from activities.provider.cricket.fingerprint import fingerprint
from tests.match.cricket import recorded_lines

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def fixture() -> dict[str, Any]:
    """The real T20 mid-innings."""
    line = [line for line in recorded_lines("cricket-t20") if line["t"] <= 5000.0][-1]
    return dict(line["fixture"])


def test_the_same_fixture_has_the_same_fingerprint(fixture: dict[str, Any]) -> None:
    assert fingerprint(fixture) == fingerprint(copy.deepcopy(fixture)) is not None


@pytest.mark.parametrize(
    "change",
    [
        "a new ball",
        "a ball edited in place",
        "the status",
        "the result",
        "a runs row",
        "the balls include dropped",
        "a revised target",
    ],
)
def test_every_change_moves_the_fingerprint(fixture: dict[str, Any], change: str) -> None:
    edited = copy.deepcopy(fixture)
    if change == "a new ball":
        edited["balls"].append({**edited["balls"][-1], "id": edited["balls"][-1]["id"] + 3})
    elif change == "a ball edited in place":
        edited["balls"][3] = {
            **edited["balls"][3],
            "score_id": 4,
            "updated_at": "2099-01-01T00:00:00.000000Z",
        }
    elif change == "the status":
        edited["status"] = "Innings Break"
    elif change == "the result":
        edited["winner_team_id"] = 2
    elif change == "a runs row":
        edited["runs"][0] = {**edited["runs"][0], "score": edited["runs"][0]["score"] + 1}
    elif change == "the balls include dropped":
        del edited["balls"]
    elif change == "a revised target":
        edited["rpc_target"] = 150
    assert fingerprint(edited) != fingerprint(fixture)


@pytest.mark.parametrize("raw", [None, 3, "x", [], {"balls": "no"}, {"runs": 5}, {"balls": [1, None]}])
def test_an_odd_payload_has_no_fingerprint_or_a_harmless_one(raw: object) -> None:
    """Never an exception: None (normalise as usual) or a value that compares."""
    mark = fingerprint(raw)
    assert mark is None or mark == fingerprint(copy.deepcopy(raw))
