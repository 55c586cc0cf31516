"""The board folded from the balls: innings, targets, the crease, the bowler, milestones, result."""

from __future__ import annotations

from typing import Any

import pytest

from activities.provider.cricket.normaliser import normalise_cricket_fixture
from domain.cricket.board import CricketBoard
from domain.cricket_scoring import MatchFacts, score_match
from domain.snapshot import MatchState, Snapshot
from tests.normaliser.cricket.samples import AWAY, HOME, ball, fixture, runs_row

pytestmark = pytest.mark.unit


def _board(balls: list[dict[str, Any]] | None = None, **fields: Any) -> CricketBoard:
    board = normalise_cricket_fixture(fixture(balls, **fields)).cricket
    assert board is not None
    return board


def _over(first_id: int, over: int, score_ids: list[int], **kwargs: Any) -> list[dict[str, Any]]:
    """One over's deliveries; a wide or no-ball repeats the next legal ball's number."""
    balls, number = [], 1
    for offset, score_id in enumerate(score_ids):
        balls.append(ball(first_id + 3 * offset, score_id, over=f"{over}.{number}", **kwargs))
        if score_id not in (17, 52, 21, 7, 9, 13, 16, 14, 15):
            number += 1
    return balls


def test_innings_totals_and_extras() -> None:
    """Runs, wickets, legal balls and extras by kind come from the balls."""
    balls = _over(1, 0, [17, 69, 4, 1, 7, 47, 54, 82], out=46)
    board = _board(balls)
    (innings,) = board.innings
    assert (innings.scoreboard, innings.team_id, innings.side) == ("S1", AWAY, "away")
    assert (innings.runs, innings.wickets, innings.legal_balls, innings.overs) == (9, 1, 6, "1.0")
    extras = innings.extras
    assert (extras.wides, extras.no_balls, extras.byes, extras.leg_byes, extras.total) == (1, 1, 1, 1, 4)
    assert board.batting_side == "away" and board.target is None


def test_innings_from_the_runs_include_when_the_balls_are_missing() -> None:
    """Without the balls include an innings is the provider's own row (18.4 overs → 112 balls)."""
    payload = fixture(runs=[runs_row(1, AWAY, 173, 6, 20.0), runs_row(2, HOME, 176, 4, 18.4)])
    del payload["balls"]
    board = normalise_cricket_fixture(payload).cricket
    assert board is not None
    first, second = board.innings
    assert (first.runs, first.wickets, first.legal_balls, first.side) == (173, 6, 120, "away")
    assert (second.runs, second.wickets, second.overs, second.target) == (176, 4, "18.4", 174)
    assert first.agrees and second.agrees and board.striker is None and board.bowler is None


def test_balls_win_over_a_disagreeing_runs_row() -> None:
    """When both exist the balls decide; the provider's row is kept for the check."""
    board = _board(_over(1, 0, [69, 69]), runs=[runs_row(1, AWAY, 5, 1, 0.2)])
    (innings,) = board.innings
    assert (innings.runs, innings.wickets, innings.provider_runs, innings.provider_wickets) == (2, 0, 5, 1)
    assert not innings.agrees


def test_crease_and_strike_after_each_ball() -> None:
    """The latest ball's striker and non-striker, with their runs and balls faced this innings."""
    balls = [
        ball(1, 47, striker=46, other=75),
        ball(4, 17, striker=46, other=75),
        ball(7, 69, over="0.2", striker=46, other=75),
        ball(10, 7, over="0.3", striker=75, other=46),
        ball(13, 53, over="0.3", striker=75, other=46),
    ]
    board = _board(balls)
    assert board.striker is not None and board.non_striker is not None
    assert (board.striker.id, board.striker.runs, board.striker.balls, board.striker.sixes) == (75, 6, 2, 1)
    assert board.striker.name == "Batter 75"
    # A wide is not a ball faced.
    assert (board.non_striker.id, board.non_striker.runs, board.non_striker.balls) == (46, 5, 2)
    assert board.non_striker.fours == 1
    assert board.last_six == ("4", "1wd", "1", "1nb", "6")


def test_the_out_batter_leaves_the_crease() -> None:
    """After a wicket only the not-out batter shows until the next ball names the new one."""
    caught = _board(
        [ball(1, 69, striker=46, other=75), ball(4, 54, over="0.2", striker=46, other=75, out=46)]
    )
    assert caught.striker is None and caught.non_striker is not None and caught.non_striker.id == 75
    run_out = _board([ball(1, 63, striker=46, other=75, out=75)])
    assert run_out.striker is not None and run_out.striker.id == 46 and run_out.non_striker is None
    assert run_out.last_six == ("W",)
    next_ball = _board(
        [ball(1, 54, striker=46, other=75, out=46), ball(4, 82, over="0.2", striker=26027, other=75)]
    )
    assert next_ball.striker is not None and next_ball.striker.id == 26027


def test_bowler_figures_and_maidens() -> None:
    """Maidens are completed overs with nothing charged to the bowler (leg-byes are not)."""
    balls = (
        _over(1, 0, [82] * 6, bowler=7)
        + _over(100, 1, [82] * 5, bowler=8)
        + _over(200, 2, [82, 82, 4, 82, 82, 82], bowler=7)
        + _over(300, 4, [17, 82, 82, 82, 82, 82, 82], bowler=7)
        + _over(400, 6, [82, 54, 82, 63, 82, 82], bowler=7, out=46)
        + _over(500, 8, [82, 82], bowler=7)
    )
    board = _board(balls)
    bowler = board.bowler
    assert bowler is not None and bowler.name == "Bowler 7"
    # Overs 0, 2 (a leg bye) and 6 (a wicket maiden) are maidens; over 4 had a wide.
    assert (bowler.legal_balls, bowler.maidens, bowler.runs, bowler.wickets) == (26, 3, 1, 1)
    assert bowler.figures == "4.2-3-1-1"


def test_an_over_shared_by_two_bowlers_is_no_maiden() -> None:
    """A bowler who leaves mid-over gives nobody a maiden."""
    balls = _over(1, 0, [82] * 3, bowler=7) + [
        ball(10 + 3 * n, 82, over=f"0.{n + 4}", bowler=8) for n in range(3)
    ]
    bowler = _board(balls).bowler
    assert bowler is not None and (bowler.id, bowler.legal_balls, bowler.maidens) == (8, 3, 0)


def test_milestones() -> None:
    """The ball that takes a batter's innings to fifty, then to a hundred, is marked."""
    sixes = [ball(1 + 3 * n, 53, over=f"{n // 6}.{n % 6 + 1}") for n in range(17)]
    snapshot = normalise_cricket_fixture(fixture(sixes))
    assert snapshot.balls is not None
    marks = {
        item.provider_id: item.ball.milestone for item in snapshot.balls if item.ball and item.ball.milestone
    }
    # 9 sixes = 54 (the 9th ball is id 25), 17 sixes = 102 (the 17th is id 49).
    assert marks == {25: "fifty", 49: "hundred"}
    assert snapshot.cricket is not None and snapshot.cricket.striker is not None
    assert snapshot.cricket.striker.runs == 102


def test_milestones_are_per_innings() -> None:
    """A Test batter's runs in the first innings do not carry into the second."""
    first = [ball(1 + 3 * n, 53, over=f"0.{n + 1}") for n in range(5)]
    second = [ball(100 + 3 * n, 53, over=f"0.{n + 1}", scoreboard="S3") for n in range(5)]
    snapshot = normalise_cricket_fixture(fixture(first + second, type="Test"))
    assert all(item.ball is not None and item.ball.milestone is None for item in snapshot.balls or ())


def test_limited_overs_target() -> None:
    """The second innings chases the first innings' runs plus one."""
    board = _board([ball(1, 53), ball(4, 69, scoreboard="S2", team_id=HOME)])
    assert [innings.target for innings in board.innings] == [None, 7]
    assert (board.target, board.revised, board.target_overs, board.batting_side) == (7, False, None, "home")


def test_rpc_target_revises_the_chase() -> None:
    """A revised target (`rpc_target`, `rpc_overs`) replaces first innings + 1."""
    board = _board([ball(1, 53), ball(4, 69, scoreboard="S2", team_id=HOME)], rpc_target=120, rpc_overs=12)
    assert (board.innings[1].target, board.target, board.revised, board.target_overs) == (120, 120, True, 12)


def _super_over_match(**fields: Any) -> CricketBoard:
    runs = [runs_row(1, AWAY, 150, 7, 20.0), runs_row(2, HOME, 150, 9, 20.0)]
    balls = [
        ball(1, 53, scoreboard="S3", team_id=HOME),
        ball(4, 47, over="0.2", scoreboard="S3", team_id=HOME),
        ball(7, 69, scoreboard="S4", team_id=AWAY),
    ]
    return _board(balls, runs=runs, **fields)


def test_super_over() -> None:
    """In a tied T20 with `super_over`, S3/S4 are the super over and S4 chases S3 + 1."""
    board = _super_over_match(super_over=True, status="Finished", winner_team_id=AWAY)
    flags = [(innings.scoreboard, innings.super_over, innings.target) for innings in board.innings]
    assert flags == [("S1", False, None), ("S2", False, 151), ("S3", True, None), ("S4", True, 11)]
    assert board.super_over and board.target == 11 and board.batting_side == "away"
    assert board.result is not None and (board.result.kind, board.result.side) == ("win", "away")
    assert board.runs_of("home") == 10 and board.runs_of("away") == 1


def test_super_over_flag_means_nothing_in_a_test() -> None:
    """In a Test S3/S4 are the third and fourth innings whatever the flag says."""
    board = _super_over_match(super_over=True, type="Test")
    assert not board.super_over and not any(innings.super_over for innings in board.innings)


@pytest.mark.parametrize(
    ("innings", "target"),
    [
        # team, runs per innings S1..S3; the 4th innings side needs the lead + 1.
        ([(AWAY, 300), (HOME, 250), (AWAY, 200)], 251),
        # follow-on: HOME bats twice in a row, AWAY chases.
        ([(AWAY, 400), (HOME, 150), (HOME, 300)], 51),
    ],
)
def test_fourth_innings_target_in_a_test(innings: list[tuple[int, int]], target: int) -> None:
    """The 4th innings target is the lead over the first three innings plus one, by team."""
    fourth_team = next(team for team in (AWAY, HOME) if team != innings[2][0])
    rows = [runs_row(n + 1, team, runs, 10, 80.0) for n, (team, runs) in enumerate(innings)]
    balls = [ball(1, 69, scoreboard="S4", team_id=fourth_team)]
    board = _board(balls, runs=rows, type="Test", status="4th Innings")
    assert [total.target for total in board.innings] == [None, None, None, target]
    assert board.target == target


def test_no_target_in_a_tests_second_innings() -> None:
    """In a Test the second innings is not a chase."""
    board = _board([ball(1, 53), ball(4, 69, scoreboard="S2", team_id=HOME)], type="Test")
    assert board.target is None


@pytest.mark.parametrize(
    ("fields", "kind", "winner"),
    [
        ({"status": "Finished", "winner_team_id": HOME}, "win", HOME),
        ({"status": "Finished"}, "tie", None),
        ({"status": "Finished", "draw_noresult": "draw"}, "draw", None),
        ({"status": "Finished", "draw_noresult": "no-result"}, "no_result", None),
        ({"status": "Aban."}, "no_result", None),
        ({"status": "Cancl."}, "no_result", None),
    ],
)
def test_results(fields: dict[str, Any], kind: str, winner: int | None) -> None:
    """How an ended match was decided; the note is shown as the text, never parsed."""
    board = _board(note="As typed by a person", **fields)
    assert board.result is not None
    assert (board.result.kind, board.result.winner_team_id, board.result.text) == (
        kind,
        winner,
        "As typed by a person",
    )


def test_no_result_while_in_play() -> None:
    """A match still going has no result, even with a stray winner id."""
    assert _board(status="2nd Innings", winner_team_id=HOME).result is None


def test_abandoned_without_a_ball() -> None:
    """Abandoned before the toss: `balls: []`, no toss, a no-result board."""
    board = _board(status="Aban.", toss_won_team_id=None, elected=None, note="")
    assert board.innings == () and board.toss_won_team_id is None
    assert board.result is not None and board.result.kind == "no_result" and board.result.text is None


def test_the_fold_is_usable_without_the_normaliser() -> None:
    """`score_match` folds any balls items (a desk-scored match uses it directly)."""
    snapshot: Snapshot = normalise_cricket_fixture(fixture([ball(1, 47), ball(4, 53, over="0.2")]))
    scored = score_match(snapshot.balls or (), MatchFacts(state=MatchState.INNINGS_1, away_team_id=AWAY))
    assert scored.balls == snapshot.balls
    assert scored.board.innings[0].runs == 10 and scored.board.batting_side == "away"
    assert score_match((), MatchFacts()).board == CricketBoard()
