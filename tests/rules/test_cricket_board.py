"""A desk's cricket board: the figures the rule state keeps, and the `CricketBoard` read off them.

A desk-scored match must read exactly like a provider's: the same innings, crease, bowler, strip,
chase and result, and the provider's cricket states and score. Players are the `tests.rules.play`
XIs: home 1-11, away 21-31.
"""

from __future__ import annotations

from typing import Any

import pytest

from domain import rules
from domain.cricket.board import BallDetail, BatterFigures, BowlerFigures, CricketBoard, CricketResult
from domain.cricket.desk_board import board_of
from domain.cricket.live import line_of
from domain.desk import DeskBook, desk_progress, match_state
from domain.rules import CricketState
from domain.snapshot import MatchState
from tests.rules.play import Desk, Step
from tests.rules.test_cricket import (
    INNINGS_END,
    OPENERS,
    OVER_END,
    SIX_DOTS,
    ball,
    bowler,
    cricket,
    desk,
    innings,
    wicket,
)

pytestmark = pytest.mark.unit

WIDE: Step = ("cricket.ball", {"extra": {"kind": "wide"}})


def board(d: Desk) -> CricketBoard:
    return board_of(cricket(d))


def batted(side: str, runs: int, *, out: bool = False, last: bool = False) -> tuple[Step, ...]:
    """A whole innings for `side` without named players: `runs` (0..6) off one ball, all out if
    `out`; `last` ends the match with it."""
    body: tuple[Step, ...] = (ball(runs),) if runs else ()
    if out:
        body = (*body, *(wicket() for _ in range(5)), OVER_END, *(wicket() for _ in range(5)))
    return (innings(side), *body, ("cricket.innings_end", {"match_over": last}))


def test_the_striker_is_credited_bat_runs_and_balls_faced_but_not_a_wide() -> None:
    """Bat runs and balls faced go to the striker; a wide is not faced, a no-ball is, leg byes add
    a ball and no runs; fours and sixes are counted."""
    d = desk(
        OPENERS,
        ball(1),  # 1: 1 (1); 2 on strike
        ball(4, boundary="four"),  # 2: 4 (1)
        WIDE,  # 2: not faced
        ("cricket.ball", {"runs": 6, "boundary": "six", "extra": {"kind": "no_ball"}}),  # 2: 10 (2)
        ("cricket.ball", {"extra": {"kind": "leg_bye", "runs": 1}}),  # 2: 10 (3); 1 on strike
    )
    shown = board(d)
    assert shown.striker == BatterFigures(id=1, runs=1, balls=1)
    assert shown.non_striker == BatterFigures(id=2, runs=10, balls=3, fours=1, sixes=1)
    assert shown.current is not None and shown.current.runs == 1 + 4 + 1 + 7 + 1


def test_the_bowler_is_charged_bat_runs_wides_and_no_balls_and_credited_his_wickets() -> None:
    """Byes and leg byes are not the bowler's; a run out is not his wicket; legal balls only."""
    d = desk(
        OPENERS,
        ball(2),
        ("cricket.ball", {"extra": {"kind": "wide", "runs": 1}}),  # 2 charged
        ("cricket.ball", {"runs": 1, "extra": {"kind": "no_ball"}}),  # 2 charged
        ("cricket.ball", {"extra": {"kind": "bye", "runs": 4}}),
        ("cricket.ball", {"extra": {"kind": "leg_bye", "runs": 1}}),
        wicket("caught", new_batter_id=3),
        wicket("run_out", batter_out="non_striker", new_batter_id=4),
    )
    shown = board(d)
    assert shown.bowler == BowlerFigures(id=21, legal_balls=5, runs=6, wickets=1)
    assert shown.bowler.figures == "0.5-0-6-1"
    assert shown.current is not None and shown.current.extras.total == 2 + 1 + 4 + 1


@pytest.mark.parametrize(
    ("over", "maidens"),
    [
        (SIX_DOTS, 1),
        ((*SIX_DOTS[:5], ("cricket.ball", {"extra": {"kind": "leg_bye", "runs": 1}})), 1),
        ((*SIX_DOTS[:5], wicket("bowled", new_batter_id=3)), 1),
        ((WIDE, *SIX_DOTS), 0),
        ((*SIX_DOTS[:5], ball(1)), 0),
        ((*SIX_DOTS[:3], bowler(22), *SIX_DOTS[:3]), 0),
    ],
    ids=["six dots", "a leg bye", "a wicket", "a wide", "a single", "two bowlers"],
)
def test_a_maiden_is_a_whole_over_by_one_bowler_with_nothing_charged_to_him(
    over: tuple[Step, ...], maidens: int
) -> None:
    d = desk(OPENERS, *over, OVER_END)
    figures = {each.id: each.maidens for each in cricket(d).game.bowlers}
    assert figures[21] == maidens
    assert sum(figures.values()) == maidens


def test_the_bowler_shown_between_overs_is_the_last_overs() -> None:
    """After the over ends and before the next bowler is named, the board keeps the last bowler;
    the new one shows from his first ball with his own figures, and the old one's come back."""
    d = desk(OPENERS, *SIX_DOTS, OVER_END)
    assert board(d).bowler == BowlerFigures(id=21, legal_balls=6, maidens=1)
    d.play(bowler(22), ball(2))
    assert board(d).bowler == BowlerFigures(id=22, legal_balls=1, runs=2)
    d.play(*SIX_DOTS[:5], OVER_END, bowler(21), ball(1))
    assert board(d).bowler == BowlerFigures(id=21, legal_balls=7, maidens=1, runs=1)


# Each desk delivery, the provider ball it is, and the strip both show.
STRIPS: list[tuple[dict[str, Any], dict[str, Any], str]] = [
    ({}, {}, "0"),
    ({"runs": 1}, {"runs": 1, "batter_runs": 1}, "1"),
    ({"runs": 4, "boundary": "four"}, {"runs": 4, "batter_runs": 4, "four": True}, "4"),
    ({"runs": 6, "boundary": "six"}, {"runs": 6, "batter_runs": 6, "six": True}, "6"),
    ({"extra": {"kind": "wide"}}, {"runs": 1, "wides": 1, "legal": False}, "1wd"),
    ({"extra": {"kind": "wide", "runs": 1}}, {"runs": 2, "wides": 2, "legal": False}, "2wd"),
    ({"extra": {"kind": "no_ball"}}, {"runs": 1, "no_balls": 1, "legal": False}, "1nb"),
    (
        {"runs": 4, "boundary": "four", "extra": {"kind": "no_ball"}},
        {"runs": 5, "batter_runs": 4, "no_balls": 1, "legal": False, "four": True},
        "5nb",
    ),
    ({"extra": {"kind": "bye", "runs": 2}}, {"runs": 2, "byes": 2}, "2b"),
    ({"extra": {"kind": "leg_bye", "runs": 1}}, {"runs": 1, "leg_byes": 1}, "1lb"),
    ({"wicket": {"kind": "bowled"}}, {"wicket": True, "dismissal": "bowled"}, "W"),
    (
        {"runs": 1, "wicket": {"kind": "run_out"}},
        {"runs": 1, "batter_runs": 1, "wicket": True, "dismissal": "run_out"},
        "W",
    ),
]


@pytest.mark.parametrize(("body", "provider", "strip"), STRIPS)
def test_the_strip_shows_a_ball_as_a_providers_board_does(
    body: dict[str, Any], provider: dict[str, Any], strip: str
) -> None:
    d = desk(OPENERS, ("cricket.ball", body))
    same = BallDetail(scoreboard="S1", innings=1, over=0, ball=1, score_id=1, **provider)
    assert board(d).last_six == (strip,) == (same.strip,)


def test_the_strip_keeps_the_last_six_of_this_innings_and_shows_them_through_the_break() -> None:
    d = desk(innings("home"), ball(1), ball(2), WIDE, ball(3), wicket(), ball(4, boundary="four"), ball(6))
    assert board(d).last_six == ("2", "1wd", "3", "W", "4", "6")
    d.do(*INNINGS_END)
    assert board(d).last_six == ("2", "1wd", "3", "W", "4", "6")
    d.do(*innings("away"))
    assert board(d).last_six == ()


def test_the_innings_break_still_shows_how_the_innings_ended() -> None:
    """Between innings the board is the finished innings' with its crease and bowler, as a
    provider's is until the next innings' first ball; the new innings starts from nothing."""
    d = desk(OPENERS, ball(1), ball(3), *SIX_DOTS[:4], OVER_END, INNINGS_END, max_overs=1)
    shown = board(d)
    assert shown.batting_side == "home"
    assert (shown.striker, shown.non_striker) == (  # ends changed at the over's end
        BatterFigures(id=2, runs=3, balls=1),
        BatterFigures(id=1, runs=1, balls=5),
    )
    assert shown.bowler == BowlerFigures(id=21, legal_balls=6, runs=4)
    d.do(*innings("away", striker_id=21, non_striker_id=22, bowler_id=1))
    shown = board(d)
    assert (shown.batting_side, shown.striker, shown.bowler) == (
        "away",
        BatterFigures(id=21),
        BowlerFigures(id=1),
    )


def test_the_chase_has_the_first_innings_plus_one_as_its_target() -> None:
    d = desk(innings("home"), ball(4, boundary="four"), ball(3), INNINGS_END, max_overs=20)
    d.play(innings("away"), ball(2))
    shown = board(d)
    assert [(each.scoreboard, each.side, each.runs, each.target) for each in shown.innings] == [
        ("S1", "home", 7, None),
        ("S2", "away", 2, 8),
    ]
    assert (shown.target, shown.scheduled_overs, shown.batting_side) == (8, 20, "away")
    line = line_of(shown)
    assert (line.target, line.need, line.balls_left, line.other) == (8, 6, 119, "7/0")


@pytest.mark.parametrize(
    ("first_three", "fourth", "target"),
    [
        ((("home", 6), ("away", 4), ("home", 2)), "away", 5),
        ((("home", 6), ("away", 2), ("away", 5)), "home", 2),  # the follow-on
        ((("home", 2), ("away", 6), ("home", 4)), "away", 1),  # level: one run wins it
    ],
    ids=["plain", "follow-on", "level"],
)
def test_the_fourth_innings_chases_the_lead(
    first_three: tuple[tuple[str, int], ...], fourth: str, target: int
) -> None:
    steps = [step for side, runs in first_three for step in batted(side, runs)]
    d = desk(*steps, innings(fourth), lineups=False, max_innings=4)
    shown = board(d)
    assert [each.target for each in shown.innings] == [None, None, None, target]
    assert shown.target == target


RESULTS: list[tuple[str, tuple[Step, ...], dict[str, Any], CricketResult]] = [
    (
        "limited: more runs win",
        (*batted("home", 5), *batted("away", 3)),
        {"max_overs": 20},
        CricketResult(kind="win", side="home"),
    ),
    (
        "limited: the chase gets there",
        (*batted("home", 2), innings("away"), ball(3), ("cricket.innings_end", {"match_over": True})),
        {"max_overs": 20},
        CricketResult(kind="win", side="away"),
    ),
    (
        "limited: level is a tie",
        (*batted("home", 4, out=True), *batted("away", 4)),
        {"max_overs": 20},
        CricketResult(kind="tie"),
    ),
    (
        "limited: abandoned before the chase",
        (innings("home"), ball(1), ("cricket.innings_end", {"match_over": True})),
        {"max_overs": 20},
        CricketResult(kind="no_result"),
    ),
    (
        "timed: the chase falls short with wickets left",
        (*batted("home", 6), *batted("away", 3)),
        {},
        CricketResult(kind="draw"),
    ),
    (
        "timed: the chasing side is bowled out",
        (*batted("home", 6), *batted("away", 3, out=True)),
        {},
        CricketResult(kind="win", side="home"),
    ),
    (
        "timed: level with the last side bowled out",
        (*batted("home", 6), *batted("away", 6, out=True)),
        {},
        CricketResult(kind="tie"),
    ),
    (
        "four innings: won by an innings",
        (
            *batted("home", 6),
            *batted("away", 2, out=True),
            *batted("away", 3, out=True, last=True),  # the follow-on
        ),
        {"max_innings": 4},
        CricketResult(kind="win", side="home"),
    ),
    (
        "four innings: time runs out in the third",
        (
            *batted("home", 6),
            *batted("away", 2, out=True),
            innings("home"),
            ball(1),
            ("cricket.innings_end", {"match_over": True}),
        ),
        {"max_innings": 4},
        CricketResult(kind="draw"),
    ),
    (
        "four innings: the last innings passes the target",
        (*batted("home", 6), *batted("away", 2), *batted("home", 1), *batted("away", 6)),
        {"max_innings": 4},
        CricketResult(kind="win", side="away"),
    ),
]


@pytest.mark.parametrize(
    ("steps", "rule_args", "result"), [case[1:] for case in RESULTS], ids=[case[0] for case in RESULTS]
)
def test_the_result_of_a_finished_match(
    steps: tuple[Step, ...], rule_args: dict[str, Any], result: CricketResult
) -> None:
    d = desk(*steps, lineups=False, **rule_args)
    assert cricket(d).game.finished
    assert board(d).result == result


def test_no_result_until_the_match_is_over() -> None:
    d = desk(*batted("home", 5), innings("away"), max_overs=20)
    assert board(d).result is None


def test_a_desk_that_names_nobody_still_has_the_innings() -> None:
    """Without player ids there is no crease and no bowler, but the totals, strip and chase stand."""
    d = desk(*batted("home", 4), innings("away"), ball(1), WIDE, lineups=False, max_overs=5)
    shown = board(d)
    assert (shown.striker, shown.non_striker, shown.bowler) == (None, None, None)
    assert shown.current is not None
    assert (shown.current.runs, shown.current.legal_balls, shown.current.extras.wides) == (2, 1, 1)
    assert (shown.last_six, shown.target) == (("1", "1wd"), 5)
    assert [each.team_id for each in shown.innings] == [None, None]


def test_undo_gives_back_the_figures_and_the_strip_exactly() -> None:
    """Undo restores the whole game: figures, strip and the maiden count of the over in progress."""
    d = desk(OPENERS, *SIX_DOTS[:5])
    before = d.state
    shown = board(d)
    seqs = [
        d.do(*ball(4, boundary="four")),
        d.do(*OVER_END),
        d.do(*bowler(22)),
        d.do(*wicket(new_batter_id=3)),
    ]
    assert board(d) != shown
    for seq in reversed(seqs):
        d.do("match.undo", {"target_seq": seq})
    assert d.state == before
    assert board(d) == shown
    d.do(*ball())  # the sixth dot, after the undone four: still a maiden
    assert board(d).bowler == BowlerFigures(id=21, legal_balls=6, maidens=1)


def test_undo_of_an_innings_end_brings_the_innings_back_into_play() -> None:
    d = desk(OPENERS, ball(2), ball(1))
    before = d.state
    seq = d.do(*INNINGS_END)
    d.do("match.undo", {"target_seq": seq})
    assert d.state == before
    current = board(d).current
    assert current is not None and (current.runs, board(d).batting_side) == (3, "home")


def test_the_board_round_trips_through_its_stored_json() -> None:
    d = desk(OPENERS, ball(1), WIDE, wicket("lbw", new_batter_id=3), INNINGS_END, innings("away"), ball(4))
    shown = board(d)
    assert CricketBoard.model_validate(shown.model_dump(mode="json")) == shown


@pytest.mark.parametrize(
    ("steps", "state"),
    [
        ((), MatchState.SCHEDULED),
        ((innings("home"),), MatchState.INNINGS_1),
        (batted("home", 3), MatchState.INNINGS_BREAK),
        ((*batted("home", 3), innings("away")), MatchState.INNINGS_2),
        ((*batted("home", 3), *batted("away", 2), innings("home")), MatchState.INNINGS_3),
        ((*batted("home", 3), *batted("away", 2), *batted("home", 1), innings("away")), MatchState.INNINGS_4),
        (
            (*batted("home", 3), *batted("away", 2), *batted("home", 1), *batted("away", 1)),
            MatchState.FINISHED,
        ),
    ],
)
def test_a_desk_match_is_in_the_providers_cricket_states(steps: tuple[Step, ...], state: MatchState) -> None:
    d = desk(*steps, lineups=False, max_innings=4)
    assert match_state(d.state) == state


def test_the_score_is_each_sides_latest_innings_and_the_progress_carries_the_line() -> None:
    """As a provider's cricket score: runs in the side's latest innings, not the match aggregate."""
    d = desk(*batted("home", 5), *batted("away", 3), innings("home"), ball(2), lineups=False, max_innings=4)
    state = cricket(d)
    progress = desk_progress(DeskBook(rules=state, version=d.seq))
    assert progress is not None
    assert (progress.state, progress.home, progress.away, progress.version) == (
        MatchState.INNINGS_3,
        2,
        3,
        d.seq,
    )
    assert progress.cricket == line_of(board_of(state))
    assert progress.cricket is not None and (progress.cricket.batting, progress.cricket.runs) == ("home", 2)


def test_a_provider_owned_match_has_no_desk_progress() -> None:
    state = rules.initial_state("cricket", "provider")
    assert isinstance(state, CricketState)
    assert desk_progress(DeskBook(rules=state)) is None
