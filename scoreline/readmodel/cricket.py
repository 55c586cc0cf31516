"""The cricket parts of the views, built from what the ingest stores.

The scoreboard's body carries the whole `CricketBoard` under `cricket`; each ball's `match_event`
body is its `Item`, with the delivery under `ball`. Both are parsed with the domain models, so
the views show exactly what the board computed. A stored body that does not parse is logged and
shown without its cricket part: one bad row must never take a match or its events off the API.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import ValidationError

from domain.cricket.board import BallDetail, CricketBoard, InningsTotal
from domain.snapshot import Side
from scoreline.logging import get_logger
from scoreline.readmodel.views import (
    BallExtrasView,
    BallView,
    BatterView,
    BowlerView,
    CricketPlay,
    InningsView,
    ResultView,
    WicketView,
    player_view,
)

log = get_logger(__name__)

BALLS_PER_OVER = 6
SUPER_OVER_BALLS = BALLS_PER_OVER
"""A super over is one over, whatever the match's own limit."""


def play_of(fixture_id: int, board: Mapping[str, Any]) -> CricketPlay:
    """The cricket fields of a match view; all None when the board holds no cricket (football)."""
    stored = board.get("cricket")
    if stored is None:
        return CricketPlay()
    try:
        cricket = CricketBoard.model_validate(stored)
    except ValidationError as error:
        log.warning("readmodel.bad_cricket_board", fixture_id=fixture_id, error=str(error))
        return CricketPlay()
    return _play(cricket)


def ball_view(event_id: int, body: Mapping[str, Any]) -> BallView | None:
    """The delivery of a ball event; None for any other event or a ball that does not parse."""
    stored = body.get("ball")
    if stored is None:
        return None
    try:
        ball = BallDetail.model_validate(stored)
    except ValidationError as error:
        log.warning("readmodel.bad_ball", match_event_id=event_id, error=str(error))
        return None
    return BallView(
        scoreboard=ball.scoreboard,
        innings=ball.innings,
        over=ball.over,
        ball=ball.ball,
        notation=ball.notation,
        batter=player_view(
            ball.batter_id if ball.batter_id is not None else body.get("player_id"), body.get("player_name")
        ),
        bowler=player_view(
            ball.bowler_id if ball.bowler_id is not None else body.get("related_player_id"),
            body.get("related_player_name"),
        ),
        non_striker_id=ball.non_striker_id,
        runs=ball.runs,
        batter_runs=ball.batter_runs,
        extras=BallExtrasView(
            wides=ball.wides,
            no_balls=ball.no_balls,
            byes=ball.byes,
            leg_byes=ball.leg_byes,
            total=ball.extras,
        ),
        legal=ball.legal,
        four=ball.four,
        six=ball.six,
        wicket=(
            WicketView(
                kind=ball.dismissal,
                batter_id=ball.out_batter_id,
                fielder_id=ball.fielder_id,
                bowler_credited=ball.bowler_wicket,
            )
            if ball.wicket
            else None
        ),
        outcome=ball.outcome,
        strip=ball.strip,
        milestone=ball.milestone,
    )


def _play(board: CricketBoard) -> CricketPlay:
    batters = [
        BatterView(
            id=figures.id,
            name=figures.name,
            runs=figures.runs,
            balls=figures.balls,
            fours=figures.fours,
            sixes=figures.sixes,
            on_strike=on_strike,
        )
        for figures, on_strike in ((board.striker, True), (board.non_striker, False))
        if figures is not None
    ]
    bowler = board.bowler
    current = board.current
    target = current.target if current is not None and current.target is not None else board.target
    chase = _chase(board, current) if board.result is None else None
    need, balls_left, required_rate = chase if chase is not None else (None, None, None)
    result = board.result
    return CricketPlay(
        format=board.format,
        innings=[_innings(innings) for innings in board.innings],
        batting_side=_side(board.batting_side),
        batters=batters,
        bowler=(
            None
            if bowler is None
            else BowlerView(
                id=bowler.id,
                name=bowler.name,
                overs=bowler.overs,
                maidens=bowler.maidens,
                runs=bowler.runs,
                wickets=bowler.wickets,
            )
        ),
        last_six=list(board.last_six),
        target=target,
        need=need,
        balls_left=balls_left,
        required_rate=required_rate,
        stumps_day=board.stumps_day,
        result=(
            None
            if result is None
            else ResultView(
                kind=result.kind,
                winner_team_id=result.winner_team_id,
                side=_side(result.side),
                text=result.text,
            )
        ),
    )


def _chase(board: CricketBoard, current: InningsTotal | None) -> tuple[int, int | None, float | None] | None:
    """(runs needed, balls left, runs per over required) while the current innings chases.

    Balls left need an overs limit: the super over's one over, else the revised target's overs,
    else the match's scheduled overs. A Test chase has none, so only the runs are known.
    """
    if current is None or current.target is None:
        return None
    need = max(current.target - current.runs, 0)
    overs = board.target_overs if board.target_overs is not None else board.scheduled_overs
    if current.super_over:
        limit = SUPER_OVER_BALLS
    elif overs is not None:
        limit = overs * BALLS_PER_OVER
    else:
        return need, None, None
    balls_left = max(limit - current.legal_balls, 0)
    required_rate = round(need * BALLS_PER_OVER / balls_left, 2) if balls_left else None
    return need, balls_left, required_rate


def _innings(innings: InningsTotal) -> InningsView:
    """The view's fields are the board's, by name (`overs` and `extras.total` are its properties)."""
    return InningsView.model_validate(innings, from_attributes=True)


def _side(side: Literal["home", "away"] | None) -> Side | None:
    return None if side is None else Side(side)
