"""Football rules for desk commands: `check` says whether a command makes sense now, `step` applies it.

The state is small and JSON-serialisable: the periods played, the goals and bookings (with the seq
that logged them, for VAR), the substitutions, corners, the shootout tally, and a bounded undo log.
The score is derived from the goals that were not overturned, so it can never go negative.

Players: when the state knows a side's lineup, every player named in a command must fit it (on the
pitch, on the bench…). When it does not, nobody is invented, but what the log itself proves is still
enforced: a sent-off player cannot score, be booked or be substituted, and a substituted player
cannot come back.

This module imports only the stdlib, pydantic and `domain.rules`: safe in the workflow sandbox.
"""

from __future__ import annotations

from typing import Literal, TypeVar

from pydantic import Field, JsonValue

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
    Touch,
    card_touches,
    command_touches,
)
from domain.rules.common import (
    Actor,
    Frozen,
    IllegalCommand,
    Lineups,
    Mode,
    Pair,
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

PERIOD_NAMES: dict[str, str] = {
    "1H": "first half",
    "2H": "second half",
    "ET1": "first half of extra time",
    "ET2": "second half of extra time",
    "PEN": "penalty shootout",
}

PlayerStatus = Literal["on", "bench", "off", "sent_off", "stranger", "unknown"]
"""Where a player stands: `stranger` = not in a known lineup, `unknown` = the lineup is not known."""


class FootballRules(Frozen):
    """The competition's rules that the desk cannot change mid-match."""

    max_substitutions: int = Field(default=5, ge=0, le=20)
    knockout: bool | None = None
    """True: a level score after 90' goes on (extra time or a shootout); False: a draw stands;
    None (unknown): a level score after 90' may go on, if the desk starts it."""
    extra_time: bool = True
    """In a knockout tie, whether extra time comes before the shootout."""
    undo_window: int = Field(default=100, ge=1, le=1000)
    """How many of the newest steps can be undone, one after the other."""


class GoalRecord(Frozen):
    """A goal as logged, kept for VAR (by `seq`) and for the score (unless `overturned`)."""

    seq: int
    side: Side
    """The side the goal counts for."""
    kind: Literal["open_play", "penalty", "own_goal"]
    player_id: int | None = None
    overturned: bool = False


class Booking(Frozen):
    """A card as logged; a standing red or second yellow sends the player off."""

    seq: int
    side: Side
    player_id: int
    color: Literal["yellow", "second_yellow", "red"]
    overturned: bool = False

    @property
    def sends_off(self) -> bool:
        """The card stands and the player had to leave."""
        return self.color != "yellow" and not self.overturned


class SubRecord(Frozen):
    """A substitution: `player_on` replaced `player_off`."""

    side: Side
    player_on: int
    player_off: int


class Shootout(Frozen):
    """Kicks taken and scored by each side in the penalty shootout."""

    taken: Pair = Pair()
    scored: Pair = Pair()

    @property
    def decided(self) -> bool:
        """Five kicks each (or fewer, when one side can no longer catch up), then sudden death."""
        th, ta, sh, sa = self.taken.home, self.taken.away, self.scored.home, self.scored.away
        if th <= 5 and ta <= 5:
            return sh > sa + (5 - ta) or sa > sh + (5 - th)
        return th == ta and sh != sa


class FootballGame(Frozen):
    """Everything a command can change (the mode aside): what undo restores."""

    periods: tuple[FootballPeriod, ...] = ()
    """The periods started, in order; the last one is running when `running`."""
    running: bool = False
    goals: tuple[GoalRecord, ...] = ()
    bookings: tuple[Booking, ...] = ()
    substitutions: tuple[SubRecord, ...] = ()
    corners: Pair = Pair()
    shootout: Shootout = Shootout()

    @property
    def score(self) -> Pair:
        """Goals that stand (the shootout is not part of the score)."""
        home = sum(1 for goal in self.goals if goal.side == "home" and not goal.overturned)
        away = sum(1 for goal in self.goals if goal.side == "away" and not goal.overturned)
        return Pair(home=home, away=away)

    @property
    def current(self) -> FootballPeriod | None:
        """The running period, if any."""
        return self.periods[-1] if self.running else None


class FootballState(Frozen):
    """The football rule state of one match, carried by the match workflow."""

    sport: Literal["football"] = "football"
    mode: Mode = "desk"
    rules: FootballRules = FootballRules()
    lineups: Lineups = Lineups()
    game: FootballGame = FootballGame()
    undo: tuple[UndoEntry, ...] = ()


def initial_state(
    mode: Mode = "desk", lineups: Lineups | None = None, rules: FootballRules | None = None
) -> FootballState:
    """A match before kickoff."""
    return FootballState(mode=mode, lineups=lineups or Lineups(), rules=rules or FootballRules())


# --- where the match stands -----------------------------------------------------------------------


def next_periods(state: FootballState) -> tuple[FootballPeriod, ...]:
    """The periods that may start now (none while one is running, or when the match is over)."""
    game, rules = state.game, state.rules
    if game.running:
        return ()
    if not game.periods:
        return ("1H",)
    last = game.periods[-1]
    level = game.score.home == game.score.away
    if last == "1H":
        return ("2H",)
    if last == "ET1":
        return ("ET2",)
    if last == "ET2":
        return ("PEN",) if level else ()
    if last == "2H" and level and rules.knockout is not False:
        if rules.knockout is None and rules.extra_time:
            return ("ET1", "PEN")
        return ("ET1",) if rules.extra_time else ("PEN",)
    return ()


def is_over(state: FootballState) -> bool:
    """Played, and nothing more can start: derived, so a VAR decision after the whistle counts."""
    return bool(state.game.periods) and not state.game.running and not next_periods(state)


def player_status(state: FootballState, side: Side, player_id: int) -> PlayerStatus:
    """Where `player_id` of `side` stands, from the log first and the lineup second."""
    game = state.game
    if any(b.sends_off and b.side == side and b.player_id == player_id for b in game.bookings):
        return "sent_off"
    subs = [sub for sub in game.substitutions if sub.side == side]
    if any(sub.player_off == player_id for sub in subs):
        return "off"
    if any(sub.player_on == player_id for sub in subs):
        return "on"
    lineup = state.lineups.get(side)
    if lineup is None:
        return "unknown"
    if player_id in lineup.starting:
        return "on"
    return "bench" if player_id in lineup.bench else "stranger"


# --- check ----------------------------------------------------------------------------------------


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
            return _check_var(state, command)
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


def _active_cards(state: FootballState, side: Side, player_id: int) -> list[Booking]:
    return [
        b for b in state.game.bookings if b.side == side and b.player_id == player_id and not b.overturned
    ]


def _check_card(state: FootballState, card: FootballCard) -> Refusal | None:
    refusal = _kicked_off(state)
    if refusal is not None:
        return refusal
    status = player_status(state, card.side, card.player_id)
    if status == "sent_off":
        return refuse(RefusalCode.SENT_OFF, "that player has been sent off")
    if status == "stranger":
        return refuse(RefusalCode.NOT_IN_SQUAD, f"no such player in the {card.side} squad")
    has_yellow = any(b.color == "yellow" for b in _active_cards(state, card.side, card.player_id))
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


def _review_target(state: FootballState, seq: int) -> GoalRecord | Booking | None:
    targets: list[GoalRecord | Booking] = [*state.game.goals, *state.game.bookings]
    return next((target for target in targets if target.seq == seq), None)


def _check_var(state: FootballState, var: MatchVar) -> Refusal | None:
    target = _review_target(state, var.target_seq)
    if target is None:
        if find_entry(state.undo, var.target_seq) is not None:
            return refuse(RefusalCode.NOT_REVIEWABLE, "VAR reviews goals and cards only")
        return refuse(RefusalCode.TARGET_NOT_FOUND, f"no goal or card at seq {var.target_seq}")
    what = "goal" if isinstance(target, GoalRecord) else "card"
    if target.overturned:
        return refuse(RefusalCode.ALREADY_OVERTURNED, f"that {what} was already overturned")
    if var.decision == "overturned" and isinstance(target, Booking):
        later = [b for b in _active_cards(state, target.side, target.player_id) if b.seq > target.seq]
        if later:
            return refuse(RefusalCode.LATER_CARD, "that player has a later card: review that one first")
    return None


# --- step -----------------------------------------------------------------------------------------


def touches(state: FootballState, command: Command) -> frozenset[Touch]:
    """What `command` changes; VAR and undo touch what their target touched."""
    if isinstance(command, MatchUndo):
        entry = find_entry(state.undo, command.target_seq)
        return frozenset(entry.touches) if entry is not None else frozenset()
    if isinstance(command, MatchVar):
        target = _review_target(state, command.target_seq)
        if isinstance(target, GoalRecord):
            return frozenset({Touch.SCORE})
        return card_touches(target.color) if target is not None else frozenset()
    return command_touches(command)


def step(state: FootballState, command: Command, seq: int) -> FootballState:
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
    if isinstance(command, MatchCommentary) or (
        isinstance(command, MatchVar) and command.decision == "confirmed"
    ):
        return state
    game = _apply(state.game, command, seq)
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


def _apply(game: FootballGame, command: Command, seq: int) -> FootballGame:
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
            update = {
                "goals": tuple(_overturn(g, command.target_seq) for g in game.goals),
                "bookings": tuple(_overturn(b, command.target_seq) for b in game.bookings),
            }
        case _:  # a missed penalty is logged (and undoable) but changes no count
            update = {}
    return game.model_copy(update=update)


_Reviewed = TypeVar("_Reviewed", GoalRecord, Booking)


def _overturn(target: _Reviewed, seq: int) -> _Reviewed:
    return target.model_copy(update={"overturned": True}) if target.seq == seq else target


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
    "check",
    "initial_state",
    "is_over",
    "next_periods",
    "player_status",
    "scoreboard",
    "step",
    "touches",
]
