"""Cricket rules for desk commands: `check` says whether a command makes sense now, `step` applies it.

The state holds the current innings ball by ball (runs, wickets, the legal balls of the over in
progress, extras, who is on strike and who bowls) and a short summary of each finished innings. It
also keeps what a scoreboard shows beside the total — each known batter's and bowler's figures and
the last six deliveries — so the desk's board (`domain.cricket.desk_board`) reads like a provider's
without a replay of the log. They belong to the game, so undo restores them with everything else.
Batter and bowler ids are optional: a desk that does not track players still scores runs, wickets
and overs; one that does gets strike rotation and the bowling rules checked too. With a known XI,
batters must come from the batting side and bowlers from the fielding side.

"Undo last ball" is `match.undo` with the ball's seq: it is the newest undoable step. Undo walks back
one step at a time through the newest `CricketRules.undo_window` steps, across over ends and
innings ends.

This module imports only the stdlib, pydantic and `domain.rules`: safe in the workflow sandbox.
"""

from __future__ import annotations

from typing import Literal, NamedTuple, Protocol, TypeVar

from pydantic import Field, JsonValue

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
    Touch,
    command_touches,
)
from domain.rules.common import (
    Actor,
    Frozen,
    IllegalCommand,
    Lineups,
    Mode,
    Refusal,
    RefusalCode,
    UndoEntry,
    find_entry,
    gate,
    other,
    record,
    refuse,
    restore,
    undo_refusal,
)

BALLS_PER_OVER = 6
MAX_WICKETS = 10

_STRIKER_ONLY = frozenset({"bowled", "caught", "lbw", "stumped", "hit_wicket", "hit_ball_twice"})
_OFF_A_WIDE = frozenset({"stumped", "run_out", "hit_wicket", "obstructing_field"})
_OFF_A_NO_BALL = frozenset({"run_out", "obstructing_field", "hit_ball_twice"})
_RUNS_STAND = frozenset({"run_out", "obstructing_field"})
"""Dismissals after which the runs completed still count."""
_BOWLER_CREDITED = frozenset({"bowled", "caught", "lbw", "stumped", "hit_wicket"})
"""Dismissals credited to the bowler (as `domain.cricket.board.BOWLER_CREDITED` for the provider's)."""
_LAST_BALLS = 6


class CricketRules(Frozen):
    """The match format."""

    max_overs: int | None = Field(default=None, ge=1, le=200)
    """Overs per innings in a limited-overs match; None for a multi-day match."""
    max_innings: Literal[2, 4] = 2
    undo_window: int = Field(default=60, ge=1, le=1000)
    """How many of the newest steps can be undone, one after the other."""


class Extras(Frozen):
    """Extras of an innings by kind; a wide's or no-ball's penalty run is counted in it."""

    wides: int = 0
    no_balls: int = 0
    byes: int = 0
    leg_byes: int = 0

    @property
    def total(self) -> int:
        """All extras together."""
        return self.wides + self.no_balls + self.byes + self.leg_byes


class InningsScore(Frozen):
    """A finished innings."""

    batting: Side
    runs: int
    wickets: int
    legal_balls: int
    extras: Extras
    declared: bool = False


class BatterTally(NamedTuple):
    """A known batter's figures in the current innings: a wide is not a ball faced, a no-ball is.

    Tallies are named tuples, stored as JSON arrays: they change on every ball, and every undo
    entry keeps the ones its ball changed, so the rule state carried by the workflow stays small.
    """

    id: int
    runs: int = 0
    balls: int = 0
    fours: int = 0
    sixes: int = 0


class BowlerTally(NamedTuple):
    """A known bowler's figures in the current innings.

    `runs` are those charged to the bowler: off the bat, wides and no-balls, never byes or leg
    byes; `wickets` only the dismissals credited to the bowler (not a run out).
    """

    id: int
    legal_balls: int = 0
    maidens: int = 0
    runs: int = 0
    wickets: int = 0


class CricketGame(Frozen):
    """Everything a command can change (the mode aside): what undo restores."""

    innings: int = 0
    """Number of the current (or last finished) innings; 0 before the first."""
    in_play: bool = False
    finished: bool = False
    batting: Side | None = None
    runs: int = 0
    wickets: int = 0
    overs: int = 0
    """Completed overs of this innings."""
    balls: int = 0
    """Legal balls of the over in progress (0..6)."""
    deliveries: int = 0
    """Every delivery of the over in progress, wides and no-balls included."""
    extras: Extras = Extras()
    striker: int | None = None
    non_striker: int | None = None
    bowler: int | None = None
    last_over_bowler: int | None = None
    out: tuple[int, ...] = ()
    """Known batters dismissed this innings."""
    completed: tuple[InningsScore, ...] = ()
    batters: tuple[BatterTally, ...] = ()
    """Figures of the known batters at the crease who have had a ball (a dismissed one's go: no
    board shows them again)."""
    bowlers: tuple[BowlerTally, ...] = ()
    """Figures of the known bowlers who have bowled this innings, in the order they first did."""
    last_six: tuple[str, ...] = ()
    """The innings' last six deliveries as a scoreboard strip shows them: `W`, `4`, `0`, `1lb`, `2wd`…"""
    over_charged: int = 0
    """Runs charged to the bowling in the over in progress: a completed over without any is a maiden."""
    over_shared: bool = False
    """The bowler changed during the over in progress: nobody's maiden, whatever it costs."""


class CricketState(Frozen):
    """The cricket rule state of one match, carried by the match workflow."""

    sport: Literal["cricket"] = "cricket"
    mode: Mode = "desk"
    rules: CricketRules = CricketRules()
    lineups: Lineups = Lineups()
    game: CricketGame = CricketGame()
    undo: tuple[UndoEntry, ...] = ()


def initial_state(
    mode: Mode = "desk", lineups: Lineups | None = None, rules: CricketRules | None = None
) -> CricketState:
    """A match before the first ball (the first innings starts with `cricket.innings_start`)."""
    return CricketState(mode=mode, lineups=lineups or Lineups(), rules=rules or CricketRules())


# --- check ----------------------------------------------------------------------------------------


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


# --- step -----------------------------------------------------------------------------------------


def touches(state: CricketState, command: Command) -> frozenset[Touch]:
    """What `command` changes; an undo touches what its target touched."""
    if isinstance(command, MatchUndo):
        entry = find_entry(state.undo, command.target_seq)
        return frozenset(entry.touches) if entry is not None else frozenset()
    return command_touches(command)


def step(state: CricketState, command: Command, seq: int) -> CricketState:
    """The state after `command`, logged at `seq`. A pure function of its three arguments.

    Raises:
        IllegalCommand: `check` refuses the command even for an operator (the caller skipped it).
    """
    refusal = check(state, command, actor="operator")
    if refusal is not None:
        raise IllegalCommand(refusal)
    if isinstance(command, MatchSetMode):
        return state.model_copy(update={"mode": command.mode})
    if isinstance(command, MatchUndo):
        entry = state.undo[-1]
        return state.model_copy(update={"game": restore(state.game, entry), "undo": state.undo[:-1]})
    if isinstance(command, MatchCommentary):
        return state
    game = _apply(state.game, command, state.rules)
    log = record(
        state.undo,
        window=state.rules.undo_window,
        seq=seq,
        code=command.code,
        touches=touches(state, command),
        old=state.game,
        new=game,
    )
    return state.model_copy(update={"game": game, "undo": log})


def _apply(game: CricketGame, command: Command, rules: CricketRules) -> CricketGame:
    match command:
        case CricketInningsStart():
            return CricketGame(
                innings=game.innings + 1,
                in_play=True,
                batting=command.batting,
                striker=command.striker_id,
                non_striker=command.non_striker_id,
                bowler=command.bowler_id,
                completed=game.completed,
            )
        case CricketBall():
            return _apply_ball(game, command)
        case CricketOverEnd():
            return game.model_copy(
                update={
                    "overs": game.overs + 1,
                    "balls": 0,
                    "deliveries": 0,
                    "striker": game.non_striker,
                    "non_striker": game.striker,
                    "bowler": None,
                    "last_over_bowler": game.bowler,
                    "over_charged": 0,
                    "over_shared": False,
                }
            )
        case CricketBowlerChange():
            return game.model_copy(
                update={"bowler": command.bowler_id, "over_shared": game.over_shared or game.deliveries > 0}
            )
        case CricketInningsEnd() | CricketDeclare():
            assert game.batting is not None  # an innings is in play: check() said so
            score = InningsScore(
                batting=game.batting,
                runs=game.runs,
                wickets=game.wickets,
                legal_balls=game.overs * BALLS_PER_OVER + game.balls,
                extras=game.extras,
                declared=isinstance(command, CricketDeclare),
            )
            match_over = isinstance(command, CricketInningsEnd) and command.match_over
            # The crease and the figures of the innings just ended stay until the next one starts:
            # a board between innings shows how the last one finished, as a provider's does.
            return CricketGame(
                innings=game.innings,
                finished=match_over or game.innings >= rules.max_innings,
                completed=(*game.completed, score),
                striker=game.striker,
                non_striker=game.non_striker,
                bowler=game.bowler,
                last_over_bowler=game.last_over_bowler,
                batters=game.batters,
                bowlers=game.bowlers,
                last_six=game.last_six,
            )
    raise AssertionError(f"unhandled command {command.code}")


def _apply_ball(game: CricketGame, ball: CricketBall) -> CricketGame:
    extra = ball.extra
    extra_runs = extra.runs if extra is not None else 0
    penalty = 1 if extra is not None and extra.kind in ("wide", "no_ball") else 0
    extras = game.extras
    if extra is not None:
        field = {"wide": "wides", "no_ball": "no_balls", "bye": "byes", "leg_bye": "leg_byes"}[extra.kind]
        extras = extras.model_copy(update={field: getattr(extras, field) + penalty + extra_runs})
    ran = (0 if ball.boundary else ball.runs) + extra_runs
    striker, non_striker = game.striker, game.non_striker
    crossed = ran % 2 == 1
    if crossed:
        striker, non_striker = non_striker, striker
    wickets, out, gone = game.wickets, game.out, None
    if ball.wicket is not None:
        wickets += 1
        gone = game.striker if ball.wicket.batter_out == "striker" else game.non_striker
        if gone is not None:
            out = (*out, gone)
        # The incoming batter takes the dismissed batter's end (after any runs were crossed).
        on_strike_end = (ball.wicket.batter_out == "striker") != crossed
        if on_strike_end:
            striker = ball.wicket.new_batter_id
        else:
            non_striker = ball.wicket.new_batter_id
    charged = ball.runs + (penalty + extra_runs if penalty else 0)
    balls = game.balls + (1 if ball.legal else 0)
    over_charged = game.over_charged + charged
    maiden = balls == BALLS_PER_OVER and over_charged == 0 and not game.over_shared
    return game.model_copy(
        update={
            "runs": game.runs + ball.runs + penalty + extra_runs,
            "wickets": wickets,
            "balls": balls,
            "deliveries": game.deliveries + 1,
            "extras": extras,
            "striker": striker,
            "non_striker": non_striker,
            "out": out,
            "batters": _faced(game.batters, game.striker, ball, gone),
            "bowlers": _bowled(game.bowlers, game.bowler, ball, charged, maiden),
            "last_six": (*game.last_six, _strip(ball))[-_LAST_BALLS:],
            "over_charged": over_charged,
        }
    )


def _faced(
    batters: tuple[BatterTally, ...], striker: int | None, ball: CricketBall, gone: int | None
) -> tuple[BatterTally, ...]:
    """The figures at the crease after `ball`: the striker's runs off the bat, and the ball unless
    a wide; the batter `gone` (out on it) leaves."""
    if striker is not None:
        tally = next((each for each in batters if each.id == striker), BatterTally(id=striker))
        wide = ball.extra is not None and ball.extra.kind == "wide"
        batters = _replaced(
            batters,
            tally._replace(
                runs=tally.runs + ball.runs,
                balls=tally.balls + (0 if wide else 1),
                fours=tally.fours + (ball.boundary == "four"),
                sixes=tally.sixes + (ball.boundary == "six"),
            ),
        )
    return tuple(each for each in batters if each.id != gone)


def _bowled(
    bowlers: tuple[BowlerTally, ...], bowler: int | None, ball: CricketBall, charged: int, maiden: bool
) -> tuple[BowlerTally, ...]:
    """The bowlers' figures after `ball`, which completed a maiden over when `maiden`."""
    if bowler is None:
        return bowlers
    tally = next((each for each in bowlers if each.id == bowler), BowlerTally(id=bowler))
    credited = ball.wicket is not None and ball.wicket.kind in _BOWLER_CREDITED
    new = tally._replace(
        legal_balls=tally.legal_balls + ball.legal,
        maidens=tally.maidens + maiden,
        runs=tally.runs + charged,
        wickets=tally.wickets + credited,
    )
    return _replaced(bowlers, new)


class _Tally(Protocol):
    @property
    def id(self) -> int: ...


Tally = TypeVar("Tally", bound=_Tally)


def _replaced(tallies: tuple[Tally, ...], new: Tally) -> tuple[Tally, ...]:
    """`tallies` with `new` in place of the player's old figures, or appended for a first ball."""
    if any(each.id == new.id for each in tallies):
        return tuple(new if each.id == new.id else each for each in tallies)
    return (*tallies, new)


def _strip(ball: CricketBall) -> str:
    """The delivery as a scoreboard's strip shows it (as `BallDetail.strip` does a provider's ball)."""
    extra = ball.extra
    if ball.wicket is not None:
        return "W"
    if extra is None:
        return str(ball.runs)
    suffix = {"wide": "wd", "no_ball": "nb", "bye": "b", "leg_bye": "lb"}[extra.kind]
    penalty = 1 if extra.kind in ("wide", "no_ball") else 0
    return f"{penalty + extra.runs + ball.runs}{suffix}"


def scoreboard(state: CricketState) -> dict[str, JsonValue]:
    """The compact public view of the match (what a scoreboard snapshot shows)."""
    game = state.game
    return {
        "sport": "cricket",
        "mode": state.mode,
        "innings": game.innings,
        "batting": game.batting,
        "runs": game.runs,
        "wickets": game.wickets,
        "overs": f"{game.overs}.{game.balls}",
        "extras": game.extras.total,
        "over": game.finished,
        "completed": [
            {"batting": inns.batting, "runs": inns.runs, "wickets": inns.wickets, "declared": inns.declared}
            for inns in game.completed
        ],
    }


__all__ = [
    "BALLS_PER_OVER",
    "MAX_WICKETS",
    "BatterTally",
    "BowlerTally",
    "CricketGame",
    "CricketRules",
    "CricketState",
    "check",
    "initial_state",
    "scoreboard",
    "step",
    "touches",
]
