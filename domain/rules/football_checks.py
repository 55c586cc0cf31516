"""Whether a football command makes sense now: the periods, the players, the cards, the shootout.

Players: when the state knows a side's lineup, every player named in a command must fit it (on the
pitch, on the bench…). When it does not, nobody is invented, but what the log itself proves is still
enforced: a sent-off player cannot score, be booked or be substituted, and a substituted player
cannot come back.

This module imports only the stdlib, pydantic and `domain.rules`: safe in the workflow sandbox.
"""

from __future__ import annotations

from domain.rules.commands import (
    Command,
    FootballCard,
    FootballCorner,
    FootballGoal,
    FootballMissedPenalty,
    FootballPeriod,
    FootballPeriodEnd,
    FootballPeriodStart,
    FootballShootoutKick,
    FootballSubstitution,
    MatchCommentary,
    MatchSetMode,
    MatchUndo,
    MatchVar,
    Side,
)
from domain.rules.common import Actor, Refusal, RefusalCode, gate, other, refuse
from domain.rules.football_state import FootballState, active_cards, is_over, next_periods, player_status
from domain.rules.football_var import check_var
from domain.rules.undo_log import undo_refusal

PERIOD_NAMES: dict[str, str] = {
    "1H": "first half",
    "2H": "second half",
    "ET1": "first half of extra time",
    "ET2": "second half of extra time",
    "PEN": "penalty shootout",
}


def check(state: FootballState, command: Command, *, actor: Actor = "desk") -> Refusal | None:
    """Why `command` cannot be applied to `state` now, or None when it can."""
    refusal = gate(state.mode, command, actor, sport="football")
    if refusal is not None or isinstance(command, MatchCommentary | MatchSetMode):
        return refusal
    match command:
        case FootballPeriodStart():
            return _check_period_start(state, command.period)
        case FootballPeriodEnd():
            return _check_period_end(state, command.period)
        case FootballGoal():
            return _check_goal(state, command)
        case FootballMissedPenalty():
            return _in_play(state) or _on_pitch(state, command.side, command.player_id)
        case FootballCorner():
            return _in_play(state)
        case FootballCard():
            return _check_card(state, command)
        case FootballSubstitution():
            return _check_substitution(state, command)
        case FootballShootoutKick():
            return _check_kick(state, command)
        case MatchVar():
            return check_var(state, command)
        case MatchUndo():
            return undo_refusal(state.undo, command.target_seq)
    raise AssertionError(f"unhandled command {command.code}")  # gate() let through a foreign code


def _not_started(state: FootballState) -> Refusal:
    if not state.game.periods:
        return refuse(RefusalCode.NOT_STARTED, "the match has not started")
    upcoming = next_periods(state)
    name = PERIOD_NAMES[upcoming[0]] if upcoming else "next period"
    return refuse(RefusalCode.NOT_STARTED, f"the {name} has not started")


def _in_play(state: FootballState) -> Refusal | None:
    """Goals, corners and missed penalties need a running period other than the shootout."""
    if is_over(state):
        return refuse(RefusalCode.MATCH_OVER, "the match is over")
    if not state.game.running:
        return _not_started(state)
    if state.game.current == "PEN":
        return refuse(RefusalCode.SHOOTOUT_ON, "the penalty shootout is on: record shootout kicks")
    return None


def _kicked_off(state: FootballState) -> Refusal | None:
    """Cards and substitutions also happen between periods, but not before kickoff or after the end."""
    if is_over(state):
        return refuse(RefusalCode.MATCH_OVER, "the match is over")
    if not state.game.periods:
        return refuse(RefusalCode.NOT_STARTED, "the match has not started")
    return None


def _on_pitch(state: FootballState, side: Side, player_id: int | None) -> Refusal | None:
    if player_id is None:
        return None
    status = player_status(state, side, player_id)
    if status == "sent_off":
        return refuse(RefusalCode.SENT_OFF, "that player has been sent off")
    if status == "off":
        return refuse(RefusalCode.ALREADY_OFF, "that player is already off")
    if status == "bench":
        return refuse(RefusalCode.ON_BENCH, "that player is on the bench")
    if status == "stranger":
        return refuse(RefusalCode.NOT_ON_PITCH, "no such player on the pitch")
    return None


def _check_period_start(state: FootballState, period: FootballPeriod) -> Refusal | None:
    game = state.game
    if is_over(state):
        return refuse(RefusalCode.MATCH_OVER, "the match is over")
    if game.current is not None:
        return refuse(RefusalCode.PERIOD_RUNNING, f"the {PERIOD_NAMES[game.current]} is still running")
    if period in game.periods:
        return refuse(RefusalCode.PERIOD_PLAYED, f"the {PERIOD_NAMES[period]} has already been played")
    if period in next_periods(state):
        return None
    if not game.periods:
        return refuse(RefusalCode.PERIOD_ORDER, "the match starts with the first half")
    last = game.periods[-1]
    if period in ("ET1", "PEN") and state.rules.knockout is True and last == "2H":
        return refuse(
            RefusalCode.PERIOD_ORDER,
            "extra time comes before the shootout"
            if period == "PEN"
            else "this competition has no extra time",
        )
    return refuse(
        RefusalCode.PERIOD_ORDER, f"the {PERIOD_NAMES[period]} can't follow the {PERIOD_NAMES[last]}"
    )


def _check_period_end(state: FootballState, period: FootballPeriod) -> Refusal | None:
    game = state.game
    if game.current != period:
        if period in game.periods:
            return refuse(RefusalCode.PERIOD_PLAYED, f"the {PERIOD_NAMES[period]} has already ended")
        return refuse(RefusalCode.NOT_STARTED, f"the {PERIOD_NAMES[period]} has not started")
    if period == "PEN" and not game.shootout.decided:
        return refuse(RefusalCode.SHOOTOUT_UNDECIDED, "the shootout is not decided yet")
    return None


def _check_goal(state: FootballState, goal: FootballGoal) -> Refusal | None:
    refusal = _in_play(state)
    if refusal is not None:
        return refusal
    scorer_side = other(goal.side) if goal.kind == "own_goal" else goal.side
    refusal = _on_pitch(state, scorer_side, goal.player_id)
    if refusal is not None or goal.assist_id is None:
        return refusal
    if goal.kind == "own_goal":
        return refuse(RefusalCode.NO_ASSIST, "an own goal has no assist")
    if goal.assist_id == goal.player_id:
        return refuse(RefusalCode.SAME_PLAYER, "a player can't assist their own goal")
    return _on_pitch(state, goal.side, goal.assist_id)


def _check_card(state: FootballState, card: FootballCard) -> Refusal | None:
    refusal = _kicked_off(state)
    if refusal is not None:
        return refusal
    status = player_status(state, card.side, card.player_id)
    if status == "sent_off":
        return refuse(RefusalCode.SENT_OFF, "that player has been sent off")
    if status == "stranger":
        return refuse(RefusalCode.NOT_IN_SQUAD, f"no such player in the {card.side} squad")
    has_yellow = any(b.color == "yellow" for b in active_cards(state, card.side, card.player_id))
    if card.color == "yellow" and has_yellow:
        return refuse(
            RefusalCode.CARD_SEQUENCE, "that player already has a yellow card: send a second yellow"
        )
    if card.color == "second_yellow" and not has_yellow:
        return refuse(RefusalCode.CARD_SEQUENCE, "that player has no yellow card yet")
    return None


def _check_substitution(state: FootballState, sub: FootballSubstitution) -> Refusal | None:
    refusal = _kicked_off(state)
    if refusal is not None:
        return refusal
    if state.game.current == "PEN":
        return refuse(RefusalCode.SHOOTOUT_ON, "no substitutions during the shootout")
    if sub.player_on == sub.player_off:
        return refuse(RefusalCode.SAME_PLAYER, "a player can't replace themself")
    used = sum(1 for s in state.game.substitutions if s.side == sub.side)
    if used >= state.rules.max_substitutions:
        return refuse(
            RefusalCode.NO_SUBSTITUTIONS_LEFT,
            f"{sub.side} has used all {state.rules.max_substitutions} substitutions",
        )
    refusal = _on_pitch(state, sub.side, sub.player_off)
    if refusal is not None:
        return refusal
    status = player_status(state, sub.side, sub.player_on)
    if status == "on":
        return refuse(RefusalCode.ALREADY_ON, "that player is already on the pitch")
    if status == "off":
        return refuse(RefusalCode.ALREADY_OFF, "that player was substituted off and can't come back")
    if status == "sent_off":
        return refuse(RefusalCode.SENT_OFF, "that player has been sent off")
    if status == "stranger":
        return refuse(RefusalCode.NOT_IN_SQUAD, f"no such player on the {sub.side} bench")
    return None


def _check_kick(state: FootballState, kick: FootballShootoutKick) -> Refusal | None:
    game = state.game
    if is_over(state):
        return refuse(RefusalCode.MATCH_OVER, "the match is over")
    if game.current != "PEN":
        return refuse(RefusalCode.NOT_STARTED, "the penalty shootout has not started")
    if game.shootout.decided:
        return refuse(RefusalCode.SHOOTOUT_DECIDED, "the shootout is decided")
    if game.shootout.taken.get(kick.side) > game.shootout.taken.get(other(kick.side)):
        return refuse(RefusalCode.SHOOTOUT_TURN, f"{other(kick.side)} kicks next")
    return _on_pitch(state, kick.side, kick.player_id)
