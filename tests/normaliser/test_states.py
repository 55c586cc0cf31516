"""Provider states map onto the domain `MatchState` and keep the provider's own code."""

from __future__ import annotations

import pytest

from activities.provider.normaliser import normalise_fixture
from domain.snapshot import FinishedAfter, MatchState
from tests.normaliser.samples import sample

pytestmark = pytest.mark.unit

S = MatchState
F = FinishedAfter

# provider-api.md §4.1: id, developer_name, domain state, finished_after.
STATE_TABLE = [
    (1, "NS", S.SCHEDULED, None),
    (2, "INPLAY_1ST_HALF", S.LIVE_FIRST_HALF, None),
    (3, "HT", S.HALF_TIME, None),
    (4, "BREAK", S.EXTRA_TIME_BREAK, None),
    (5, "FT", S.FINISHED, F.REGULAR_TIME),
    (6, "INPLAY_ET", S.EXTRA_TIME, None),
    (7, "AET", S.FINISHED, F.EXTRA_TIME),
    (8, "FT_PEN", S.FINISHED, F.PENALTIES),
    (9, "INPLAY_PENALTIES", S.PENALTIES, None),
    (10, "POSTPONED", S.POSTPONED, None),
    (11, "SUSPENDED", S.SUSPENDED, None),
    (12, "CANCELLED", S.CANCELLED, None),
    (13, "TBA", S.TO_BE_ANNOUNCED, None),
    (14, "WO", S.AWARDED, None),
    (15, "ABANDONED", S.ABANDONED, None),
    (16, "DELAYED", S.DELAYED, None),
    (17, "AWARDED", S.AWARDED, None),
    (18, "INTERRUPTED", S.INTERRUPTED, None),
    (19, "AWAITING_UPDATES", S.AWAITING_UPDATES, None),
    (20, "DELETED", S.DELETED, None),
    (21, "EXTRA_TIME_BREAK", S.EXTRA_TIME_BREAK, None),
    (22, "INPLAY_2ND_HALF", S.LIVE_SECOND_HALF, None),
    (23, "INPLAY_ET_2ND_HALF", S.EXTRA_TIME, None),
    (25, "PEN_BREAK", S.PENALTIES_BREAK, None),
    (26, "PENDING", S.PENDING, None),
]


def _with_state(
    state_id: object, developer_name: object = None, *, include: bool = True
) -> dict[str, object]:
    fixture = sample()
    fixture["state_id"] = state_id
    if include:
        fixture["state"] = {
            "id": state_id,
            "state": developer_name,
            "name": "x",
            "developer_name": developer_name,
        }
    else:
        del fixture["state"]
    return fixture


@pytest.mark.parametrize(("state_id", "name", "state", "finished_after"), STATE_TABLE)
def test_state_table(
    state_id: int, name: str, state: MatchState, finished_after: FinishedAfter | None
) -> None:
    """Each provider state id maps to its domain state and keeps the provider id and name."""
    snapshot = normalise_fixture(_with_state(state_id, name))
    assert (snapshot.state, snapshot.finished_after) == (state, finished_after)
    assert (snapshot.provider_state_id, snapshot.provider_state) == (state_id, name)


@pytest.mark.parametrize(("state_id", "name", "state", "finished_after"), STATE_TABLE)
def test_state_without_the_state_include(
    state_id: int, name: str, state: MatchState, finished_after: FinishedAfter | None
) -> None:
    """The base `state_id` alone decides the state when the `state` include is dropped."""
    snapshot = normalise_fixture(_with_state(state_id, include=False))
    assert (snapshot.state, snapshot.finished_after, snapshot.provider_state) == (state, finished_after, name)


def test_unknown_state_id_with_a_known_developer_name() -> None:
    """A state id newer than our table falls back on the include's developer name."""
    snapshot = normalise_fixture(_with_state(99, "INPLAY_ET_2ND_HALF"))
    assert snapshot.state is S.EXTRA_TIME
    assert (snapshot.provider_state_id, snapshot.provider_state) == (99, "INPLAY_ET_2ND_HALF")


def test_unknown_state_is_kept_as_unknown() -> None:
    """An unknown state is `unknown`, never an error, and the provider's code is kept."""
    snapshot = normalise_fixture(_with_state(24, "SOMETHING_NEW"))
    assert snapshot.state is S.UNKNOWN and snapshot.finished_after is None
    assert (snapshot.provider_state_id, snapshot.provider_state) == (24, "SOMETHING_NEW")


def test_state_id_wins_over_a_disagreeing_include() -> None:
    """The base field decides, so a fixture reads the same with and without the include."""
    fixture = _with_state(22, "HT")
    assert normalise_fixture(fixture).state is S.LIVE_SECOND_HALF


def test_no_state_at_all_is_unknown() -> None:
    """A fixture without `state_id` or `state` is still a fixture, in state `unknown`."""
    fixture = sample()
    del fixture["state_id"], fixture["state"]
    snapshot = normalise_fixture(fixture)
    assert (snapshot.state, snapshot.provider_state_id, snapshot.provider_state) == (S.UNKNOWN, None, None)
