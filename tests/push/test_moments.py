"""Key moments (pure): which log entries are moments, and the text form older histories carry."""

from __future__ import annotations

import pytest

from domain.moments import KeyMoment, entry_moment, moments_of
from domain.progress import IngestSummary
from domain.snapshot import MatchState

pytestmark = pytest.mark.unit


def test_a_key_event_is_a_moment_unless_rescinded() -> None:
    """A goal or red card entry is its moment; a rescinded one, a corner or a yellow card is none."""
    assert entry_moment("event", {"type": "goal", "side": "home"}) == KeyMoment(kind="goal", side="home")
    assert entry_moment("event", {"type": "red_card", "side": "away"}) == KeyMoment(
        kind="red_card", side="away"
    )
    assert entry_moment("event", {"type": "goal", "side": "home", "rescinded": True}) is None
    assert entry_moment("event", {"type": "corner", "side": "home"}) is None
    assert entry_moment("state", {"state": "half_time"}) is None


def test_amendments_count_only_when_they_make_or_restore_a_key_moment() -> None:
    """An amendment turning a card red, or restoring a goal, is a moment; a moved minute is not."""
    turned_red = {"type": "red_card", "side": "away", "changed": ["type"], "restored": False}
    assert entry_moment("amendment", turned_red) == KeyMoment(kind="red_card", side="away")
    restored = {"type": "goal", "side": "home", "changed": [], "restored": True}
    assert entry_moment("amendment", restored) == KeyMoment(kind="goal", side="home")
    moved = {"type": "goal", "side": "home", "changed": ["minute"], "restored": False}
    assert entry_moment("amendment", moved) is None
    older = {"changed": ["type"], "after": {"type": "penalty_goal"}, "restored": False}
    assert entry_moment("amendment", older) == KeyMoment(kind="penalty_goal")


def test_a_retraction_of_a_key_moment_is_a_retraction_in_log_order() -> None:
    """Goal, then its retraction: two moments, in that order; a retracted corner is none."""
    entries = [
        ("event", {"type": "goal", "side": "away"}),
        ("retraction", {"type": "corner"}),
        ("retraction", {"type": "goal", "side": "away"}),
    ]
    assert moments_of(entries) == (KeyMoment(kind="goal", side="away"), KeyMoment(kind="retraction"))
    assert [m.alerting for m in moments_of(entries)] == [True, False]


def test_moments_recorded_as_text_by_older_histories_still_read() -> None:
    """`goal:home`, `retraction:goal`, `retraction` become the same typed moments."""
    summary = IngestSummary.model_validate(
        {
            "fixture_id": 1,
            "version": 5,
            "previous_version": 4,
            "state": MatchState.LIVE_FIRST_HALF,
            "home": 1,
            "away": 0,
            "key_moments": ["goal:home", "retraction:goal", "retraction"],
        }
    )
    assert summary.key_moments == (
        KeyMoment(kind="goal", side="home"),
        KeyMoment(kind="retraction"),
        KeyMoment(kind="retraction"),
    )
