"""Cricket through the read API: the board on the match view, balls as events, the cache, and
football left as it was (issue #12, "Read API and streams")."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
import redis.asyncio as aioredis
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncEngine
from structlog.testing import capture_logs

from scoreline.db.tables import match_event, scoreboard
from scoreline.readmodel.cache import read_events, read_match, refresh
from scoreline.readmodel.cricket import play_of
from scoreline.readmodel.queries import load_match
from tests.readmodel.cricket_rows import (
    CHASE,
    CRICKET,
    DOT,
    LIVE_BOARD,
    SINGLE,
    WICKET,
    WON,
    CricketLog,
    ball_item,
    the_chase,
)
from tests.readmodel.rows import NO_CRICKET, MatchLog

MATCH = f"/v1/matches/{CRICKET}"
EVENTS = f"{MATCH}/events"

FIRST_INNINGS = {
    "scoreboard": "S1",
    "number": 1,
    "side": "away",
    "team_id": 11,
    "runs": 180,
    "wickets": 6,
    "overs": "20.0",
    "extras": {"wides": 5, "no_balls": 1, "byes": 2, "leg_byes": 4, "penalties": 0, "total": 12},
    "target": None,
    "super_over": False,
}
CHASING = {
    "scoreboard": "S2",
    "number": 2,
    "side": "home",
    "team_id": 10,
    "runs": 145,
    "wickets": 4,
    "overs": "16.4",
    "extras": {"wides": 3, "no_balls": 0, "byes": 0, "leg_byes": 1, "penalties": 5, "total": 9},
    "target": 181,
    "super_over": False,
}


@pytest.fixture
async def chase(engine: AsyncEngine) -> CricketLog:
    return await the_chase(engine)


def _ball_ids(page: dict[str, Any]) -> list[int]:
    return [event["provider_event_id"] for event in page["events"]]


async def test_cricket_match_view_carries_the_board(api: httpx.AsyncClient, chase: CricketLog) -> None:
    """Innings, batters (striker first), bowler, last six and the chase; score = latest runs."""
    response = await api.get(MATCH)

    assert response.status_code == 200
    body = response.json()
    assert body["fixture"]["sport"] == "cricket"
    assert (body["state"], body["score"], body["minute"], body["version"]) == (
        "innings_2",
        {"home": 145, "away": 180},
        None,
        6,
    )
    assert body["format"] == "T20I"
    assert body["innings"] == [FIRST_INNINGS, CHASING]
    assert body["batting_side"] == "home"
    assert body["batters"] == [
        {
            "id": 101,
            "name": "Virat Kohli",
            "runs": 62,
            "balls": 41,
            "fours": 5,
            "sixes": 2,
            "on_strike": True,
        },
        {
            "id": 102,
            "name": "Hardik Pandya",
            "runs": 18,
            "balls": 11,
            "fours": 1,
            "sixes": 1,
            "on_strike": False,
        },
    ]
    assert body["bowler"] == {
        "id": 201,
        "name": "Mitchell Starc",
        "overs": "3.4",
        "maidens": 0,
        "runs": 28,
        "wickets": 1,
    }
    assert body["last_six"] == ["1", "4", "W", "0", "2wd", "6"]
    # 181 - 145 = 36 from the 20 balls left of 20 overs: 10.8 an over.
    assert (body["target"], body["need"], body["balls_left"], body["required_rate"]) == (181, 36, 20, 10.8)
    assert (body["stumps_day"], body["result"]) == (None, None)


async def test_a_decided_match_has_its_result_and_no_chase(api: httpx.AsyncClient, chase: CricketLog) -> None:
    """Once decided: `result` says who won and how; there is nothing left to chase."""
    await chase.state_entry("finished")
    await chase.cricket_board("finished", WON)

    body = (await api.get(MATCH)).json()
    listed = (await api.get("/v1/matches?state=finished")).json()["matches"]

    assert body["result"] == {
        "kind": "win",
        "winner_team_id": 10,
        "side": "home",
        "text": "India won by 6 wickets",
    }
    assert body["score"] == {"home": 184, "away": 180}
    assert (body["target"], body["need"], body["balls_left"], body["required_rate"]) == (
        181,
        None,
        None,
        None,
    )
    assert [match["result"] for match in listed] == [body["result"]]


async def test_a_test_match_chase_has_no_balls_left(api: httpx.AsyncClient, engine: AsyncEngine) -> None:
    """A Test has no overs limit: the runs needed are known, balls left and the rate are not;
    `stumps_day` says which day closed."""
    log = await CricketLog.create_cricket(engine)
    fourth = CHASE.model_copy(update={"scoreboard": "S4", "number": 4, "target": 240, "runs": 77})
    board = LIVE_BOARD.model_copy(
        update={
            "format": "Test",
            "scheduled_overs": None,
            "innings": (fourth,),
            "stumps_day": 4,
            "target": 240,
        }
    )
    await log.state_entry("stumps")
    await log.cricket_board("stumps", board)

    body = (await api.get(MATCH)).json()
    live = (await api.get("/v1/matches?state=live")).json()["matches"]

    assert (body["format"], body["stumps_day"]) == ("Test", 4)
    assert (body["target"], body["need"], body["balls_left"], body["required_rate"]) == (240, 163, None, None)
    assert [match["fixture"]["id"] for match in live] == [CRICKET]


async def test_cricket_states_are_live(api: httpx.AsyncClient, chase: CricketLog) -> None:
    """`?state=live` lists a match in its innings (and at a break between sessions)."""
    assert [m["fixture"]["id"] for m in (await api.get("/v1/matches?state=live")).json()["matches"]] == [
        CRICKET
    ]
    await chase.state_entry("tea")
    await chase.cricket_board("tea", LIVE_BOARD)
    assert [m["state"] for m in (await api.get("/v1/matches?state=live")).json()["matches"]] == ["tea"]


async def test_balls_are_events_in_bowling_order(api: httpx.AsyncClient, chase: CricketLog) -> None:
    """Balls list by ball id whatever order they were logged in, each with its delivery."""
    page = (await api.get(EVENTS)).json()

    assert _ball_ids(page) == [9_667_100, 9_667_298, 9_667_299, 9_667_300, 9_667_301]
    assert page["next_before"] is None
    wicket = page["events"][-1]
    assert {key: wicket[key] for key in ("stream", "type", "minute", "side", "amended", "retracted")} == {
        "stream": "balls",
        "type": "wicket",
        "minute": None,
        "side": "home",
        "amended": False,
        "retracted": False,
    }
    assert (wicket["player"], wicket["related_player"]) == (
        {"id": 103, "name": "Rohit Sharma"},
        {"id": 201, "name": "Mitchell Starc"},
    )
    assert wicket["ball"] == {
        "scoreboard": "S2",
        "innings": 2,
        "over": 16,
        "ball": 4,
        "notation": "16.4",
        "batter": {"id": 103, "name": "Rohit Sharma"},
        "bowler": {"id": 201, "name": "Mitchell Starc"},
        "non_striker_id": 102,
        "runs": 0,
        "batter_runs": 0,
        "extras": {"wides": 0, "no_balls": 0, "byes": 0, "leg_byes": 0, "total": 0},
        "legal": True,
        "four": False,
        "six": False,
        "wicket": {"kind": "caught", "batter_id": 103, "fielder_id": 202, "bowler_credited": True},
        "outcome": "Catch Out",
        "strip": "W",
        "milestone": None,
    }
    wide = page["events"][1]["ball"]
    assert (wide["notation"], wide["legal"], wide["extras"]["wides"], wide["strip"], wide["wicket"]) == (
        "16.2",
        False,
        1,
        "1wd",
        None,
    )


async def test_an_edited_ball_is_amended_and_shows_its_new_values(
    api: httpx.AsyncClient, chase: CricketLog
) -> None:
    """The provider edited 16.2 from a single to a four: flagged `amended`, its seq unchanged."""
    events = (await api.get(EVENTS)).json()["events"]

    edited = next(event for event in events if event["provider_event_id"] == 9_667_299)
    assert (edited["amended"], edited["seq"], edited["result"]) == (True, 1, "Four Run")
    assert (edited["ball"]["runs"], edited["ball"]["four"], edited["ball"]["strip"]) == (4, True, "4")
    assert [event["amended"] for event in events].count(True) == 1


async def test_balls_page_backwards_in_bowling_order(api: httpx.AsyncClient, chase: CricketLog) -> None:
    """`limit` and `before` walk the balls from the latest back to the first, no gap, no overlap."""
    pages = [(await api.get(f"{EVENTS}?limit=2")).json()]
    while pages[-1]["next_before"] is not None:
        pages.append((await api.get(f"{EVENTS}?limit=2&before={pages[-1]['next_before']}")).json())

    assert [_ball_ids(page) for page in pages] == [
        [9_667_300, 9_667_301],
        [9_667_298, 9_667_299],
        [9_667_100],
    ]
    assert [event["amended"] for event in pages[1]["events"]] == [False, True]


async def test_a_tests_two_thousand_balls_page_in_order(api: httpx.AsyncClient, engine: AsyncEngine) -> None:
    """A Test's 2,000+ balls, logged in a shuffled order, come back in bowling order 500 at a time."""
    log = await CricketLog.create_cricket(engine)
    ids = [9_000_000 + number for number in range(2_050)]
    balls = [ball_item(ball_id, number // 6, number % 6 + 1) for number, ball_id in enumerate(ids)]
    await log.balls(*balls[1::2], *balls[::2])

    seen: list[int] = []
    sizes = []
    query = "?limit=500"
    while True:
        page = (await api.get(EVENTS + query)).json()
        seen = _ball_ids(page) + seen
        sizes.append(len(page["events"]))
        if page["next_before"] is None:
            break
        query = f"?limit=500&before={page['next_before']}"

    assert seen == ids
    assert sizes == [500, 500, 500, 500, 50]
    assert page["events"][0]["ball"]["notation"] == "0.1"


async def test_a_damaged_board_or_ball_does_not_break_the_read(
    api: httpx.AsyncClient, engine: AsyncEngine
) -> None:
    """A stored board or ball the domain models refuse is logged and left out; the rest is served."""
    log = await CricketLog.create_cricket(engine)
    _, damaged, _ = await log.balls(SINGLE, DOT, WICKET)
    await log.cricket_board("innings_2", {"innings": [{"scoreboard": "S9"}]})
    async with engine.begin() as conn:
        await conn.execute(update(scoreboard).values(home_score=12))
        await conn.execute(
            update(match_event)
            .where(match_event.c.id == damaged)
            .values(body=match_event.c.body + {"ball": {"over": "sixteen"}})
        )

    with capture_logs() as logs:
        view = (await api.get(MATCH)).json()
        events = (await api.get(EVENTS)).json()["events"]

    assert {key: view[key] for key in NO_CRICKET} == NO_CRICKET
    assert (view["state"], view["score"]) == ("innings_2", {"home": 12, "away": 0})
    assert [(event["provider_event_id"], event["ball"] is None) for event in events] == [
        (9_667_299, False),
        (9_667_300, True),
        (9_667_301, False),
    ]
    assert events[1]["player"] == {"id": 101, "name": "Virat Kohli"}
    problems = {line["event"] for line in logs if line["log_level"] == "warning"}
    assert {"readmodel.bad_cricket_board", "readmodel.bad_ball"} <= problems


async def test_the_cache_holds_the_cricket_fields(
    api: httpx.AsyncClient, engine: AsyncEngine, redis: aioredis.Redis, chase: CricketLog
) -> None:
    """The Redis copy is the same view, and the API serves it as it is (Postgres changed behind it)."""
    refreshed = await refresh(engine, redis, CRICKET)
    cached = await read_match(redis, CRICKET)
    cached_events = await read_events(redis, CRICKET)
    await api.get(MATCH)  # a process reads a match it never heard of from Postgres
    async with engine.begin() as conn:
        await conn.execute(
            update(scoreboard).values(
                body=scoreboard.c.body
                + {"cricket": LIVE_BOARD.model_copy(update={"last_six": ()}).model_dump(mode="json")}
            )
        )
        fresh = await load_match(conn, CRICKET)

    served = (await api.get(MATCH)).json()
    served_events = (await api.get(EVENTS)).json()

    assert refreshed is not None and cached == refreshed
    assert cached.innings is not None and cached.innings[-1].overs == "16.4"
    assert fresh is not None and fresh.last_six == []
    assert served["last_six"] == ["1", "4", "W", "0", "2wd", "6"]
    assert served["bowler"]["overs"] == "3.4"
    assert cached_events is not None
    assert served_events == cached_events.page.model_dump(mode="json")
    assert served_events["events"][-1]["ball"]["wicket"]["kind"] == "caught"


async def test_a_football_match_view_has_no_cricket(api: httpx.AsyncClient, match: MatchLog) -> None:
    """Football is as it was: every cricket field present and null, events without a ball."""
    await match.event(1, "goal", 23, player=(7, "Saka"))
    await match.board("live_first_half", 1, 0, minute=23)

    view = (await api.get("/v1/matches/81000001")).json()
    listed = (await api.get("/v1/matches")).json()["matches"]
    events = (await api.get("/v1/matches/81000001/events")).json()["events"]

    assert {key: view[key] for key in NO_CRICKET} == NO_CRICKET
    assert {key: listed[0][key] for key in NO_CRICKET} == NO_CRICKET
    assert (view["score"], view["minute"]) == ({"home": 1, "away": 0}, 23)
    assert [event["ball"] for event in events] == [None]


@pytest.mark.parametrize(
    ("changes", "chase"),
    [
        # Revised to 16 overs with 100 balls gone: none left, so no rate (the result is due).
        ({"target_overs": 16, "revised": True}, (36, 0, None)),
        ({"target_overs": 18, "revised": True}, (36, 8, 27.0)),
    ],
)
def test_a_revised_target_counts_its_own_overs(
    changes: dict[str, Any], chase: tuple[int, int, float | None]
) -> None:
    """The chase counts balls against the revised target's overs, not the scheduled ones."""
    play = play_of(CRICKET, {"cricket": LIVE_BOARD.model_copy(update=changes).model_dump(mode="json")})

    assert (play.need, play.balls_left, play.required_rate) == chase


def test_a_super_over_chase_has_one_over() -> None:
    """A super over is six balls whatever the match's limit: 12 from 4 is 18 an over."""
    first, _ = LIVE_BOARD.innings
    super_over = CHASE.model_copy(
        update={
            "scoreboard": "S4",
            "number": 4,
            "runs": 3,
            "legal_balls": 2,
            "target": 15,
            "super_over": True,
        }
    )
    board = LIVE_BOARD.model_copy(update={"innings": (first, super_over), "super_over": True})

    play = play_of(CRICKET, {"cricket": board.model_dump(mode="json")})

    assert (play.need, play.balls_left, play.required_rate) == (12, 4, 18.0)
    assert play.innings is not None and play.innings[-1].super_over is True
