"""VAR for football: which logged goal or card a review targets, and what overturning it changes.

An overturned goal or card stays in the log, marked `overturned`: the score goes down, a sent-off
player comes back. A confirmed decision changes nothing.

This module imports only the stdlib, pydantic and `domain.rules`: safe in the workflow sandbox.
"""

from __future__ import annotations

from typing import TypeVar

from domain.rules.commands import MatchVar, Touch, card_touches
from domain.rules.common import Refusal, RefusalCode, refuse
from domain.rules.football_state import Booking, FootballGame, FootballState, GoalRecord, active_cards
from domain.rules.undo_log import find_entry


def review_target(state: FootballState, seq: int) -> GoalRecord | Booking | None:
    """The goal or card logged at `seq`, if any."""
    targets: list[GoalRecord | Booking] = [*state.game.goals, *state.game.bookings]
    return next((target for target in targets if target.seq == seq), None)


def check_var(state: FootballState, var: MatchVar) -> Refusal | None:
    """Why `var` cannot be decided now: no such goal or card, already overturned, or a later card first."""
    target = review_target(state, var.target_seq)
    if target is None:
        if find_entry(state.undo, var.target_seq) is not None:
            return refuse(RefusalCode.NOT_REVIEWABLE, "VAR reviews goals and cards only")
        return refuse(RefusalCode.TARGET_NOT_FOUND, f"no goal or card at seq {var.target_seq}")
    what = "goal" if isinstance(target, GoalRecord) else "card"
    if target.overturned:
        return refuse(RefusalCode.ALREADY_OVERTURNED, f"that {what} was already overturned")
    if var.decision == "overturned" and isinstance(target, Booking):
        later = [b for b in active_cards(state, target.side, target.player_id) if b.seq > target.seq]
        if later:
            return refuse(RefusalCode.LATER_CARD, "that player has a later card: review that one first")
    return None


def var_touches(state: FootballState, target_seq: int) -> frozenset[Touch]:
    """What a review of the step at `target_seq` touches: the score for a goal, the cards for a card."""
    target = review_target(state, target_seq)
    if isinstance(target, GoalRecord):
        return frozenset({Touch.SCORE})
    return card_touches(target.color) if target is not None else frozenset()


def overturned(game: FootballGame, seq: int) -> FootballGame:
    """`game` with the goal or card logged at `seq` overturned: it no longer counts."""
    return game.model_copy(
        update={
            "goals": tuple(_overturn(g, seq) for g in game.goals),
            "bookings": tuple(_overturn(b, seq) for b in game.bookings),
        }
    )


_Reviewed = TypeVar("_Reviewed", GoalRecord, Booking)


def _overturn(target: _Reviewed, seq: int) -> _Reviewed:
    return target.model_copy(update={"overturned": True}) if target.seq == seq else target
