"""Cricket rules for desk commands: `check` says whether a command makes sense now, `step` applies it.

Batter and bowler ids are optional: a desk that does not track players still scores runs, wickets
and overs; one that does gets strike rotation and the bowling rules checked too.

The rules live beside this module, one job each: `cricket_state` (what the state holds),
`cricket_checks` (whether a command makes sense now) and `cricket_delivery` (how a ball changes the
innings). This module applies a command and shows the scoreboard.

"Undo last ball" is `match.undo` with the ball's seq: it is the newest undoable step. Undo walks back
one step at a time through the newest `CricketRules.undo_window` steps, across over ends and
innings ends.

This module imports only the stdlib, pydantic and `domain.rules`: safe in the workflow sandbox.
"""

from __future__ import annotations

from pydantic import JsonValue

from domain.rules.commands import (
    Command,
    CricketBall,
    CricketBowlerChange,
    CricketDeclare,
    CricketInningsEnd,
    CricketInningsStart,
    CricketOverEnd,
    MatchUndo,
    Touch,
    command_touches,
)
from domain.rules.common import Lineups, Mode
from domain.rules.cricket_checks import check
from domain.rules.cricket_delivery import apply_ball
from domain.rules.cricket_state import (
    BALLS_PER_OVER,
    MAX_WICKETS,
    BatterTally,
    BowlerTally,
    CricketGame,
    CricketRules,
    CricketState,
    Extras,
    InningsScore,
)
from domain.rules.undo_log import logged_step, undo_touches


def initial_state(
    mode: Mode = "desk", lineups: Lineups | None = None, rules: CricketRules | None = None
) -> CricketState:
    """A match before the first ball (the first innings starts with `cricket.innings_start`)."""
    return CricketState(mode=mode, lineups=lineups or Lineups(), rules=rules or CricketRules())


def touches(state: CricketState, command: Command) -> frozenset[Touch]:
    """What `command` changes; an undo touches what its target touched."""
    if isinstance(command, MatchUndo):
        return undo_touches(state.undo, command.target_seq)
    return command_touches(command)


def step(state: CricketState, command: Command, seq: int) -> CricketState:
    """The state after `command`, logged at `seq`. A pure function of its three arguments.

    Raises:
        IllegalCommand: `check` refuses the command even for an operator (the caller skipped it).
    """
    return logged_step(
        state,
        command,
        seq,
        refusal=check(state, command, actor="operator"),
        window=state.rules.undo_window,
        apply=lambda: _apply(state.game, command, state.rules),
        touched=lambda: touches(state, command),
    )


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
            return apply_ball(game, command)
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
    "Extras",
    "check",
    "initial_state",
    "scoreboard",
    "step",
    "touches",
]
