"""The cricket rule state of one match: the format, and everything a command can change.

The state holds the current innings ball by ball (runs, wickets, the legal balls of the over in
progress, extras, who is on strike and who bowls) and a short summary of each finished innings. It
also keeps what a scoreboard shows beside the total — each known batter's and bowler's figures and
the last six deliveries — so the desk's board (`domain.cricket.desk_board`) reads like a provider's
without a replay of the log. They belong to the game, so undo restores them with everything else.

This module imports only the stdlib, pydantic and `domain.rules`: safe in the workflow sandbox.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

from pydantic import Field

from domain.frozen import Frozen
from domain.rules.commands import Side
from domain.rules.common import Lineups, Mode
from domain.rules.undo_log import UndoEntry

BALLS_PER_OVER = 6
MAX_WICKETS = 10


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
