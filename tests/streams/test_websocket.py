"""`/v1/ws` over a real WebSocket: channels, only changed values, no gap, and bad messages survived."""

from __future__ import annotations

from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncEngine

from api.live.runtime import LiveRuntime
from tests.outbox.writer import MatchWriter
from tests.streams.clients import websocket

MATCH = 81000001
OTHER = 81000002


async def test_a_match_channel_gets_its_value_then_every_version_with_no_gap(
    api_url: str, engine: AsyncEngine
) -> None:
    match = await MatchWriter.create(engine, MATCH)
    await match.change()
    channel = f"match:{MATCH}"
    async with websocket(api_url) as socket:
        assert await socket.subscribe(channel) == [{"type": "subscribed", "channels": [channel]}]
        first = await socket.next()
        assert (first["type"], first["channel"], first["version"], first["previous"]) == (
            "value",
            channel,
            1,
            None,
        )

        for number in range(10):
            await match.change(entries=1 + number % 2)
        values = await socket.values_until(channel, match.version)

    previous, seqs = 1, []
    for value in values:
        assert value["previous"] == previous
        assert value["version"] > previous
        seqs += [entry["seq"] for entry in value["entries"]]
        previous = value["version"]
    assert seqs == list(range(2, match.version + 1))


async def test_scores_and_status_send_only_what_changed(api_url: str, engine: AsyncEngine) -> None:
    match = await MatchWriter.create(engine, MATCH)
    await match.change()
    async with websocket(api_url) as socket:
        await socket.subscribe("scores")
        now = await socket.next()
        assert now == {
            "type": "score",
            "channel": "scores",
            "fixture_id": MATCH,
            "version": 1,
            "score": {"home": 0, "away": 0},
        }
        await socket.subscribe("status")
        assert (await socket.next())["state"] == "live_first_half"

        await match.change(entries=3)  # no goal, same state: nothing to send
        await match.change(goal="away")
        goal = await socket.next()
        assert (goal["type"], goal["version"], goal["score"]) == ("score", 5, {"home": 0, "away": 1})

        await match.change(state="half_time")
        status = await socket.next()
        assert (status["type"], status["version"], status["state"]) == ("status", 6, "half_time")


async def test_no_work_for_a_match_nobody_follows(api_url: str, app: FastAPI, engine: AsyncEngine) -> None:
    """A change of a match no connection follows is never loaded; the followed one is, once."""
    followed = await MatchWriter.create(engine, MATCH)
    ignored = await MatchWriter.create(engine, OTHER)
    live: LiveRuntime = app.state.live
    async with websocket(api_url) as socket:
        await socket.subscribe(f"match:{MATCH}")
        await socket.next()
        loads = live.hub.loads
        await ignored.change()
        await followed.change()
        value = await socket.next()
    assert (value["channel"], value["version"]) == (f"match:{MATCH}", 1)
    assert live.hub.loads == loads + 1


async def test_unsubscribe_stops_a_channel(api_url: str, engine: AsyncEngine) -> None:
    first = await MatchWriter.create(engine, MATCH)
    second = await MatchWriter.create(engine, OTHER)
    async with websocket(api_url) as socket:
        await socket.subscribe(f"match:{MATCH}")
        await socket.next()
        await socket.send({"op": "unsubscribe", "channels": [f"match:{MATCH}"]})
        assert await socket.next() == {"type": "unsubscribed", "channels": [f"match:{MATCH}"]}
        await socket.subscribe(f"match:{OTHER}")
        await socket.next()
        await first.change()
        await second.change()
        value = await socket.next()
    assert (value["channel"], value["version"]) == (f"match:{OTHER}", 1)


async def test_bad_messages_get_an_error_and_the_connection_goes_on(
    api_url: str, engine: AsyncEngine
) -> None:
    await MatchWriter.create(engine, MATCH)
    bad: list[str | bytes] = [
        "not json",
        '{"op": "dance", "channels": ["scores"]}',
        '{"op": "subscribe", "channels": []}',
        '{"op": "subscribe", "channels": "scores"}',
        '{"op": "subscribe", "channels": ["weather"]}',
        '{"op": "subscribe", "channels": ["match:abc"]}',
        b"\x00\x01",
        "[1, 2]",
    ]
    async with websocket(api_url) as socket:
        for message in bad:
            await socket.send(message)
            answer = await socket.next()
            assert answer["type"] == "error", (message, answer)
            assert answer["code"] in {"bad_message", "unknown_channel"}
            assert answer["message"]
        await socket.send({"op": "subscribe", "channels": ["match:424242"]})
        missing = await socket.next()
        assert (missing["type"], missing["code"]) == ("error", "match_not_found")
        assert await socket.next() == {"type": "subscribed", "channels": []}
        assert await socket.subscribe(f"match:{MATCH}") == [
            {"type": "subscribed", "channels": [f"match:{MATCH}"]}
        ]
        assert (await socket.next())["version"] == 0
