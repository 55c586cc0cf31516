"""Cricket rules: runs, extras, wickets, overs, bowlers and innings, and the reasons for a refusal."""

from __future__ import annotations

from typing import Any

import pytest

from domain import rules
from domain.rules import CricketRules, CricketState, IllegalCommand, RefusalCode, Touch
from tests.rules.play import LINEUPS, Desk, Step

pytestmark = pytest.mark.unit


def ball(runs: int = 0, **more: Any) -> Step:
    return ("cricket.ball", {"runs": runs, **more})


def wicket(kind: str = "bowled", **more: Any) -> Step:
    return ("cricket.ball", {"wicket": {"kind": kind, **more}})


def innings(batting: str = "home", **more: Any) -> Step:
    return ("cricket.innings_start", {"batting": batting, **more})


OVER_END: Step = ("cricket.over_end", {})
INNINGS_END: Step = ("cricket.innings_end", {})


def bowler(player: int) -> Step:
    return ("cricket.bowler_change", {"bowler_id": player})


OPENERS = innings("home", striker_id=1, non_striker_id=2, bowler_id=21)
"""Home bats with 1 and 2; away's 21 bowls."""
SIX_DOTS = tuple(ball() for _ in range(6))
ALL_OUT = (innings("home"), *(wicket() for _ in range(6)), OVER_END, *(wicket() for _ in range(4)))


def desk(*steps: Step, lineups: bool = True, **rule_args: Any) -> Desk:
    state = rules.initial_state(
        "cricket", "desk", LINEUPS if lineups else None, rules=CricketRules(**rule_args)
    )
    return Desk(state).play(*steps)


def cricket(d: Desk) -> CricketState:
    assert isinstance(d.state, CricketState)
    return d.state


REFUSALS: list[tuple[str, tuple[Step, ...], Step, RefusalCode, str]] = [
    ("ball before the innings", (), ball(), RefusalCode.NO_INNINGS, "no innings in progress"),
    (
        "ball between innings",
        (innings(), INNINGS_END),
        ball(),
        RefusalCode.NO_INNINGS,
        "no innings in progress",
    ),
    (
        "ball after the match",
        (innings(), ("cricket.innings_end", {"match_over": True})),
        ball(),
        RefusalCode.MATCH_OVER,
        "the match is over",
    ),
    (
        "11th wicket",
        ALL_OUT,
        wicket(),
        RefusalCode.ELEVENTH_WICKET,
        "11th wicket: the side is already all out",
    ),
    ("ball after all out", ALL_OUT, ball(1), RefusalCode.ALL_OUT, "all out: end the innings"),
    (
        "seventh legal ball",
        (innings(), *SIX_DOTS),
        ball(),
        RefusalCode.OVER_COMPLETE,
        "six legal balls bowled: end the over first",
    ),
    (
        "overs used up",
        (innings(), *SIX_DOTS, OVER_END, *SIX_DOTS, OVER_END),
        ball(),
        RefusalCode.OVERS_USED,
        "all 2 overs have been bowled: end the innings",
    ),
    ("over end without a ball", (innings(),), OVER_END, RefusalCode.NO_OVER, "no over in progress"),
    (
        "over end after wides only",
        (innings(), ("cricket.ball", {"extra": {"kind": "wide"}})),
        OVER_END,
        RefusalCode.OVER_INCOMPLETE,
        "the over has 6 legal balls to go",
    ),
    (
        "over end after five",
        (innings(), *SIX_DOTS[:5]),
        OVER_END,
        RefusalCode.OVER_INCOMPLETE,
        "the over has 1 legal ball to go",
    ),
    (
        "over end between innings",
        (innings(), INNINGS_END),
        OVER_END,
        RefusalCode.NO_INNINGS,
        "no innings in progress",
    ),
    # bowlers
    (
        "same bowler twice in a row",
        (OPENERS, *SIX_DOTS, OVER_END),
        bowler(21),
        RefusalCode.CONSECUTIVE_OVERS,
        "a bowler can't bowl two overs in a row",
    ),
    (
        "bowler already on",
        (OPENERS,),
        bowler(21),
        RefusalCode.ALREADY_BOWLING,
        "that bowler is already bowling",
    ),
    (
        "no bowler for the new over",
        (OPENERS, *SIX_DOTS, OVER_END),
        ball(),
        RefusalCode.BOWLER_NEEDED,
        "nobody is bowling this over: change the bowler first",
    ),
    (
        "bowler from the batting side",
        (OPENERS,),
        bowler(5),
        RefusalCode.NOT_FIELDING,
        "no such player in the fielding side",
    ),
    (
        "bowler at the crease",
        (innings("home", striker_id=1),),
        bowler(1),
        RefusalCode.NOT_FIELDING,
        "that player is batting",
    ),
    # innings
    (
        "innings over an innings",
        (innings(),),
        innings("away"),
        RefusalCode.INNINGS_IN_PROGRESS,
        "innings 1 is still in progress",
    ),
    (
        "same side bats again",
        (innings(), INNINGS_END),
        innings("home"),
        RefusalCode.BATTING_ORDER,
        "home batted in the first innings",
    ),
    (
        "a third innings for one side",
        (innings("home"), INNINGS_END, innings("away"), INNINGS_END, innings("away"), INNINGS_END),
        innings("away"),
        RefusalCode.BATTING_ORDER,
        "away has had all its innings",
    ),
    (
        "one opener twice",
        (),
        innings(striker_id=3, non_striker_id=3),
        RefusalCode.SAME_PLAYER,
        "the openers must be two different batters",
    ),
    (
        "opener from the other side",
        (),
        innings(striker_id=25),
        RefusalCode.NOT_BATTING,
        "no such player in the home XI",
    ),
    (
        "opening bowler from the batting side",
        (),
        innings(bowler_id=4),
        RefusalCode.NOT_FIELDING,
        "no such player in the fielding side",
    ),
    (
        "declaring in a limited-overs match",
        (innings(),),
        ("cricket.declare", {}),
        RefusalCode.NO_DECLARATION,
        "no declarations in a limited-overs match",
    ),
    # dismissals
    (
        "non-striker out lbw",
        (innings(),),
        wicket("lbw", batter_out="non_striker"),
        RefusalCode.IMPOSSIBLE_DISMISSAL,
        "only the striker can be out lbw",
    ),
    (
        "bowled off a no-ball",
        (innings(),),
        ("cricket.ball", {"extra": {"kind": "no_ball"}, "wicket": {"kind": "bowled"}}),
        RefusalCode.IMPOSSIBLE_DISMISSAL,
        "nobody is out bowled off a no-ball",
    ),
    (
        "caught off a wide",
        (innings(),),
        ("cricket.ball", {"extra": {"kind": "wide"}, "wicket": {"kind": "caught"}}),
        RefusalCode.IMPOSSIBLE_DISMISSAL,
        "nobody is out caught off a wide",
    ),
    (
        "runs on a catch",
        (innings(),),
        ("cricket.ball", {"runs": 2, "wicket": {"kind": "caught"}}),
        RefusalCode.IMPOSSIBLE_DISMISSAL,
        "no runs count when the batter is out caught",
    ),
    (
        "dismissed batter comes back",
        (OPENERS, wicket(new_batter_id=3)),
        wicket(new_batter_id=1),
        RefusalCode.ALREADY_OUT,
        "that batter is already out",
    ),
    (
        "new batter already in",
        (OPENERS,),
        wicket(new_batter_id=2),
        RefusalCode.AT_CREASE,
        "that batter is already at the crease",
    ),
    (
        "new batter from the fielding side",
        (OPENERS,),
        wicket(new_batter_id=22),
        RefusalCode.NOT_BATTING,
        "no such player in the home XI",
    ),
    (
        "a batter after the last wicket",
        (innings(), *(wicket() for _ in range(6)), OVER_END, *(wicket() for _ in range(3))),
        wicket(new_batter_id=11),
        RefusalCode.NO_BATTERS_LEFT,
        "that is the last wicket: no batter comes in",
    ),
    # sport, mode, undo
    (
        "VAR in cricket",
        (innings(), ball()),
        ("match.var", {"target_seq": 2, "decision": "overturned"}),
        RefusalCode.WRONG_SPORT,
        "there is no VAR in cricket",
    ),
    (
        "football on a cricket match",
        (innings(),),
        ("football.corner", {"side": "home", "minute": 1}),
        RefusalCode.WRONG_SPORT,
        "football.corner is not a cricket command",
    ),
    (
        "undo of an older ball",
        (innings(), ball(1), ball(2)),
        ("match.undo", {"target_seq": 2}),
        RefusalCode.NOT_LAST,
        "only the last change can be undone: undo seq 3 first",
    ),
    (
        "undo of nothing",
        (innings(),),
        ("match.undo", {"target_seq": 9}),
        RefusalCode.TARGET_NOT_FOUND,
        "nothing to undo at seq 9",
    ),
]


@pytest.mark.parametrize(
    ("setup", "command", "code", "message"),
    [case[1:] for case in REFUSALS],
    ids=[case[0] for case in REFUSALS],
)
def test_refusals(setup: tuple[Step, ...], command: Step, code: RefusalCode, message: str) -> None:
    """Each impossible command is refused with its code and a message a scorer understands."""
    d = desk(*setup, max_overs=2, max_innings=4)
    refusal = d.refusal(*command)
    assert refusal is not None
    assert (refusal.code, refusal.message) == (code, message)
    with pytest.raises(IllegalCommand):
        rules.step(d.state, rules.parse_command(*command), d.seq + 1)


def test_declaring_needs_an_innings_and_batters() -> None:
    """Multi-day cricket allows a declaration, but not after the side is all out."""
    d = desk(*ALL_OUT, max_innings=4)
    refusal = d.refusal("cricket.declare", {})
    assert refusal is not None and refusal.code == RefusalCode.ALL_OUT
    d.do(*INNINGS_END)
    d.play(innings("away"), ball(4, boundary="four"), ("cricket.declare", {}))
    assert [(i.batting, i.runs, i.declared) for i in cricket(d).game.completed] == [
        ("home", 0, False),
        ("away", 4, True),
    ]
    d.do(*innings("away"))  # the follow-on: the same side bats again in the third innings


@pytest.mark.parametrize(
    ("body", "runs", "extras", "legal", "swap"),
    [
        ({}, 0, {}, True, False),
        ({"runs": 1}, 1, {}, True, True),
        ({"runs": 3}, 3, {}, True, True),
        ({"runs": 4, "boundary": "four"}, 4, {}, True, False),
        ({"runs": 6, "boundary": "six"}, 6, {}, True, False),
        ({"extra": {"kind": "wide"}}, 1, {"wides": 1}, False, False),
        ({"extra": {"kind": "wide", "runs": 1}}, 2, {"wides": 2}, False, True),
        ({"extra": {"kind": "wide", "runs": 4}}, 5, {"wides": 5}, False, False),
        ({"extra": {"kind": "no_ball"}}, 1, {"no_balls": 1}, False, False),
        ({"runs": 6, "boundary": "six", "extra": {"kind": "no_ball"}}, 7, {"no_balls": 1}, False, False),
        ({"runs": 1, "extra": {"kind": "no_ball"}}, 2, {"no_balls": 1}, False, True),
        ({"extra": {"kind": "bye", "runs": 1}}, 1, {"byes": 1}, True, True),
        ({"extra": {"kind": "leg_bye", "runs": 4}}, 4, {"leg_byes": 4}, True, False),
        ({"wicket": {"kind": "stumped"}, "extra": {"kind": "wide"}}, 1, {"wides": 1}, False, False),
        ({"runs": 1, "wicket": {"kind": "run_out", "batter_out": "non_striker"}}, 1, {}, True, True),
    ],
)
def test_runs_extras_and_strike(
    body: dict[str, Any], runs: int, extras: dict[str, int], legal: bool, swap: bool
) -> None:
    """Each kind of delivery adds its runs and extras, counts as a legal ball or not, and rotates strike on odd runs."""
    d = desk(OPENERS, ball(1), ball(1))  # 1 on strike, 2 at the other end, 2 runs, 2 balls
    d.do("cricket.ball", body)
    game = cricket(d).game
    assert game.runs == 2 + runs
    assert game.extras.model_dump() == {"wides": 0, "no_balls": 0, "byes": 0, "leg_byes": 0, **extras}
    assert game.balls == (3 if legal else 2)
    assert game.deliveries == 3
    if "wicket" not in body:
        assert (game.striker, game.non_striker) == ((2, 1) if swap else (1, 2))


@pytest.mark.parametrize(
    ("body", "striker", "non_striker", "out"),
    [
        ({"kind": "bowled", "new_batter_id": 3}, 3, 2, 1),
        ({"kind": "caught", "new_batter_id": 3}, 3, 2, 1),
        ({"kind": "run_out", "batter_out": "non_striker", "new_batter_id": 3}, 1, 3, 2),
        ({"kind": "bowled"}, None, 2, 1),
    ],
)
def test_the_new_batter_takes_the_dismissed_batters_end(
    body: dict[str, Any], striker: int | None, non_striker: int, out: int
) -> None:
    """The incoming batter replaces the one who is out; an unnamed one leaves the end unknown."""
    d = desk(OPENERS, ("cricket.ball", {"wicket": body}))
    game = cricket(d).game
    assert (game.striker, game.non_striker, game.out, game.wickets) == (striker, non_striker, (out,), 1)


def test_run_out_after_crossing_puts_the_new_batter_at_the_far_end() -> None:
    """One run completed, then the striker is run out going for a second: the new batter goes where he fell."""
    d = desk(OPENERS, ("cricket.ball", {"runs": 1, "wicket": {"kind": "run_out", "new_batter_id": 3}}))
    game = cricket(d).game
    assert (game.striker, game.non_striker, game.runs) == (2, 3, 1)


def test_over_end_swaps_ends_and_asks_for_a_new_bowler() -> None:
    """At the end of an over the batters change ends and the bowler must change."""
    d = desk(OPENERS, *SIX_DOTS, OVER_END)
    game = cricket(d).game
    assert (game.overs, game.balls, game.striker, game.non_striker) == (1, 0, 2, 1)
    assert (game.bowler, game.last_over_bowler) == (None, 21)
    d.play(bowler(22), ball(), bowler(23), *SIX_DOTS[:5], OVER_END, bowler(22))
    assert cricket(d).game.last_over_bowler == 23


def test_a_limited_overs_match_to_the_end() -> None:
    """Two innings of one over; the match is over after the second, and the summary keeps both."""
    d = desk(innings("home"), ball(4, boundary="four"), *SIX_DOTS[:5], OVER_END, INNINGS_END, max_overs=1)
    d.play(innings("away"), ball(6, boundary="six"), INNINGS_END)
    game = cricket(d).game
    assert game.finished
    assert [(i.batting, i.runs, i.legal_balls) for i in game.completed] == [("home", 4, 6), ("away", 6, 1)]
    assert rules.scoreboard(d.state)["over"] is True


def test_innings_end_can_end_the_match_early() -> None:
    """`match_over` ends a multi-day match after any innings (an innings victory, or time)."""
    d = desk(innings("home"), ball(1), ("cricket.innings_end", {"match_over": True}), max_innings=4)
    assert cricket(d).game.finished


def test_undo_last_ball_restores_the_exact_state() -> None:
    """ "Undo last ball" is `match.undo` of the ball's seq: the state is exactly as before the ball."""
    d = desk(
        OPENERS, ball(1), ("cricket.ball", {"runs": 1, "wicket": {"kind": "run_out", "new_batter_id": 3}})
    )
    before = d.state
    last = d.do(
        "cricket.ball",
        {"extra": {"kind": "no_ball", "runs": 1}, "wicket": {"kind": "run_out", "new_batter_id": 4}},
    )
    d.do("match.undo", {"target_seq": last})
    assert d.state == before


def test_undo_crosses_over_and_innings_ends() -> None:
    """Undo walks back through an innings end and an over end to the balls before them."""
    d = desk(OPENERS, *SIX_DOTS[:5])
    before_last_ball = d.state
    seqs = [d.do(*ball(2)), d.do(*OVER_END), d.do(*INNINGS_END)]
    assert cricket(d).game.completed
    for seq in reversed(seqs):
        d.do("match.undo", {"target_seq": seq})
    assert d.state == before_last_ball


def test_undo_touches_what_the_ball_touched() -> None:
    """Undoing a ball changes the score and the innings, for the version check."""
    d = desk(innings(), ball(1))
    assert rules.touches(d.state, rules.parse_command("match.undo", {"target_seq": d.seq})) == {
        Touch.SCORE,
        Touch.INNINGS,
    }


def test_unknown_players_are_not_checked() -> None:
    """Without lineups any ids go, but the log's own facts (who is out, who is in) still count."""
    d = desk(innings("home", striker_id=100, non_striker_id=200, bowler_id=300), lineups=False)
    d.do(*wicket(new_batter_id=400))
    refusal = d.refusal(*wicket(new_batter_id=100))
    assert refusal is not None and refusal.code == RefusalCode.ALREADY_OUT


def test_provider_mode() -> None:
    """In provider mode desks may comment only; an operator may score."""
    d = Desk(rules.initial_state("cricket", "provider"))
    refusal = d.refusal(*innings())
    assert refusal is not None and refusal.code == RefusalCode.PROVIDER_OWNED
    d.do("match.commentary", {"text": "rain delay"})
    d.do(*innings(), actor="operator")
    d.do("match.set_mode", {"mode": "desk"}, actor="operator")
    d.do(*ball(2))
    assert rules.scoreboard(d.state)["runs"] == 2
