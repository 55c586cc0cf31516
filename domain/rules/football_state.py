"""The football rule state of one match, and where it stands: the periods, the players, the end.

The state is small and JSON-serialisable: the periods played, the goals and bookings (with the seq
that logged them, for VAR), the substitutions, corners, the shootout tally, and a bounded undo log.
The score is derived from the goals that were not overturned, so it can never go negative; whether
the match is over is derived too, so a VAR decision after the whistle counts.

This module imports only the stdlib, pydantic and `domain.rules`: safe in the workflow sandbox.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from domain.frozen import Frozen
from domain.rules.commands import FootballPeriod, Side
from domain.rules.common import Lineups, Mode, Pair
from domain.rules.undo_log import UndoEntry

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


def active_cards(state: FootballState, side: Side, player_id: int) -> list[Booking]:
    """The cards of `player_id` of `side` that stand (not overturned by VAR), oldest first."""
    return [
        b for b in state.game.bookings if b.side == side and b.player_id == player_id and not b.overturned
    ]
