"""Live Activity generations (pure): what a change or the renewal timer does to the followers'
activities, and the pushes that end one generation and start the next."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from domain.progress import MatchProgress
from domain.push_plan import (
    STUMPS_DISMISS_AFTER_SECONDS,
    after_change,
    at_the_cap,
    end_push,
    generation_end_push,
    renewal_left,
    start_key,
    start_push,
)
from domain.pushes import PushInput
from domain.snapshot import MatchState
from domain.states import BREAK_STATES, OVER_STATES, PLAYING_STATES

pytestmark = pytest.mark.unit

FIXTURE = 81000001
AT = datetime(2026, 12, 2, 10, 0, tzinfo=UTC)
PROGRESS = MatchProgress(version=40, state=MatchState.INNINGS_2, home=180, away=95)


@pytest.mark.parametrize("state", sorted(PLAYING_STATES | BREAK_STATES | OVER_STATES))
def test_a_running_generation_is_updated_by_every_change_but_stumps(state: MatchState) -> None:
    """Play, a break or the end: an update (the final `end` follows the match's end, as before)."""
    assert after_change(state, overnight=False) == "update"


def test_stumps_updates_then_ends_the_day() -> None:
    """Into stumps: the stumps state (with any last-ball alert) goes out, then the day's end."""
    assert after_change(MatchState.STUMPS, overnight=False) == "update_then_end_the_day"


@pytest.mark.parametrize("state", sorted(PLAYING_STATES | BREAK_STATES))
def test_overnight_the_next_generation_starts_when_play_resumes(state: MatchState) -> None:
    assert after_change(state, overnight=True) == "start_next"


@pytest.mark.parametrize(
    "state",
    [MatchState.STUMPS, MatchState.DELAYED, MatchState.INTERRUPTED, *sorted(OVER_STATES)],
)
def test_overnight_a_change_without_play_reaches_no_one(state: MatchState) -> None:
    """A rain delay on the morning of day two, or a result decided overnight: no activity runs,
    so nothing is started and nothing is updated."""
    assert after_change(state, overnight=True) == "nothing"


def test_at_the_cap_play_and_breaks_renew_stumps_ends_and_the_end_waits() -> None:
    assert at_the_cap(MatchState.INNINGS_1) == "renew"
    assert at_the_cap(MatchState.TEA) == "renew"
    assert at_the_cap(MatchState.SUSPENDED) == "renew"
    assert at_the_cap(MatchState.LIVE_SECOND_HALF) == "renew"
    assert at_the_cap(MatchState.STUMPS) == "end_the_day"
    assert at_the_cap(MatchState.FINISHED) == "nothing"


def test_renewal_left_counts_from_the_generations_start() -> None:
    renew_after = timedelta(hours=7, minutes=30)
    assert renewal_left(AT, renew_after, AT + timedelta(hours=7)) == timedelta(minutes=30)
    assert renewal_left(AT, renew_after, AT + timedelta(hours=8)) == -timedelta(minutes=30)


def test_each_generation_has_its_own_start_and_end_keys() -> None:
    """The first start is `kickoff` (as before generations), the next `renew-N`; the quiet ends are
    `renew-N-end` and `stumps-N-end`; the final end stays `full_time`: no two pushes share a key."""
    assert [start_key(n) for n in (1, 2, 3)] == ["kickoff", "renew-2", "renew-3"]
    keys = [
        start_push(FIXTURE, PROGRESS, AT).event_key,
        generation_end_push(FIXTURE, PROGRESS, AT, 1, overnight=False).event_key,
        start_push(FIXTURE, PROGRESS, AT, generation=2).event_key,
        generation_end_push(FIXTURE, PROGRESS, AT, 2, overnight=True).event_key,
        start_push(FIXTURE, PROGRESS, AT, generation=3).event_key,
        end_push(FIXTURE, PROGRESS, AT, 3).event_key,
    ]
    assert keys == ["kickoff", "renew-1-end", "renew-2", "stumps-2-end", "renew-3", "full_time"]


def test_a_renewal_end_is_quiet_and_dismissed_at_once() -> None:
    end = generation_end_push(FIXTURE, PROGRESS, AT, 1, overnight=False)
    assert (end.kind, end.generation, end.alert, end.priority) == ("end", 1, False, 10)
    assert end.dismiss_after_seconds == 0
    assert end.state.version == PROGRESS.version


def test_the_days_end_shows_the_close_of_play_for_a_while_then_goes() -> None:
    end = generation_end_push(FIXTURE, PROGRESS, AT, 2, overnight=True)
    assert (end.kind, end.generation, end.alert) == ("end", 2, False)
    assert end.dismiss_after_seconds == STUMPS_DISMISS_AFTER_SECONDS < 4 * 3600


def test_the_next_generations_start_carries_its_number_and_the_latest_state() -> None:
    start = start_push(FIXTURE, PROGRESS, AT, "trace-1", generation=2)
    assert (start.kind, start.generation, start.alert, start.priority) == ("start", 2, True, 10)
    assert (start.state.home, start.state.version, start.trace_id) == (180, 40, "trace-1")


def test_a_push_recorded_before_generations_is_for_the_first() -> None:
    """Histories hold pushes without the field: they decode as generation 1."""
    recorded = start_push(FIXTURE, PROGRESS, AT).model_dump(exclude={"generation"})
    assert PushInput.model_validate(recorded).generation == 1
