"""The real IPL recording normalises on every line and ends where its `.expected.json` says."""

from __future__ import annotations

from functools import cache

import pytest

from activities.provider.cricket.normaliser import normalise_cricket_fixture
from domain.cricket.board import cricket_fixture_id
from domain.snapshot import MatchState, Side, Snapshot, Sport, Stream
from tests.normaliser.cricket.samples import (
    AWAY,
    HOME,
    expected,
    final_fixture,
    recording_fixtures,
    recording_length,
)

pytestmark = pytest.mark.unit

AMENDED = 9667958


@cache
def _snapshots() -> tuple[Snapshot, ...]:
    return tuple(normalise_cricket_fixture(fixture) for fixture in recording_fixtures())


def _final() -> Snapshot:
    return _snapshots()[-1]


def test_every_line_normalises_to_a_known_state() -> None:
    """Each poll of the match gives a cricket snapshot in a known state."""
    snapshots = _snapshots()
    assert len(snapshots) == recording_length()
    assert all(snapshot.sport is Sport.CRICKET for snapshot in snapshots)
    assert all(snapshot.state is not MatchState.UNKNOWN for snapshot in snapshots)
    states = {snapshot.state for snapshot in snapshots}
    assert states == {
        MatchState.SCHEDULED,
        MatchState.INNINGS_1,
        MatchState.INNINGS_BREAK,
        MatchState.INNINGS_2,
        MatchState.FINISHED,
    }


def test_final_line_matches_the_expected_file() -> None:
    """Innings totals, wickets, overs, the result and the ball ids are the expected ones."""
    want, final = expected(), _final()
    board = final.cricket
    assert board is not None and final.balls is not None
    assert final.provider_state == want["status"] and final.state is MatchState.FINISHED
    got = [
        {
            "scoreboard": innings.scoreboard,
            "team_id": innings.team_id,
            "runs": innings.runs,
            "wickets": innings.wickets,
            "overs": innings.overs,
        }
        for innings in board.innings
    ]
    assert got == [{**innings, "overs": f"{innings['overs']:.1f}"} for innings in want["innings"]]
    assert board.result is not None and board.result.kind == "win"
    assert board.result.winner_team_id == want["winner_team_id"] and board.result.side == "home"
    assert board.super_over is want["super_over"]
    assert [item.provider_id for item in final.balls] == want["balls"]
    assert {item.key for item in final.items()} == {(Stream.BALLS, ball_id) for ball_id in want["balls"]}


def test_final_fixture_fields() -> None:
    """Identity, teams, kickoff, the note and the toss come from the fixture's base fields."""
    final = _final()
    assert final.fixture_id == cricket_fixture_id(58328)
    assert final.name == "Chennai Super Kings vs Royal Challengers Bengaluru"
    assert final.participants is not None and final.participants.home is not None
    assert final.participants.away is not None
    assert (final.participants.home.id, final.participants.home.short_code) == (HOME, "CSK")
    assert (final.participants.away.id, final.participants.away.winner) == (AWAY, False)
    assert final.kickoff is not None and final.kickoff.isoformat() == "2024-03-22T14:30:00+00:00"
    assert (final.league_id, final.season_id) == (1, 1484)
    assert final.result_info == "Chennai Super Kings won by 6 wickets (with 8 balls remaining)"
    board = final.cricket
    assert board is not None
    assert (board.format, board.scheduled_overs, board.toss_won_team_id, board.elected) == (
        "T20",
        20,
        AWAY,
        "batting",
    )
    assert board.innings[1].target == 174 and board.target == 174


def test_final_board_matches_the_real_scorecard() -> None:
    """The batters, the bowler and the strip at the end are those of the real match."""
    board = _final().cricket
    assert board is not None and board.striker is not None and board.non_striker is not None
    assert (board.striker.name, board.striker.runs, board.striker.balls) == ("Shivam Dube", 34, 28)
    assert (board.non_striker.name, board.non_striker.runs, board.non_striker.balls) == (
        "Ravindra Jadeja",
        25,
        17,
    )
    assert board.bowler is not None and board.bowler.name == "Alzarri Joseph"
    assert board.bowler.figures == "3.4-0-38-0"
    assert board.batting_side == "home" and len(board.last_six) == 6


def test_balls_agree_with_the_runs_include_on_every_line() -> None:
    """Runs and wickets folded from the balls equal the provider's `runs` rows on every poll."""
    compared = 0
    for snapshot in _snapshots():
        assert snapshot.cricket is not None
        for innings in snapshot.cricket.innings:
            assert innings.agrees, (innings.scoreboard, innings.runs, innings.provider_runs)
            compared += innings.provider_runs is not None
    assert compared > 300


def test_every_ball_adds_up() -> None:
    """On every real ball the delivery total is the batter's runs plus the extras."""
    for snapshot in _snapshots():
        for item in snapshot.balls or ():
            assert item.ball is not None and item.ball.known
            assert item.ball.runs == item.ball.batter_runs + item.ball.extras
            assert item.side is (Side.AWAY if item.ball.scoreboard == "S1" else Side.HOME)


def test_the_amended_ball_changes_between_lines() -> None:
    """Ball 9667958 was re-scored in place (1 Run → 1 Leg Bye): the board follows the edit."""
    assert expected()["amended"] == [AMENDED]
    details = {
        item.ball
        for snapshot in _snapshots()
        for item in snapshot.balls or ()
        if item.provider_id == AMENDED and item.ball is not None
    }
    assert {(detail.outcome, detail.batter_runs, detail.leg_byes) for detail in details} == {
        ("1 Run", 1, 0),
        ("1 Leg Bye", 0, 1),
    }
    final = next(item for item in _final().balls or () if item.provider_id == AMENDED)
    assert final.ball is not None and final.ball.outcome == "1 Leg Bye" and final.result == "1 Leg Bye"


def test_scheduled_lines_have_no_innings() -> None:
    """Before the first ball: an empty balls stream, no innings, no result."""
    first = _snapshots()[0]
    assert first.state is MatchState.SCHEDULED and first.balls == ()
    assert first.cricket is not None and first.cricket.innings == () and first.cricket.result is None


def test_snapshots_round_trip_through_json() -> None:
    """Snapshots survive the JSON trip a Temporal payload takes."""
    for snapshot in (*_snapshots()[::25], _final()):
        assert Snapshot.model_validate(snapshot.model_dump(mode="json")) == snapshot
        assert Snapshot.model_validate_json(snapshot.model_dump_json()) == snapshot


def test_a_single_fixture_envelope_is_accepted() -> None:
    """`fixtures/{id}` answers `{"data": {...}}`; it reads the same as the bare fixture."""
    assert normalise_cricket_fixture({"data": final_fixture()}) == _final()
