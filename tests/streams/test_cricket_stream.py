"""Cricket on the live streams: SSE and WebSocket values carry the board, and the `scores`
channel speaks when a ball moves the innings, not only the runs (issue #12, "Read API and streams")."""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine

from domain.cricket.board import CricketBoard
from tests.feeds.changes import announce
from tests.readmodel.cricket_rows import CRICKET, DOT, LIVE_BOARD, CricketLog, ball_item, the_chase
from tests.streams.clients import sse, websocket

CHANNEL = f"match:{CRICKET}"


def _after(board: CricketBoard, runs: int, legal_balls: int, strip: str) -> CricketBoard:
    """The board after one more ball of the chase."""
    first, chase = board.innings
    return board.model_copy(
        update={
            "innings": (first, chase.model_copy(update={"runs": runs, "legal_balls": legal_balls})),
            "last_six": (*board.last_six[1:], strip),
        }
    )


async def _bowl(log: CricketLog, ball_id: int, board: CricketBoard, **detail: Any) -> None:
    """One committed ball as the ingest leaves it: the ball, the board, the outbox row."""
    await log.balls(ball_item(ball_id, 16, 5, **detail))
    await log.cricket_board("innings_2", board)
    await announce(log.engine, log.fixture_id)


async def test_sse_values_carry_the_board_and_the_ball_entries(api_url: str, engine: AsyncEngine) -> None:
    """The first value is the cricket match view; the next ball comes with its log entry."""
    log = await the_chase(engine)
    async with sse(api_url, f"/v1/matches/{CRICKET}/stream") as stream:
        first = (await stream.next()).body
        await _bowl(log, 9_667_302, _after(LIVE_BOARD, 149, 101, "4"), runs=4, batter_runs=4, four=True)
        (change,) = await stream.until_version(log.seq)

    assert (first["version"], first["match"]["innings"][-1]["overs"]) == (6, "16.4")
    assert first["match"]["batters"][0]["on_strike"] is True
    assert first["match"]["need"] == 36
    value = change.body
    assert (value["previous"], value["version"]) == (6, 7)
    assert [entry["kind"] for entry in value["entries"]] == ["event"]
    match = value["match"]
    assert (match["score"], match["innings"][-1]["overs"], match["last_six"][-1]) == (
        {"home": 149, "away": 180},
        "16.5",
        "4",
    )
    assert (match["need"], match["balls_left"], match["required_rate"]) == (32, 19, 10.11)


async def test_the_live_stream_lists_a_match_in_its_innings(api_url: str, engine: AsyncEngine) -> None:
    """`/v1/stream?matches=live` starts with a cricket match in its second innings."""
    await the_chase(engine)
    async with sse(api_url, "/v1/stream?matches=live") as stream:
        value = (await stream.next()).body

    assert (value["fixture_id"], value["match"]["state"], value["match"]["format"]) == (
        CRICKET,
        "innings_2",
        "T20I",
    )


async def test_websocket_value_and_scores_follow_each_ball(api_url: str, engine: AsyncEngine) -> None:
    """A dot ball leaves the runs alone but moves the over: `scores` says so, with the innings."""
    log = await the_chase(engine)
    async with websocket(api_url) as socket:
        await socket.subscribe(CHANNEL)
        value = await socket.next()
        await socket.subscribe("scores")
        now = await socket.next()

        dot = _after(LIVE_BOARD, 145, 101, "0")
        await _bowl(log, 9_667_302, dot, score_id=DOT.provider_type_id, outcome="No Run")
        moved = [await socket.next(), await socket.next()]
        await log.state_entry("innings_2")
        await log.cricket_board("innings_2", dot)
        await announce(engine, CRICKET)
        same = await socket.next()
        await _bowl(log, 9_667_303, _after(dot, 146, 102, "1"), runs=1, batter_runs=1)
        single = [await socket.next(), await socket.next()]

    assert (value["type"], value["match"]["bowler"]["overs"]) == ("value", "3.4")
    assert now["score"] == {"home": 145, "away": 180}
    assert now["current_innings"]["overs"] == "16.4"
    by_type = {message["type"]: message for message in moved}
    assert by_type["value"]["match"]["innings"][-1]["overs"] == "16.5"
    assert by_type["score"]["score"] == {"home": 145, "away": 180}
    assert (by_type["score"]["current_innings"]["overs"], by_type["score"]["version"]) == ("16.5", 7)
    # The board did not move: a value for the new version, and no score message.
    assert (same["type"], same["version"]) == ("value", 8)
    assert sorted(message["type"] for message in single) == ["score", "value"]
    score = next(message for message in single if message["type"] == "score")
    assert (score["score"], score["current_innings"]["overs"], score["version"]) == (
        {"home": 146, "away": 180},
        "17.0",
        9,
    )
