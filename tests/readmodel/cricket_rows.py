"""A cricket match's rows as the ingest leaves them (the storage contract of issue #12).

The fixture row says `sport = 'cricket'`; the scoreboard's body carries the `CricketBoard` under
`cricket` and the columns carry each side's runs in its latest innings; each ball is a
`match_event` of stream `balls` (provider id and sort order = the ball id, no minute) whose body
is the ball's `Item`, and an edited ball gets an `amendment` entry. Everything is built with the
domain models, so a change to them shows up here.

The scenario: a T20, India (home) chasing Australia's 180/6, 145/4 after 16.4 overs.
"""

from __future__ import annotations

from typing import Any, Literal

from sqlalchemy import func
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncEngine

from domain.cricket.board import (
    BallDetail,
    BatterFigures,
    BowlerFigures,
    CricketBoard,
    CricketResult,
    Dismissal,
    Extras,
    InningsTotal,
    cricket_fixture_id,
)
from domain.snapshot import Item, ItemType, Side, Stream
from scoreline.db.tables import fixture, match_event, scoreboard
from tests.readmodel.rows import KICKOFF, MatchLog

CRICKET = cricket_fixture_id(990_001)
INDIA = {"id": 10, "name": "India", "short_code": "IND", "image": "https://img/10.png"}
AUSTRALIA = {"id": 11, "name": "Australia", "short_code": "AUS", "image": "https://img/11.png"}
T20_WORLD_CUP = {"id": 3, "name": "T20 World Cup"}
KOHLI, PANDYA, SHARMA = (101, "Virat Kohli"), (102, "Hardik Pandya"), (103, "Rohit Sharma")
STARC, CUMMINS = (201, "Mitchell Starc"), (202, "Pat Cummins")

FIRST = InningsTotal(
    scoreboard="S1",
    number=1,
    team_id=11,
    side="away",
    runs=180,
    wickets=6,
    legal_balls=120,
    extras=Extras(wides=5, no_balls=1, byes=2, leg_byes=4),
)
CHASE = InningsTotal(
    scoreboard="S2",
    number=2,
    team_id=10,
    side="home",
    runs=145,
    wickets=4,
    legal_balls=100,
    extras=Extras(wides=3, leg_byes=1, penalties=5),
    target=181,
)
LIVE_BOARD = CricketBoard(
    format="T20I",
    scheduled_overs=20,
    innings=(FIRST, CHASE),
    batting_side="home",
    striker=BatterFigures(id=KOHLI[0], name=KOHLI[1], runs=62, balls=41, fours=5, sixes=2),
    non_striker=BatterFigures(id=PANDYA[0], name=PANDYA[1], runs=18, balls=11, fours=1, sixes=1),
    bowler=BowlerFigures(id=STARC[0], name=STARC[1], legal_balls=22, maidens=0, runs=28, wickets=1),
    last_six=("1", "4", "W", "0", "2wd", "6"),
    target=181,
    toss_won_team_id=10,
    elected="bowling",
)
WON = LIVE_BOARD.model_copy(
    update={
        "innings": (FIRST, CHASE.model_copy(update={"runs": 184, "legal_balls": 117})),
        "result": CricketResult(kind="win", winner_team_id=10, side="home", text="India won by 6 wickets"),
    }
)


def ball_item(
    ball_id: int,
    over: int,
    ball: int,
    *,
    scoreboard: Literal["S1", "S2"] = "S2",
    batter: tuple[int, str] = KOHLI,
    bowler: tuple[int, str] = STARC,
    **detail: Any,
) -> Item:
    """A ball as the normaliser makes it: striker = player, bowler = related player."""
    wicket = bool(detail.get("wicket"))
    delivery = BallDetail(
        scoreboard=scoreboard,
        innings=1 if scoreboard == "S1" else 2,
        over=over,
        ball=ball,
        batter_id=batter[0],
        non_striker_id=PANDYA[0],
        bowler_id=bowler[0],
        score_id=detail.pop("score_id", 1),
        **detail,
    )
    return Item(
        stream=Stream.BALLS,
        provider_id=ball_id,
        type=ItemType.WICKET if wicket else ItemType.BALL,
        provider_type_id=delivery.score_id,
        side=Side.AWAY if scoreboard == "S1" else Side.HOME,
        player_id=batter[0],
        player_name=batter[1],
        related_player_id=bowler[0],
        related_player_name=bowler[1],
        result=delivery.outcome,
        sort_order=ball_id,
        ball=delivery,
    )


class CricketLog(MatchLog):
    """A cricket fixture's rows; each write is its own committed transaction, like one ingest."""

    @classmethod
    async def create_cricket(cls, engine: AsyncEngine, fixture_id: int = CRICKET) -> CricketLog:
        async with engine.begin() as conn:
            await conn.execute(
                fixture.insert().values(
                    id=fixture_id,
                    sport="cricket",
                    league_id=3,
                    season_id=1689,
                    name="India vs Australia",
                    starting_at=KICKOFF,
                    home_team=INDIA,
                    away_team=AUSTRALIA,
                    competition=T20_WORLD_CUP,
                    state="scheduled",
                    provider_state_id=1,
                )
            )
        return cls(engine, fixture_id)

    async def balls(self, *items: Item) -> list[int]:
        """Insert balls (each with its `event` entry) in one transaction; their match_event ids."""
        ids = []
        async with self.engine.begin() as conn:
            for item in items:
                event_id: int = (
                    await conn.execute(
                        match_event.insert()
                        .values(
                            fixture_id=self.fixture_id,
                            stream=item.stream.value,
                            provider_event_id=item.provider_id,
                            type=item.type.value,
                            provider_type_id=item.provider_type_id,
                            minute=None,
                            extra_minute=None,
                            sort_order=item.sort_order,
                            side=None if item.side is None else item.side.value,
                            body=item.model_dump(mode="json"),
                            body_hash=f"hash-{item.provider_id}",
                            source="live",
                        )
                        .returning(match_event.c.id)
                    )
                ).scalar_one()
                self.first_seq[event_id] = await self._entry(conn, "event", event_id)
                ids.append(event_id)
        return ids

    async def edit_ball(self, event_id: int, item: Item) -> None:
        """The provider edited a ball in place: new body, an `amendment` entry targeting its first."""
        async with self.engine.begin() as conn:
            await conn.execute(
                match_event.update()
                .where(match_event.c.id == event_id)
                .values(body=item.model_dump(mode="json"), type=item.type.value)
            )
            await self._entry(conn, "amendment", event_id, target_seq=self.first_seq[event_id])

    async def cricket_board(self, state: str, board: CricketBoard | dict[str, Any]) -> None:
        """Upsert the scoreboard at the current seq: the board in the body, runs in the columns."""
        parsed = board if isinstance(board, CricketBoard) else None
        values = {
            "fixture_id": self.fixture_id,
            "version": self.seq,
            "state": state,
            "home_score": parsed.runs_of("home") if parsed else 0,
            "away_score": parsed.runs_of("away") if parsed else 0,
            "body": {
                "cricket": parsed.model_dump(mode="json") if parsed else board,
                "minute": None,
                "periods": {},
            },
        }
        statement = insert(scoreboard).values(**values)
        async with self.engine.begin() as conn:
            await conn.execute(
                statement.on_conflict_do_update(
                    index_elements=[scoreboard.c.fixture_id],
                    set_={**{k: v for k, v in values.items() if k != "fixture_id"}, "updated_at": func.now()},
                )
            )
            await conn.execute(
                fixture.update()
                .where(fixture.c.id == self.fixture_id)
                .values(state=state, updated_at=func.now())
            )


DOT = ball_item(9_667_300, 16, 3, score_id=2, outcome="No Run")
WICKET = ball_item(
    9_667_301,
    16,
    4,
    batter=SHARMA,
    score_id=54,
    outcome="Catch Out",
    wicket=True,
    dismissal=Dismissal.CAUGHT,
    out_batter_id=SHARMA[0],
    fielder_id=CUMMINS[0],
    bowler_wicket=True,
)
SINGLE = ball_item(9_667_299, 16, 2, score_id=3, outcome="1 Run", runs=1, batter_runs=1)
FOUR = SINGLE.model_copy(
    update={
        "result": "Four Run",
        "ball": SINGLE.ball.model_copy(
            update={"score_id": 5, "outcome": "Four Run", "runs": 4, "batter_runs": 4, "four": True}
        ),
    }
)
WIDE = ball_item(9_667_298, 16, 2, score_id=30, outcome="1 Wide", runs=1, wides=1, legal=False)
LAST_OF_FIRST = ball_item(9_667_100, 19, 6, scoreboard="S1", batter=CUMMINS, bowler=(301, "Bumrah"))


async def the_chase(engine: AsyncEngine) -> CricketLog:
    """The chase at 16.4 overs (version 6): a first-innings ball logged late, 16.2 edited from a
    single to a four, a wicket on 16.4."""
    log = await CricketLog.create_cricket(engine)
    single, *_ = await log.balls(SINGLE, WICKET, WIDE, DOT)
    await log.balls(LAST_OF_FIRST)
    await log.edit_ball(single, FOUR)
    await log.cricket_board("innings_2", LIVE_BOARD)
    return log
