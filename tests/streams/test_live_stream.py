"""`GET /v1/stream?matches=live`: every live match on one stream, joining at kick-off, leaving at the end."""

from __future__ import annotations

import httpx
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.outbox.writer import MatchWriter
from tests.streams.clients import sse


async def test_every_live_match_multiplexed(api_url: str, engine: AsyncEngine) -> None:
    first = await MatchWriter.create(engine, 1)
    second = await MatchWriter.create(engine, 2)
    later = await MatchWriter.create(engine, 3, state="scheduled")
    await first.change()
    await second.change()
    async with sse(api_url, "/v1/stream?matches=live") as stream:
        now = [await stream.next(), await stream.next()]
        assert sorted(event.body["fixture_id"] for event in now) == [1, 2]
        assert all(event.id is None and event.body["previous"] is None for event in now)

        await later.change()  # a scheduled match's log moves: not live, not sent
        await later.change(state="live_first_half")  # kick-off: it joins
        kicked_off = await stream.next()
        assert (kicked_off.body["fixture_id"], kicked_off.body["match"]["state"]) == (3, "live_first_half")

        await second.change(state="finished")  # the end is sent, then nothing more of it
        ended = await stream.next()
        assert (ended.body["fixture_id"], ended.body["match"]["state"]) == (2, "finished")
        await second.change()
        await first.change(goal="home")
        goal = await stream.next()
    assert (goal.body["fixture_id"], goal.body["version"]) == (1, 2)
    assert [entry["seq"] for entry in goal.body["entries"]] == [2]


async def test_only_live_is_a_known_filter(api_url: str) -> None:
    async with httpx.AsyncClient(base_url=api_url) as client:
        response = await client.get("/v1/stream?matches=all")
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "validation_error"
