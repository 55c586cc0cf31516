"""A desk-scored cricket match through the real command road stores a provider's cricket board.

Desks send HTTP; the match workflow decides each ball and commits it to Postgres. The stored
scoreboard must read like a provider cricket match's: the cricket states, each side's latest
innings as the score, and the whole `CricketBoard` under `cricket` in the body; the workflow's
progress carries the board's Live Activity line. Squads: home 101-111 start, away 201-211.
"""

from __future__ import annotations

import json
from typing import Any

from temporalio.client import Client

from domain.cricket.board import BatterFigures, BowlerFigures, CricketBoard, CricketResult
from domain.cricket.live import line_of
from domain.progress import MatchProgress
from tests.commands.harness import Road


class Scorer:
    """One desk scoring one fixture: every command must be accepted, each seeing the last seq."""

    def __init__(self, road: Road, token: str, fixture_id: int) -> None:
        self.road, self.token, self.fixture_id = road, token, fixture_id
        self.seq = 0

    async def do(self, code: str, body: dict[str, Any] | None = None) -> int:
        response = await self.road.send(self.token, self.fixture_id, code, body or {}, saw=self.seq)
        assert response.status_code == 200, response.text
        assert response.json()["outcome"] == "accepted", response.json()
        self.seq = response.json()["seq"]
        return self.seq

    async def stored(self) -> tuple[tuple[str, int, int, int], CricketBoard]:
        """The scoreboard row's (state, home, away, version) and its body's cricket board."""
        (row,) = await self.road.rows(
            "SELECT state, home_score, away_score, version, body FROM scoreboard WHERE fixture_id = $1",
            self.fixture_id,
        )
        body = json.loads(row["body"]) if isinstance(row["body"], str) else row["body"]
        columns = (row["state"], row["home_score"], row["away_score"], row["version"])
        return columns, CricketBoard.model_validate(body["cricket"])


async def test_a_desk_innings_and_chase_are_stored_as_a_providers_cricket_board(
    road: Road, temporal_client: Client
) -> None:
    fixture_id = await road.fixture(sport="cricket")
    desk = Scorer(road, await road.desk(fixture_id), fixture_id)

    await desk.do(
        "cricket.innings_start",
        {"batting": "home", "striker_id": 101, "non_striker_id": 102, "bowler_id": 211},
    )
    await desk.do("cricket.ball", {"runs": 1})
    await desk.do("cricket.ball", {"runs": 4, "boundary": "four"})
    await desk.do("cricket.ball", {"extra": {"kind": "wide", "runs": 1}})
    await desk.do("cricket.ball", {"wicket": {"kind": "caught", "fielder_id": 205, "new_batter_id": 103}})

    columns, board = await desk.stored()
    assert columns == ("innings_1", 7, 0, 5)
    (first,) = board.innings
    assert (first.scoreboard, first.side, first.team_id, first.runs, first.wickets, first.overs) == (
        "S1",
        "home",
        None,
        7,
        1,
        "0.3",
    )
    assert first.extras.wides == 2
    assert (board.batting_side, board.scheduled_overs, board.target, board.result) == (
        "home",
        None,
        None,
        None,
    )
    assert board.striker == BatterFigures(id=103)  # 101, caught, back on strike after the wide's run
    assert board.non_striker == BatterFigures(id=102, runs=4, balls=1, fours=1)
    assert board.bowler == BowlerFigures(id=211, legal_balls=3, runs=7, wickets=1)
    assert board.last_six == ("1", "4", "2wd", "W")

    progress = await temporal_client.get_workflow_handle(f"match-{fixture_id}").query(
        "progress", result_type=MatchProgress
    )
    assert (progress.state, progress.home, progress.away) == ("innings_1", 7, 0)
    assert progress.cricket == line_of(board)

    undone = await desk.do("match.undo", {"target_seq": desk.seq})
    columns, board = await desk.stored()
    assert columns == ("innings_1", 7, 0, undone)
    assert (board.striker, board.bowler) == (
        BatterFigures(id=101, runs=1, balls=1),
        BowlerFigures(id=211, legal_balls=2, runs=7),
    )
    assert board.last_six == ("1", "4", "2wd")

    await desk.do("cricket.innings_end")
    columns, board = await desk.stored()
    assert columns[:3] == ("innings_break", 7, 0)
    assert (board.batting_side, board.striker) == ("home", BatterFigures(id=101, runs=1, balls=1))

    await desk.do(
        "cricket.innings_start",
        {"batting": "away", "striker_id": 201, "non_striker_id": 202, "bowler_id": 101},
    )
    await desk.do("cricket.ball", {"runs": 6, "boundary": "six"})
    columns, board = await desk.stored()
    assert columns[:3] == ("innings_2", 7, 6)
    assert [(each.side, each.runs, each.target) for each in board.innings] == [
        ("home", 7, None),
        ("away", 6, 8),
    ]
    assert (board.batting_side, board.target, board.striker) == (
        "away",
        8,
        BatterFigures(id=201, runs=6, balls=1, sixes=1),
    )
    fan = (await road.http.get(f"/v1/matches/{fixture_id}")).json()
    assert (fan["state"], fan["score"]) == ("innings_2", {"home": 7, "away": 6})

    await desk.do("cricket.ball", {"runs": 2})
    await desk.do("cricket.innings_end")
    columns, board = await desk.stored()
    assert columns[:3] == ("finished", 7, 8)
    assert board.result == CricketResult(kind="win", side="away")
