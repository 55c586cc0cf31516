"""Stream limits over real connections: connection caps per client and in total, ids past bigint,
and a junk `Last-Event-ID`."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy.ext.asyncio import AsyncEngine
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from api.app import create_app
from api.live.runtime import LiveRuntime
from scoreline.settings import Settings
from tests.outbox.writer import MatchWriter
from tests.streams.clients import WITHIN, server_let_go, sse, websocket
from tests.support.http import serve
from tests.support.waiting import eventually

MATCH = 81000001
PAST_BIGINT = 2**63


async def _refused_socket_code(api_url: str) -> int | None:
    """The close code of a WebSocket the server closes straight after the handshake."""
    async with connect(api_url.replace("http://", "ws://") + "/v1/ws", open_timeout=WITHIN) as connection:
        with pytest.raises(ConnectionClosed) as closed:
            await asyncio.wait_for(connection.recv(), WITHIN)
    return None if closed.value.rcvd is None else closed.value.rcvd.code


async def _answer(
    client: httpx.AsyncClient, path: str, headers: dict[str, str] | None = None
) -> httpx.Response:
    """The response to a stream request, its body read only if it is not a stream (200)."""
    async with client.stream("GET", path, headers=headers) as response:
        if response.status_code != 200:
            await response.aread()
        return response


async def _stream_status(client: httpx.AsyncClient, path: str, headers: dict[str, str] | None = None) -> int:
    return (await _answer(client, path, headers)).status_code


async def _refused_metric(client: httpx.AsyncClient, transport: str, reason: str) -> float:
    response = await client.get("/metrics")
    assert response.status_code == 200, response.text
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            if sample.name == "scoreline_stream_refusals_total" and sample.labels == {
                "transport": transport,
                "reason": reason,
            }:
                return sample.value
    raise AssertionError(f"no refusals series for {transport}, {reason}")


@asynccontextmanager
async def _api(settings: Settings, **limits: int) -> AsyncIterator[tuple[str, LiveRuntime]]:
    app = create_app(settings.model_copy(update=limits))
    async with serve(app) as url:
        yield url, app.state.live


async def test_a_client_at_its_cap_is_refused_429_and_1013_until_a_connection_closes(
    live_settings: Settings, engine: AsyncEngine
) -> None:
    """Before the fix nothing capped one client: a third stream past a cap of two was served."""
    await MatchWriter.create(engine, MATCH)
    path = f"/v1/matches/{MATCH}/stream"
    async with (
        _api(live_settings, live_max_connections_per_client=2) as (url, live),
        httpx.AsyncClient(base_url=url, timeout=WITHIN) as client,
    ):
        async with sse(url, path) as first, websocket(url):
            await first.next()
            response = await _answer(client, path)
            assert response.status_code == 429
            assert response.json()["error"]["code"] == "too_many_connections"
            assert response.json()["error"]["message"]
            assert int(response.headers["Retry-After"]) >= 1
            assert await _refused_socket_code(url) == 1013
            assert await _refused_metric(client, "sse", "client") == 1
            assert await _refused_metric(client, "websocket", "client") == 1

        async def freed() -> bool:
            return live.limits.open == 0

        await eventually(freed)
        async with websocket(url) as socket, sse(url, path) as stream:
            assert live.limits.open == 2
            assert await socket.subscribe(f"match:{MATCH}") == [
                {"type": "subscribed", "channels": [f"match:{MATCH}"]}
            ]
            await stream.next()


async def test_a_process_at_its_total_cap_is_refused_503_and_1013(
    live_settings: Settings, engine: AsyncEngine
) -> None:
    """Before the fix nothing capped a process: a third stream past a total of two was served."""
    await MatchWriter.create(engine, MATCH)
    path = f"/v1/matches/{MATCH}/stream"
    async with (
        _api(live_settings, live_max_connections=2) as (url, live),
        httpx.AsyncClient(base_url=url, timeout=WITHIN) as client,
    ):
        async with sse(url, "/v1/stream?matches=live"), websocket(url):
            response = await _answer(client, path)
            assert response.status_code == 503
            assert response.json()["error"]["code"] == "unavailable"
            assert int(response.headers["Retry-After"]) >= 1
            assert await _refused_socket_code(url) == 1013
            assert await _refused_metric(client, "sse", "total") == 1
            assert await _refused_metric(client, "websocket", "total") == 1

        async def freed() -> bool:
            return live.limits.open == 0

        await eventually(freed)
        assert await _stream_status(client, path) == 200


async def test_a_channel_id_past_bigint_is_an_unknown_channel(api_url: str) -> None:
    """Before the fix the WebSocket looked such an id up in Postgres and answered `unavailable`."""
    async with websocket(api_url) as socket:
        for fixture_id in (PAST_BIGINT, 10**19 - 1):
            await socket.send({"op": "subscribe", "channels": [f"match:{fixture_id}"]})
            answer = await socket.next()
            assert (answer["type"], answer["code"]) == ("error", "unknown_channel"), answer
        await socket.send({"op": "subscribe", "channels": [f"match:{2**63 - 1}"]})
        assert (await socket.next())["code"] == "match_not_found"


async def test_an_sse_id_past_bigint_is_answered_as_the_match_route_answers_it(api_url: str) -> None:
    """A guard, not a fix (it passed before): the stream's path id is validated as `/v1/matches/{id}`."""
    async with httpx.AsyncClient(base_url=api_url, timeout=WITHIN) as client:
        match = await client.get(f"/v1/matches/{PAST_BIGINT}")
        stream = await client.get(f"/v1/matches/{PAST_BIGINT}/stream")
    assert match.status_code == stream.status_code == 422
    assert stream.json()["error"]["code"] == match.json()["error"]["code"] == "validation_error"


@pytest.mark.parametrize("junk", ["1.0", "+1", "1_0", "-0", "0x1", str(PAST_BIGINT), "-1", ""])
async def test_a_junk_last_event_id_is_a_json_422(api_url: str, engine: AsyncEngine, junk: str) -> None:
    """Before the fix `1.0`, `+1`, `1_0` and `-0` were read as versions and a stream was served."""
    await MatchWriter.create(engine, MATCH)
    async with httpx.AsyncClient(base_url=api_url, timeout=WITHIN) as client:
        response = await _answer(client, f"/v1/matches/{MATCH}/stream", {"Last-Event-ID": junk})
    assert response.status_code == 422, junk
    assert response.json()["error"]["code"] == "validation_error"


async def test_the_largest_last_event_id_is_still_a_version(api_url: str, engine: AsyncEngine) -> None:
    """A guard (it passed before): bigint's largest value and leading zeros are ids, not junk."""
    await MatchWriter.create(engine, MATCH)
    async with httpx.AsyncClient(base_url=api_url, timeout=WITHIN) as client:
        for header in (str(2**63 - 1), "007"):
            assert (
                await _stream_status(client, f"/v1/matches/{MATCH}/stream", {"Last-Event-ID": header}) == 200
            )


async def test_a_websocket_that_stops_reading_is_cut_and_frees_its_slot(
    live_settings: Settings, engine: AsyncEngine
) -> None:
    """Before the fix a dropped client stuck in a send kept its connection open for as long as it
    kept its socket: here, one that subscribes and never reads is dropped and its slot freed."""
    match = await MatchWriter.create(engine, MATCH)
    async with _api(live_settings, live_client_queue=4) as (url, live):
        stalled = socket.socket()
        stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
        stalled.setblocking(False)
        loop = asyncio.get_running_loop()
        try:
            await loop.sock_connect(stalled, ("127.0.0.1", int(url.rsplit(":", 1)[1])))
            await loop.sock_sendall(stalled, _UPGRADE)
            assert (await loop.sock_recv(stalled, 12)).startswith(b"HTTP/1.1 101")
            subscribe = json.dumps({"op": "subscribe", "channels": [f"match:{MATCH}"]}).encode()
            await loop.sock_sendall(stalled, bytes([0x81, 0x80 | len(subscribe)]) + bytes(4) + subscribe)
            await eventually(lambda: _is(live.hub.subscribers, 1))
            assert live.limits.open == 1
            for _ in range(400):
                await match.change(entries=20, padding=2000)
                if live.hub.subscribers == 0:
                    break
            assert live.hub.subscribers == 0, "the stalled client was never dropped"
            await eventually(lambda: _is(live.limits.open, 0))
            # The server lets go of the socket too: a cut client that kept it would hold a file
            # descriptor and buffers whatever the caps say, however often it reconnects.
            await eventually(lambda: server_let_go(int(url.rsplit(":", 1)[1]), stalled))
        finally:
            stalled.close()


_UPGRADE = (
    b"GET /v1/ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
)


async def _is(actual: int, expected: int) -> bool:
    return actual == expected


async def test_a_subscribe_that_finds_the_pool_busy_is_unavailable_and_the_socket_stays(
    live_settings: Settings, engine: AsyncEngine
) -> None:
    """A subscribe whose first read found every connection of the pool busy raised out of the
    socket: it closed 1011 with an ASGI error instead of answering `unavailable`."""
    await MatchWriter.create(engine, MATCH)
    settings = live_settings.model_copy(
        update={"db_pool_api": 1, "api_db_pool_timeout": timedelta(seconds=0.3)}
    )
    app = create_app(settings)
    async with serve(app) as url, websocket(url) as socket_:
        pool = app.state.resources.engine
        async with pool.connect(), pool.connect():  # the pool's one connection and its overflow
            await socket_.send({"op": "subscribe", "channels": [f"match:{MATCH}"]})
            answer = await socket_.next()
        assert (answer["type"], answer["code"]) == ("error", "unavailable")
        assert (await socket_.subscribe(f"match:{MATCH}"))[0]["type"] == "subscribed"
