"""Cricket in the partner feeds: the match document carries the match view's board and the balls,
served to a partner granted the competition (issue #12, "Read API and streams")."""

from __future__ import annotations

import json
from datetime import date

import httpx
import redis.asyncio as aioredis
from sqlalchemy.ext.asyncio import AsyncEngine

from scoreline.feeds.build import build_document
from scoreline.feeds.keys import FixturesDoc, MatchDoc
from scoreline.feeds.partners import create_partner
from scoreline.feeds.published import Published
from scoreline.feeds.store import store_if_newer
from scoreline.readmodel.queries import load_events, load_match
from tests.feeds.changes import MATCH
from tests.readmodel.cricket_rows import CRICKET, LIVE_BOARD, T20_WORLD_CUP, ball_item, the_chase
from tests.readmodel.rows import NO_CRICKET, MatchLog


async def _build(engine: AsyncEngine, doc: MatchDoc | FixturesDoc) -> tuple[Published, bool]:
    result = await build_document(engine, doc)
    assert result is not None
    return result


async def test_match_document_carries_the_board_and_the_balls(engine: AsyncEngine) -> None:
    """The scoreboard has the match view's cricket fields; events are the balls with their deliveries."""
    await the_chase(engine)

    published, _ = await _build(engine, MatchDoc(CRICKET))
    body = json.loads(published.body)
    async with engine.connect() as conn:
        view = await load_match(conn, CRICKET)
        page = await load_events(conn, CRICKET)

    assert view is not None
    board = body["scoreboard"]
    assert (board["state"], board["score"]) == ("innings_2", {"home": 145, "away": 180})
    assert {key: board[key] for key in NO_CRICKET} == {
        key: value for key, value in view.model_dump(mode="json").items() if key in NO_CRICKET
    }
    assert board["innings"][-1]["overs"] == "16.4"
    assert (board["need"], board["required_rate"]) == (36, 10.8)
    assert body["events"] == page.model_dump(mode="json")["events"]
    assert [(e["provider_event_id"], e["ball"]["notation"], e["amended"]) for e in body["events"]] == [
        (9_667_100, "19.6", False),
        (9_667_298, "16.2", False),
        (9_667_299, "16.2", True),
        (9_667_300, "16.3", False),
        (9_667_301, "16.4", False),
    ]
    assert body["events"][-1]["ball"]["wicket"]["kind"] == "caught"


async def test_a_new_ball_is_a_new_version_and_a_partner_gets_it(
    engine: AsyncEngine, redis: aioredis.Redis, api: httpx.AsyncClient
) -> None:
    """The next ball moves the board: a new version, served with the new over and the new ball."""
    log = await the_chase(engine)
    _, key = await create_partner(engine, "cricket-partner", [T20_WORLD_CUP["id"]])
    first, _ = await _build(engine, MatchDoc(CRICKET))
    unchanged, created = await _build(engine, MatchDoc(CRICKET))
    assert (created, unchanged.version) == (False, first.version)

    await log.balls(ball_item(9_667_302, 16, 5, score_id=7, outcome="Six", runs=6, batter_runs=6, six=True))
    chase = LIVE_BOARD.innings[-1].model_copy(update={"runs": 151, "legal_balls": 101})
    await log.cricket_board(
        "innings_2",
        LIVE_BOARD.model_copy(
            update={"innings": (LIVE_BOARD.innings[0], chase), "last_six": ("4", "W", "0", "2wd", "6", "6")}
        ),
    )
    second, created = await _build(engine, MatchDoc(CRICKET))
    await store_if_newer(redis, second)
    served = await api.get(f"/v1/feeds/match/{CRICKET}", headers={"X-Api-Key": key})

    assert (created, second.version) == (True, first.version + 1)
    assert served.status_code == 200, served.text
    board = served.json()["scoreboard"]
    assert (board["score"], board["innings"][-1]["overs"], board["last_six"][-1]) == (
        {"home": 151, "away": 180},
        "16.5",
        "6",
    )
    assert (board["need"], board["balls_left"]) == (30, 19)
    assert served.json()["events"][-1]["ball"]["six"] is True


async def test_day_list_shows_cricket_runs_and_football_documents_have_no_cricket(
    engine: AsyncEngine,
) -> None:
    """The day list's score is each side's runs; a football document's cricket fields are null."""
    await the_chase(engine)
    football = await MatchLog.create(engine, MATCH, state="live_first_half")
    await football.event(500001, "goal", 12)
    await football.board("live_first_half", 1, 0, minute=12)

    day, _ = await _build(engine, FixturesDoc(date(2026, 3, 14)))
    match, _ = await _build(engine, MatchDoc(MATCH))

    assert [(e["fixture"]["id"], e["score"]) for e in json.loads(day.body)["fixtures"]] == [
        (MATCH, {"home": 1, "away": 0}),
        (CRICKET, {"home": 145, "away": 180}),
    ]
    body = json.loads(match.body)
    assert {key: body["scoreboard"][key] for key in NO_CRICKET} == NO_CRICKET
    assert [event["ball"] for event in body["events"]] == [None]
