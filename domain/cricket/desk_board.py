"""The `CricketBoard` of a desk-scored match, from its rule state.

A provider's board is folded from its balls (`domain.cricket_scoring`); a desk's rule state
already holds the running figures (`domain.rules.cricket.CricketGame`), so its board is read off
them instead, with the same meaning field for field: every output (read view, feed, push) then
shows a club match scored by a desk exactly like a provider's match.

A desk fixture's teams have no ids (`TeamView.id` is None for them): innings and results name
the side only. The rule state knows players by id, not by name, so figures carry no names.

Stdlib, pydantic and domain models only: it runs inside the Temporal workflow.
"""

from __future__ import annotations

from collections.abc import Sequence

from domain.cricket.board import (
    BatterFigures,
    BowlerFigures,
    CricketBoard,
    CricketResult,
    Extras,
    InningsTotal,
    Scoreboard,
)
from domain.rules.commands import Side
from domain.rules.common import other
from domain.rules.cricket import BALLS_PER_OVER, MAX_WICKETS, CricketGame, CricketRules, CricketState
from domain.rules.cricket import Extras as RuleExtras

_SCOREBOARDS: dict[int, Scoreboard] = {1: "S1", 2: "S2", 3: "S3", 4: "S4"}


def board_of(state: CricketState) -> CricketBoard:
    """The board of the match as the desks have scored it so far.

    Between innings (and once the match is over) the crease, the bowler and the last six are
    those the last innings ended with, as on a provider's board.
    """
    game = state.game
    innings = _with_targets(_innings(game), state.rules)
    current = innings[-1] if innings else None
    return CricketBoard(
        scheduled_overs=state.rules.max_overs,
        innings=innings,
        batting_side=current.side if current is not None else None,
        striker=_batter(game, game.striker),
        non_striker=_batter(game, game.non_striker),
        bowler=_bowler(game),
        last_six=game.last_six,
        target=current.target if current is not None else None,
        result=_result(innings, state.rules) if game.finished else None,
    )


def _innings(game: CricketGame) -> list[InningsTotal]:
    totals = [
        _total(number, done.batting, done.runs, done.wickets, done.legal_balls, done.extras)
        for number, done in enumerate(game.completed, start=1)
    ]
    if game.in_play and game.batting is not None:
        legal_balls = game.overs * BALLS_PER_OVER + game.balls
        totals.append(_total(game.innings, game.batting, game.runs, game.wickets, legal_balls, game.extras))
    return totals


def _total(
    number: int, side: Side, runs: int, wickets: int, legal_balls: int, extras: RuleExtras
) -> InningsTotal:
    return InningsTotal(
        scoreboard=_SCOREBOARDS[number],
        number=number,
        side=side,
        runs=runs,
        wickets=wickets,
        legal_balls=legal_balls,
        extras=Extras(
            wides=extras.wides, no_balls=extras.no_balls, byes=extras.byes, leg_byes=extras.leg_byes
        ),
    )


def _with_targets(innings: list[InningsTotal], rules: CricketRules) -> tuple[InningsTotal, ...]:
    return tuple(
        total.model_copy(update={"target": _target(total, innings[: total.number - 1], rules)})
        for total in innings
    )


def _target(total: InningsTotal, earlier: Sequence[InningsTotal], rules: CricketRules) -> int | None:
    """What the side batting last needs: one more than the first innings in a one-innings match;
    in a two-innings match, one more than the lead it faces (by side, so a follow-on counts)."""
    if total.number != rules.max_innings:
        return None
    if rules.max_innings == 2:
        return earlier[0].runs + 1
    lead = sum(done.runs for done in earlier if done.side != total.side) - sum(
        done.runs for done in earlier if done.side == total.side
    )
    return lead + 1 if lead >= 0 else None


def _batter(game: CricketGame, batter_id: int | None) -> BatterFigures | None:
    if batter_id is None:
        return None
    tally = next((each for each in game.batters if each.id == batter_id), None)
    if tally is None:
        return BatterFigures(id=batter_id)
    return BatterFigures(
        id=batter_id, runs=tally.runs, balls=tally.balls, fours=tally.fours, sixes=tally.sixes
    )


def _bowler(game: CricketGame) -> BowlerFigures | None:
    """The bowler of the over in progress, else of the over just ended (between overs)."""
    bowler_id = game.bowler if game.bowler is not None else game.last_over_bowler
    if bowler_id is None:
        return None
    tally = next((each for each in game.bowlers if each.id == bowler_id), None)
    if tally is None:
        return BowlerFigures(id=bowler_id)
    return BowlerFigures(
        id=bowler_id,
        legal_balls=tally.legal_balls,
        maidens=tally.maidens,
        runs=tally.runs,
        wickets=tally.wickets,
    )


def _result(innings: Sequence[InningsTotal], rules: CricketRules) -> CricketResult:
    """How a finished match ended, from each side's runs over all its innings.

    A limited-overs match has no draw: more runs win, equal runs tie, and a match in which a side
    never batted has no result. Without an overs limit a side wins only once the other has had all
    its innings and either the winner passed its total batting last or the other was bowled out
    last; a tie needs both sides' innings played out; anything else is a draw (time ran out).
    """
    runs = {"home": 0, "away": 0}
    played = {"home": 0, "away": 0}
    for done in innings:
        if done.side is not None:
            runs[done.side] += done.runs
            played[done.side] += 1
    limited = rules.max_overs is not None
    if not (played["home"] and played["away"]):
        return CricketResult(kind="no_result" if limited else "draw")
    last = innings[-1]
    bowled_out = last.wickets >= MAX_WICKETS
    each = rules.max_innings // 2
    if runs["home"] == runs["away"]:
        tie = limited or (bowled_out and played["home"] == played["away"] == each)
        return CricketResult(kind="tie" if tie else "draw")
    winner: Side = "home" if runs["home"] > runs["away"] else "away"
    beaten = played[other(winner)] == each and (last.side == winner or bowled_out)
    if limited or beaten:
        return CricketResult(kind="win", side=winner)
    return CricketResult(kind="draw")
