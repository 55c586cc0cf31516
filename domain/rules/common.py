"""What both sports' rules share: refusals, modes, lineups and the gate every command passes first.

Everything here is a frozen pydantic model that round-trips through JSON
(`model_dump(mode="json")` → `model_validate` gives an equal model), because rule states are
carried through Temporal history and continue-as-new.

This module imports only the stdlib and pydantic: it is safe inside the Temporal workflow sandbox.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal

from pydantic import Field, model_validator

from domain.frozen import Frozen
from domain.rules.commands import MAX_ID, Command, MatchCommentary, MatchSetMode, Side

Mode = Literal["provider", "desk"]
"""Who owns the score: the data provider, or the scorer desks."""

Actor = Literal["desk", "operator"]
"""Who sends a command. Operators may switch the mode and correct a provider-owned match."""

PlayerId = Annotated[int, Field(gt=0, le=MAX_ID)]


class RefusalCode(StrEnum):
    """Why a rule said no. Stable identifiers: desks and tests match on these, never on messages."""

    PROVIDER_OWNED = "provider_owned"
    OPERATORS_ONLY = "operators_only"
    WRONG_SPORT = "wrong_sport"
    SAME_MODE = "same_mode"
    MATCH_OVER = "match_over"
    NOT_STARTED = "not_started"
    PERIOD_RUNNING = "period_running"
    PERIOD_PLAYED = "period_played"
    PERIOD_ORDER = "period_order"
    SHOOTOUT_ON = "shootout_on"
    SHOOTOUT_UNDECIDED = "shootout_undecided"
    SHOOTOUT_DECIDED = "shootout_decided"
    SHOOTOUT_TURN = "shootout_turn"
    NOT_ON_PITCH = "not_on_pitch"
    NOT_IN_SQUAD = "not_in_squad"
    ON_BENCH = "on_bench"
    ALREADY_ON = "already_on"
    ALREADY_OFF = "already_off"
    SENT_OFF = "sent_off"
    SAME_PLAYER = "same_player"
    NO_ASSIST = "no_assist"
    NO_SUBSTITUTIONS_LEFT = "no_substitutions_left"
    CARD_SEQUENCE = "card_sequence"
    TARGET_NOT_FOUND = "target_not_found"
    NOT_LAST = "not_last"
    NOT_REVIEWABLE = "not_reviewable"
    ALREADY_OVERTURNED = "already_overturned"
    LATER_CARD = "later_card"
    NO_INNINGS = "no_innings"
    INNINGS_IN_PROGRESS = "innings_in_progress"
    BATTING_ORDER = "batting_order"
    ALL_OUT = "all_out"
    ELEVENTH_WICKET = "eleventh_wicket"
    OVER_COMPLETE = "over_complete"
    NO_OVER = "no_over"
    OVER_INCOMPLETE = "over_incomplete"
    OVERS_USED = "overs_used"
    BOWLER_NEEDED = "bowler_needed"
    CONSECUTIVE_OVERS = "consecutive_overs"
    ALREADY_BOWLING = "already_bowling"
    NOT_BATTING = "not_batting"
    NOT_FIELDING = "not_fielding"
    ALREADY_OUT = "already_out"
    AT_CREASE = "at_crease"
    NO_BATTERS_LEFT = "no_batters_left"
    IMPOSSIBLE_DISMISSAL = "impossible_dismissal"
    NO_DECLARATION = "no_declaration"


class Refusal(Frozen):
    """A rule's "no": a stable `code` and a `message` a scorer understands."""

    code: RefusalCode
    message: str


def refuse(code: RefusalCode, message: str) -> Refusal:
    """Shorthand used by the rule modules."""
    return Refusal(code=code, message=message)


class IllegalCommand(ValueError):
    """`step` was called with a command that `check` refuses: a bug in the caller, never a desk error."""

    def __init__(self, refusal: Refusal) -> None:
        super().__init__(f"{refusal.code}: {refusal.message}")
        self.refusal = refusal


class Pair(Frozen):
    """A count for each side."""

    home: int = 0
    away: int = 0

    def get(self, side: Side) -> int:
        """The count of `side`."""
        return self.home if side == "home" else self.away

    def add(self, side: Side, n: int = 1) -> Pair:
        """A copy with `n` more for `side`."""
        return self.model_copy(update={side: self.get(side) + n})


class Lineup(Frozen):
    """One side's known players: who starts (the XI in cricket) and who may come on."""

    starting: tuple[PlayerId, ...] = Field(min_length=1, max_length=11)
    bench: tuple[PlayerId, ...] = Field(default=(), max_length=23)

    @model_validator(mode="after")
    def _distinct(self) -> Lineup:
        ids = self.starting + self.bench
        if len(set(ids)) != len(ids):
            raise ValueError("a player appears twice in the lineup")
        return self


class Lineups(Frozen):
    """Lineups for either side; a side without one is not checked (we never invent players)."""

    home: Lineup | None = None
    away: Lineup | None = None

    def get(self, side: Side) -> Lineup | None:
        """The lineup of `side`, if known."""
        return self.home if side == "home" else self.away


def other(side: Side) -> Side:
    """The opponent of `side`."""
    return "away" if side == "home" else "home"


def gate(mode: Mode, command: Command, actor: Actor, *, sport: str) -> Refusal | None:
    """The checks every sport shares: the command's sport, operator-only commands, ownership.

    Commentary and `match.set_mode` need nothing more than this gate; every other command that
    passes it goes on to the sport's own rules.
    """
    prefix = command.code.split(".")[0]
    if prefix not in ("match", sport):
        return refuse(RefusalCode.WRONG_SPORT, f"{command.code} is not a {sport} command")
    if isinstance(command, MatchCommentary):
        return None
    if isinstance(command, MatchSetMode):
        if actor != "operator":
            return refuse(RefusalCode.OPERATORS_ONLY, "only an operator can switch the scoring mode")
        if command.mode == mode:
            return refuse(RefusalCode.SAME_MODE, f"the match is already scored in {command.mode} mode")
        return None
    if mode == "provider" and actor != "operator":
        return refuse(RefusalCode.PROVIDER_OWNED, "the data provider owns this match's score")
    return None
