"""The cricket line a Live Activity shows, and the workflow carries from change to change.

Small on purpose: it travels in every push's input (workflow history) and across continue-as-new.
Everything in it derives from the `CricketBoard`: batting side `210/5 (18.4)`, the other side's
score, striker and non-striker with runs (balls), the bowler's figures, the last six balls, and in
a chase the target, what is needed from how many balls, and the required rate.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from domain.cricket.board import BatterFigures, CricketBoard
from domain.frozen import Frozen

_Name = Annotated[str, Field(max_length=80)]


class BatterLine(Frozen):
    name: _Name | None = None
    runs: int = 0
    balls: int = 0


class CricketLine(Frozen):
    batting: Literal["home", "away"] | None = None
    runs: int = 0
    wickets: int = 0
    overs: Annotated[str, Field(max_length=8)] = "0.0"
    other: Annotated[str, Field(max_length=16)] | None = None
    """The other side's latest innings, `173/6`, once it has batted."""
    striker: BatterLine | None = None
    non_striker: BatterLine | None = None
    bowler: Annotated[str, Field(max_length=120)] | None = None
    """`Name 3.5-0-28-1` (overs-maidens-runs-wickets)."""
    last_six: tuple[Annotated[str, Field(max_length=6)], ...] = ()
    target: int | None = None
    need: int | None = None
    balls_left: int | None = None
    required_rate: float | None = None
    super_over: bool = False


def line_of(board: CricketBoard) -> CricketLine:
    """The line for the board's current innings."""
    innings = board.current
    if innings is None:
        return CricketLine()
    other_side: Literal["home", "away"] = "away" if innings.side == "home" else "home"
    other = board.latest(other_side) if innings.side is not None else None
    bowler = board.bowler
    target = innings.target
    need = balls_left = rate = None
    if target is not None:
        need = max(0, target - innings.runs)
        overs = (
            board.target_overs
            if board.revised and board.target_overs
            else _overs_of(board, innings.super_over)
        )
        if overs is not None:
            balls_left = max(0, overs * 6 - innings.legal_balls)
            rate = round(need * 6 / balls_left, 2) if balls_left else None
    return CricketLine(
        batting=innings.side,
        runs=innings.runs,
        wickets=innings.wickets,
        overs=innings.overs,
        other=f"{other.runs}/{other.wickets}" if other is not None and other is not innings else None,
        striker=_batter(board.striker),
        non_striker=_batter(board.non_striker),
        bowler=None if bowler is None else f"{(bowler.name or '')[:100]} {bowler.figures}".strip(),
        last_six=board.last_six[-6:],
        target=target,
        need=need,
        balls_left=balls_left,
        required_rate=rate,
        super_over=innings.super_over,
    )


def _overs_of(board: CricketBoard, super_over: bool) -> int | None:
    return 1 if super_over else board.scheduled_overs


def _batter(figures: BatterFigures | None) -> BatterLine | None:
    if figures is None:
        return None
    return BatterLine(
        name=(figures.name or None) and figures.name[:80], runs=figures.runs, balls=figures.balls
    )
