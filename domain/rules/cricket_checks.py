"""Whether a cricket command makes sense now: the innings, the over, the bowler and the dismissal.

Player ids are checked only when the desk sends them; with a known XI, batters must come from the
batting side and bowlers from the fielding side.

This module imports only the stdlib, pydantic and `domain.rules`: safe in the workflow sandbox.
"""

from __future__ import annotations

from domain.rules.commands import (
    Command,
    CricketBall,
    CricketBowlerChange,
    CricketDeclare,
    CricketInningsEnd,
    CricketInningsStart,
    CricketOverEnd,
    CricketWicket,
    MatchCommentary,
    MatchSetMode,
    MatchUndo,
    MatchVar,
    Side,
)
from domain.rules.common import Actor, Refusal, RefusalCode, gate, other, refuse
from domain.rules.cricket_state import BALLS_PER_OVER, MAX_WICKETS, CricketState
from domain.rules.undo_log import undo_refusal

_STRIKER_ONLY = frozenset({"bowled", "caught", "lbw", "stumped", "hit_wicket", "hit_ball_twice"})
_OFF_A_WIDE = frozenset({"stumped", "run_out", "hit_wicket", "obstructing_field"})
_OFF_A_NO_BALL = frozenset({"run_out", "obstructing_field", "hit_ball_twice"})
_RUNS_STAND = frozenset({"run_out", "obstructing_field"})
"""Dismissals after which the runs completed still count."""


def check(state: CricketState, command: Command, *, actor: Actor = "desk") -> Refusal | None:
    """Why `command` cannot be applied to `state` now, or None when it can."""
    refusal = gate(state.mode, command, actor, sport="cricket")
    if refusal is not None or isinstance(command, MatchCommentary | MatchSetMode):
        return refusal
    if isinstance(command, MatchVar):
        return refuse(RefusalCode.WRONG_SPORT, "there is no VAR in cricket")
    if isinstance(command, MatchUndo):
        return undo_refusal(state.undo, command.target_seq)
    if isinstance(command, CricketInningsStart):
        return _check_innings_start(state, command)
    refusal = _in_innings(state)
    if refusal is not None:
        return refusal
    game = state.game
    match command:
        case CricketBall():
            return _check_ball(state, command)
        case CricketOverEnd():
            if game.deliveries == 0:
                return refuse(RefusalCode.NO_OVER, "no over in progress")
            if game.balls < BALLS_PER_OVER:
                left = BALLS_PER_OVER - game.balls
                return refuse(RefusalCode.OVER_INCOMPLETE, f"the over has {left} legal ball{_s(left)} to go")
            return None
        case CricketBowlerChange():
            return _check_bowler(state, command.bowler_id)
        case CricketInningsEnd():
            return None
        case CricketDeclare():
            if state.rules.max_overs is not None:
                return refuse(RefusalCode.NO_DECLARATION, "no declarations in a limited-overs match")
            if game.wickets >= MAX_WICKETS:
                return refuse(RefusalCode.ALL_OUT, "all out: there is nothing to declare")
            return None
    raise AssertionError(f"unhandled command {command.code}")  # gate() let through a foreign code


def _s(n: int) -> str:
    return "" if n == 1 else "s"


def _in_innings(state: CricketState) -> Refusal | None:
    if state.game.finished:
        return refuse(RefusalCode.MATCH_OVER, "the match is over")
    if not state.game.in_play:
        return refuse(RefusalCode.NO_INNINGS, "no innings in progress")
    return None


def _xi(state: CricketState, side: Side | None) -> frozenset[int] | None:
    lineup = state.lineups.get(side) if side is not None else None
    return frozenset(lineup.starting) if lineup is not None else None


def _check_innings_start(state: CricketState, start: CricketInningsStart) -> Refusal | None:
    game = state.game
    if game.finished:
        return refuse(RefusalCode.MATCH_OVER, "the match is over")
    if game.in_play:
        return refuse(RefusalCode.INNINGS_IN_PROGRESS, f"innings {game.innings} is still in progress")
    if len(game.completed) == 1 and game.completed[0].batting == start.batting:
        return refuse(RefusalCode.BATTING_ORDER, f"{start.batting} batted in the first innings")
    if sum(1 for inns in game.completed if inns.batting == start.batting) >= state.rules.max_innings // 2:
        return refuse(RefusalCode.BATTING_ORDER, f"{start.batting} has had all its innings")
    if start.striker_id is not None and start.striker_id == start.non_striker_id:
        return refuse(RefusalCode.SAME_PLAYER, "the openers must be two different batters")
    batting_xi = _xi(state, start.batting)
    for batter in (start.striker_id, start.non_striker_id):
        if batter is not None and batting_xi is not None and batter not in batting_xi:
            return refuse(RefusalCode.NOT_BATTING, f"no such player in the {start.batting} XI")
    fielding_xi = _xi(state, other(start.batting))
    if start.bowler_id is not None and fielding_xi is not None and start.bowler_id not in fielding_xi:
        return refuse(RefusalCode.NOT_FIELDING, "no such player in the fielding side")
    return None


def _check_ball(state: CricketState, ball: CricketBall) -> Refusal | None:
    game, max_overs = state.game, state.rules.max_overs
    if game.wickets >= MAX_WICKETS:
        if ball.wicket is not None:
            return refuse(RefusalCode.ELEVENTH_WICKET, "11th wicket: the side is already all out")
        return refuse(RefusalCode.ALL_OUT, "all out: end the innings")
    if max_overs is not None and game.overs >= max_overs:
        return refuse(RefusalCode.OVERS_USED, f"all {max_overs} overs have been bowled: end the innings")
    if game.balls >= BALLS_PER_OVER:
        return refuse(RefusalCode.OVER_COMPLETE, "six legal balls bowled: end the over first")
    if game.bowler is None and game.last_over_bowler is not None:
        return refuse(RefusalCode.BOWLER_NEEDED, "nobody is bowling this over: change the bowler first")
    return _check_wicket(state, ball, ball.wicket) if ball.wicket is not None else None


def _check_wicket(state: CricketState, ball: CricketBall, wicket: CricketWicket) -> Refusal | None:
    game = state.game
    how = wicket.kind.replace("_", " ")
    extra = ball.extra.kind if ball.extra is not None else None
    if wicket.kind in _STRIKER_ONLY and wicket.batter_out != "striker":
        return refuse(RefusalCode.IMPOSSIBLE_DISMISSAL, f"only the striker can be out {how}")
    if extra == "wide" and wicket.kind not in _OFF_A_WIDE:
        return refuse(RefusalCode.IMPOSSIBLE_DISMISSAL, f"nobody is out {how} off a wide")
    if extra == "no_ball" and wicket.kind not in _OFF_A_NO_BALL:
        return refuse(RefusalCode.IMPOSSIBLE_DISMISSAL, f"nobody is out {how} off a no-ball")
    ran = ball.runs + (ball.extra.runs if ball.extra is not None else 0)
    if wicket.kind not in _RUNS_STAND and ran > 0:
        return refuse(RefusalCode.IMPOSSIBLE_DISMISSAL, f"no runs count when the batter is out {how}")
    new = wicket.new_batter_id
    if new is None:
        return None
    if game.wickets + 1 >= MAX_WICKETS:
        return refuse(RefusalCode.NO_BATTERS_LEFT, "that is the last wicket: no batter comes in")
    if new in game.out:
        return refuse(RefusalCode.ALREADY_OUT, "that batter is already out")
    if new in (game.striker, game.non_striker):
        return refuse(RefusalCode.AT_CREASE, "that batter is already at the crease")
    batting_xi = _xi(state, game.batting)
    if batting_xi is not None and new not in batting_xi:
        return refuse(RefusalCode.NOT_BATTING, f"no such player in the {game.batting} XI")
    return None


def _check_bowler(state: CricketState, bowler_id: int) -> Refusal | None:
    game = state.game
    if bowler_id == game.bowler:
        return refuse(RefusalCode.ALREADY_BOWLING, "that bowler is already bowling")
    if bowler_id == game.last_over_bowler:
        return refuse(RefusalCode.CONSECUTIVE_OVERS, "a bowler can't bowl two overs in a row")
    if bowler_id in (game.striker, game.non_striker):
        return refuse(RefusalCode.NOT_FIELDING, "that player is batting")
    fielding_xi = _xi(state, other(game.batting)) if game.batting is not None else None
    if fielding_xi is not None and bowler_id not in fielding_xi:
        return refuse(RefusalCode.NOT_FIELDING, "no such player in the fielding side")
    return None
