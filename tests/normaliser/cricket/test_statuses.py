"""Cricket v2 status text maps onto `MatchState`; `live` never decides anything."""

from __future__ import annotations

import pytest

from activities.provider.cricket.normaliser import normalise_cricket_fixture
from activities.provider.cricket.statuses import cricket_state, stumps_day
from domain.snapshot import MatchState
from tests.normaliser.cricket.samples import fixture

S = MatchState

STATUS_TABLE = [
    ("NS", S.SCHEDULED),
    ("Delayed", S.DELAYED),
    ("1st Innings", S.INNINGS_1),
    ("2nd Innings", S.INNINGS_2),
    ("3rd Innings", S.INNINGS_3),
    ("4th Innings", S.INNINGS_4),
    ("Innings Break", S.INNINGS_BREAK),
    ("Lunch", S.LUNCH),
    ("Tea Break", S.TEA),
    ("Dinner", S.DINNER),
    ("Stump Day 1", S.STUMPS),
    ("Stump Day 4", S.STUMPS),
    ("Int.", S.INTERRUPTED),
    ("Finished", S.FINISHED),
    ("Aban.", S.ABANDONED),
    ("Cancl.", S.CANCELLED),
    ("Cancl", S.CANCELLED),
    ("Postp.", S.POSTPONED),
]

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(("status", "state"), STATUS_TABLE)
def test_status_table(status: str, state: MatchState) -> None:
    """Each documented status maps to its state and the text is kept as the provider state."""
    snapshot = normalise_cricket_fixture(fixture(status=status))
    assert (snapshot.state, snapshot.provider_state) == (state, status)


@pytest.mark.parametrize("status", ["Super Over", "Stump Day", "Stump Day x", "", "Finished!"])
def test_unknown_status_is_kept_as_unknown(status: str) -> None:
    """A status not in the table is `unknown`, never an error."""
    snapshot = normalise_cricket_fixture(fixture(status=status))
    assert (snapshot.state, snapshot.provider_state) == (S.UNKNOWN, status)


def test_missing_status_is_unknown() -> None:
    """No status at all is still a fixture."""
    payload = fixture()
    del payload["status"]
    assert normalise_cricket_fixture(payload).state is S.UNKNOWN


def test_hand_typed_spacing_and_case_are_tolerated() -> None:
    """The status is typed by people: case and doubled spaces do not matter."""
    assert cricket_state(" tea  break ") is S.TEA
    assert cricket_state("STUMP DAY 2") is S.STUMPS


def test_stumps_day_is_on_the_board() -> None:
    """The day exists only in the status text; it reaches the board while at stumps."""
    assert (stumps_day("Stump Day 3"), stumps_day("Lunch"), stumps_day(None)) == (3, None, None)
    board = normalise_cricket_fixture(fixture(status="Stump Day 2", type="Test")).cricket
    assert board is not None and board.stumps_day == 2
    board = normalise_cricket_fixture(fixture(status="Lunch", type="Test")).cricket
    assert board is not None and board.stumps_day is None


@pytest.mark.parametrize("live", [True, False])
def test_live_flag_never_decides(live: bool) -> None:
    """`live` is true on every fixture, finished ones included: the status alone decides."""
    assert normalise_cricket_fixture(fixture(status="Finished", live=live)).state is S.FINISHED
    assert normalise_cricket_fixture(fixture(status="NS", live=live)).state is S.SCHEDULED
