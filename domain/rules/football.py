"""Football rules for desk commands: `check` says whether a command makes sense now, `step` applies it.

The rules live beside this module, one job each: `football_state` (what the state holds and where
the match stands), `football_checks` (whether a command makes sense now) and `football_var` (VAR
reviews). This module applies a command and shows the scoreboard.

This module imports only the stdlib, pydantic and `domain.rules`: safe in the workflow sandbox.
"""

from __future__ import annotations

from pydantic import JsonValue

from domain.rules.commands import (
    Command,
    FootballCard,
    FootballCorner,
    FootballGoal,
    FootballPeriodEnd,
    FootballPeriodStart,
    FootballShootoutKick,
    FootballSubstitution,
    MatchUndo,
    MatchVar,
    Touch,
    command_touches,
)
from domain.rules.common import Lineups, Mode, Pair
from domain.rules.football_checks import check
from domain.rules.football_state import (
    Booking,
    FootballGame,
    FootballRules,
    FootballState,
    GoalRecord,
    Shootout,
    SubRecord,
    is_over,
    next_periods,
    player_status,
)
from domain.rules.football_var import overturned, var_touches
from domain.rules.undo_log import logged_step, undo_touches


def initial_state(
    mode: Mode = "desk", lineups: Lineups | None = None, rules: FootballRules | None = None
) -> FootballState:
    """A match before kickoff."""
    return FootballState(mode=mode, lineups=lineups or Lineups(), rules=rules or FootballRules())


def touches(state: FootballState, command: Command) -> frozenset[Touch]:
    """What `command` changes; VAR and undo touch what their target touched."""
    if isinstance(command, MatchUndo):
        return undo_touches(state.undo, command.target_seq)
    if isinstance(command, MatchVar):
        return var_touches(state, command.target_seq)
    return command_touches(command)


def step(state: FootballState, command: Command, seq: int) -> FootballState:
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
        apply=lambda: _apply(state.game, command, seq),
        touched=lambda: touches(state, command),
    )


def _apply(game: FootballGame, command: Command, seq: int) -> FootballGame | None:
    """The game after `command`; None for a confirmed VAR decision, which changes nothing."""
    update: dict[str, object]
    match command:
        case FootballPeriodStart():
            update = {"periods": (*game.periods, command.period), "running": True}
        case FootballPeriodEnd():
            update = {"running": False}
        case FootballGoal():
            goal = GoalRecord(seq=seq, side=command.side, kind=command.kind, player_id=command.player_id)
            update = {"goals": (*game.goals, goal)}
        case FootballCard():
            booking = Booking(seq=seq, side=command.side, player_id=command.player_id, color=command.color)
            update = {"bookings": (*game.bookings, booking)}
        case FootballSubstitution():
            sub = SubRecord(side=command.side, player_on=command.player_on, player_off=command.player_off)
            update = {"substitutions": (*game.substitutions, sub)}
        case FootballShootoutKick():
            shootout = game.shootout
            scored = shootout.scored.add(command.side) if command.scored else shootout.scored
            update = {"shootout": Shootout(taken=shootout.taken.add(command.side), scored=scored)}
        case FootballCorner():
            update = {"corners": game.corners.add(command.side)}
        case MatchVar():
            return None if command.decision == "confirmed" else overturned(game, command.target_seq)
        case _:  # a missed penalty is logged (and undoable) but changes no count
            update = {}
    return game.model_copy(update=update)


def scoreboard(state: FootballState) -> dict[str, JsonValue]:
    """The compact public view of the match (what a scoreboard snapshot shows)."""
    game = state.game
    sent_off = Pair(
        home=sum(1 for b in game.bookings if b.sends_off and b.side == "home"),
        away=sum(1 for b in game.bookings if b.sends_off and b.side == "away"),
    )
    return {
        "sport": "football",
        "mode": state.mode,
        "period": game.periods[-1] if game.periods else None,
        "running": game.running,
        "over": is_over(state),
        "score": game.score.model_dump(mode="json"),
        "shootout": game.shootout.scored.model_dump(mode="json") if "PEN" in game.periods else None,
        "corners": game.corners.model_dump(mode="json"),
        "red_cards": sent_off.model_dump(mode="json"),
    }


__all__ = [
    "FootballGame",
    "FootballRules",
    "FootballState",
    "GoalRecord",
    "check",
    "initial_state",
    "is_over",
    "next_periods",
    "player_status",
    "scoreboard",
    "step",
    "touches",
]
