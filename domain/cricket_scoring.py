"""The pure fold of a match's balls into a `CricketBoard`.

The board is recomputed from every ball on every poll rather than updated ball by ball: the
provider edits balls in place (a run reclassified as a leg bye minutes later, or days after the
match), and a board folded from the whole list follows every edit for free. A desk-scored match
is folded by the same code, so both look the same everywhere.

The provider's own innings totals (`ReportedInnings`) only fill an innings that has no balls (the
balls include was dropped) and are otherwise kept beside the computed figures for the check.

Stdlib, pydantic and domain models only: safe inside the Temporal workflow sandbox.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple

from domain.cricket.board import (
    BallDetail,
    BatterFigures,
    BowlerFigures,
    CricketBoard,
    CricketResult,
    Extras,
    InningsTotal,
    Milestone,
    Scoreboard,
)
from domain.snapshot import Item, MatchState

SideName = Literal["home", "away"]

_ENDED = frozenset({MatchState.FINISHED, MatchState.ABANDONED, MatchState.CANCELLED})
_SCOREBOARDS: dict[int, Scoreboard] = {1: "S1", 2: "S2", 3: "S3", 4: "S4"}
# Formats played over days, where S3/S4 are the third and fourth innings. Every other format is
# limited-overs, where a tie goes to a super over bowled as S3/S4.
_MULTI_DAY = ("test", "4day", "5day", "first class", "first-class")
_MILESTONES: tuple[tuple[int, Milestone], ...] = ((100, "hundred"), (50, "fifty"))


@dataclass(frozen=True)
class ReportedInnings:
    """The provider's own total of one innings (Cricket v2's `runs` include)."""

    number: int
    team_id: int | None = None
    runs: int | None = None
    wickets: int | None = None
    legal_balls: int | None = None


@dataclass(frozen=True)
class MatchFacts:
    """What the board needs beyond the balls: the fixture's own fields, in domain terms.

    `declared` is how an ended match without a winner was recorded (`draw` or `no_result`);
    `revised_target` / `revised_overs` are a rain-revised chase.
    """

    state: MatchState = MatchState.UNKNOWN
    format: str | None = None
    scheduled_overs: int | None = None
    home_team_id: int | None = None
    away_team_id: int | None = None
    super_over: bool = False
    toss_won_team_id: int | None = None
    elected: str | None = None
    stumps_day: int | None = None
    winner_team_id: int | None = None
    declared: Literal["draw", "no_result"] | None = None
    note: str | None = None
    revised_target: int | None = None
    revised_overs: int | None = None
    reported: tuple[ReportedInnings, ...] = ()


@dataclass(frozen=True)
class ScoredMatch:
    """The balls with their milestones marked, and the board folded from them."""

    balls: tuple[Item, ...]
    board: CricketBoard


def is_multi_day(format: str | None) -> bool:
    """A Test or first-class format (an unknown format counts as limited-overs)."""
    if format is None:
        return False
    name = format.casefold()
    return any(marker in name for marker in _MULTI_DAY)


class _Delivery(NamedTuple):
    """A ball with the item fields the board reads beside it."""

    ball: BallDetail
    team_id: int | None
    batter_name: str | None
    bowler_name: str | None


def score_match(balls: Sequence[Item], facts: MatchFacts) -> ScoredMatch:
    """Fold `balls` (items of the balls stream, in bowling order) into the board.

    Items without a `ball` are ignored. The returned balls are the same items with
    `BallDetail.milestone` set on the ball that took a batter to fifty or a hundred.
    """
    marked = _with_milestones(balls)
    by_innings: dict[int, list[_Delivery]] = {}
    for item in marked:
        if item.ball is not None:
            delivery = _Delivery(item.ball, item.participant_id, item.player_name, item.related_player_name)
            by_innings.setdefault(item.ball.innings, []).append(delivery)
    innings = _with_targets(_innings(by_innings, facts), facts)
    current = innings[-1] if innings else None
    current_balls = by_innings.get(current.number, []) if current else []
    striker, non_striker = _at_the_crease(current_balls)
    revised = (
        current is not None
        and current.number == 2
        and facts.revised_target is not None
        and not is_multi_day(facts.format)
    )
    board = CricketBoard(
        format=facts.format,
        scheduled_overs=facts.scheduled_overs,
        innings=innings,
        batting_side=current.side if current else None,
        striker=striker,
        non_striker=non_striker,
        bowler=_bowler(current_balls),
        last_six=tuple(each.ball.strip for each in current_balls if each.ball.known)[-6:],
        target=current.target if current else None,
        target_overs=facts.revised_overs if revised else None,
        revised=revised,
        result=_result(facts),
        stumps_day=facts.stumps_day if facts.state is MatchState.STUMPS else None,
        super_over=facts.super_over and not is_multi_day(facts.format),
        toss_won_team_id=facts.toss_won_team_id,
        elected=facts.elected,
    )
    return ScoredMatch(balls=tuple(marked), board=board)


def _with_milestones(balls: Sequence[Item]) -> list[Item]:
    # A milestone belongs to the ball on which the striker's runs in this innings first reach it;
    # recomputed on every fold, so an edit that moves it moves the mark too.
    totals: dict[tuple[int, int], int] = {}
    marked: list[Item] = []
    for item in balls:
        ball = item.ball
        if ball is None:
            marked.append(item)
            continue
        milestone: Milestone | None = None
        if ball.batter_id is not None:
            key = (ball.innings, ball.batter_id)
            before = totals.get(key, 0)
            totals[key] = after = before + ball.batter_runs
            milestone = next((name for mark, name in _MILESTONES if before < mark <= after), None)
        if milestone != ball.milestone:
            item = item.model_copy(update={"ball": ball.model_copy(update={"milestone": milestone})})
        marked.append(item)
    return marked


def _innings(by_innings: dict[int, list[_Delivery]], facts: MatchFacts) -> list[InningsTotal]:
    reported = {row.number: row for row in facts.reported if row.number in _SCOREBOARDS}
    limited = not is_multi_day(facts.format)
    totals = []
    for number in sorted(set(by_innings) | set(reported)):
        row = reported.get(number)
        deliveries = by_innings.get(number, [])
        balls = [each.ball for each in deliveries]
        team_id = _batting_team(deliveries, row)
        if balls:
            runs = sum(ball.runs for ball in balls)
            wickets = sum(1 for ball in balls if ball.wicket)
            legal_balls = sum(1 for ball in balls if ball.legal)
        else:
            # No balls (the include was dropped): the provider's own total is all there is.
            reported_row = row or ReportedInnings(number)
            runs, wickets = reported_row.runs or 0, reported_row.wickets or 0
            legal_balls = reported_row.legal_balls or 0
        totals.append(
            InningsTotal(
                scoreboard=_SCOREBOARDS[number],
                number=number,
                team_id=team_id,
                side=_side(team_id, facts),
                runs=runs,
                wickets=wickets,
                legal_balls=legal_balls,
                extras=_extras(balls),
                super_over=number >= 3 and facts.super_over and limited,
                provider_runs=row.runs if row else None,
                provider_wickets=row.wickets if row else None,
            )
        )
    return totals


def _batting_team(deliveries: Sequence[_Delivery], row: ReportedInnings | None) -> int | None:
    # The latest ball says who bats (an edit may have fixed an earlier one); else the provider's row.
    for each in reversed(deliveries):
        if each.team_id is not None:
            return each.team_id
    return row.team_id if row else None


def _side(team_id: int | None, facts: MatchFacts) -> SideName | None:
    if team_id is None:
        return None
    if team_id == facts.home_team_id:
        return "home"
    if team_id == facts.away_team_id:
        return "away"
    return None


def _extras(balls: Iterable[BallDetail]) -> Extras:
    wides = no_balls = byes = leg_byes = 0
    for ball in balls:
        wides += ball.wides
        no_balls += ball.no_balls
        byes += ball.byes
        leg_byes += ball.leg_byes
    return Extras(wides=wides, no_balls=no_balls, byes=byes, leg_byes=leg_byes)


def _with_targets(innings: list[InningsTotal], facts: MatchFacts) -> tuple[InningsTotal, ...]:
    by_number = {total.number: total for total in innings}
    return tuple(total.model_copy(update={"target": _target(total, by_number, facts)}) for total in innings)


def _target(total: InningsTotal, by_number: dict[int, InningsTotal], facts: MatchFacts) -> int | None:
    if is_multi_day(facts.format):
        return _fourth_innings_target(total, by_number) if total.number == 4 else None
    if total.number == 2:
        if facts.revised_target is not None:
            return facts.revised_target
        first = by_number.get(1)
        return first.runs + 1 if first else None
    if total.number == 4 and total.super_over:
        third = by_number.get(3)
        return third.runs + 1 if third else None
    return None


def _fourth_innings_target(fourth: InningsTotal, by_number: dict[int, InningsTotal]) -> int | None:
    # By team rather than by position, so a follow-on (the same side batting twice in a row) works.
    if fourth.team_id is None:
        return None
    earlier = [by_number[number] for number in (1, 2, 3) if number in by_number]
    if any(total.team_id is None for total in earlier):
        return None
    own = sum(total.runs for total in earlier if total.team_id == fourth.team_id)
    other = sum(total.runs for total in earlier if total.team_id != fourth.team_id)
    lead = other - own
    return lead + 1 if lead >= 0 else None


def _at_the_crease(balls: Sequence[_Delivery]) -> tuple[BatterFigures | None, BatterFigures | None]:
    """The striker and the non-striker after the latest ball.

    The latest ball names the pair; a batter out on it has left, and that slot stays empty until
    the next ball names the new batter.
    """
    if not balls:
        return None, None
    latest = balls[-1].ball
    striker, non_striker = latest.batter_id, latest.non_striker_id
    if latest.wicket and latest.out_batter_id is not None:
        if latest.out_batter_id == striker:
            striker = None
        elif latest.out_batter_id == non_striker:
            non_striker = None
    return _batter(striker, balls), _batter(non_striker, balls)


def _batter(batter_id: int | None, balls: Sequence[_Delivery]) -> BatterFigures | None:
    if batter_id is None:
        return None
    name = None
    runs = faced = fours = sixes = 0
    for each in balls:
        ball = each.ball
        if ball.batter_id != batter_id:
            continue
        name = each.batter_name or name
        runs += ball.batter_runs
        # A wide is not a ball faced; a no-ball is. An unknown outcome counts as nothing.
        faced += ball.known and ball.wides == 0
        fours += ball.four
        sixes += ball.six
    return BatterFigures(id=batter_id, name=name, runs=runs, balls=faced, fours=fours, sixes=sixes)


def _charged(ball: BallDetail) -> int:
    """Runs charged to the bowler: byes and leg-byes are not the bowler's."""
    return ball.batter_runs + ball.wides + ball.no_balls


def _bowler(balls: Sequence[_Delivery]) -> BowlerFigures | None:
    if not balls:
        return None
    bowler_id = balls[-1].ball.bowler_id
    if bowler_id is None:
        return None
    name = None
    legal = runs = wickets = 0
    overs: dict[int, list[BallDetail]] = {}
    for each in balls:
        ball = each.ball
        overs.setdefault(ball.over, []).append(ball)
        if ball.bowler_id != bowler_id:
            continue
        name = each.bowler_name or name
        legal += ball.legal
        runs += _charged(ball)
        wickets += ball.bowler_wicket
    maidens = sum(1 for over in overs.values() if _is_maiden(over, bowler_id))
    return BowlerFigures(
        id=bowler_id, name=name, legal_balls=legal, maidens=maidens, runs=runs, wickets=wickets
    )


def _is_maiden(over: Sequence[BallDetail], bowler_id: int) -> bool:
    # A completed over bowled wholly by this bowler with nothing charged to them.
    return (
        all(ball.bowler_id == bowler_id for ball in over)
        and sum(ball.legal for ball in over) >= 6
        and sum(_charged(ball) for ball in over) == 0
    )


def _result(facts: MatchFacts) -> CricketResult | None:
    if facts.state not in _ENDED:
        return None
    if facts.winner_team_id is not None:
        return CricketResult(
            kind="win",
            winner_team_id=facts.winner_team_id,
            side=_side(facts.winner_team_id, facts),
            text=facts.note,
        )
    if facts.declared == "draw":
        return CricketResult(kind="draw", text=facts.note)
    if facts.declared == "no_result" or facts.state is not MatchState.FINISHED:
        return CricketResult(kind="no_result", text=facts.note)
    return CricketResult(kind="tie", text=facts.note)


__all__ = [
    "MatchFacts",
    "ReportedInnings",
    "ScoredMatch",
    "is_multi_day",
    "score_match",
]
