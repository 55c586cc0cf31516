"""Real clients for the live endpoints: an SSE reader over httpx streaming, and a WebSocket one."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import psutil
from websockets.asyncio.client import ClientConnection, connect

WITHIN = 15.0
"""Seconds a test waits for one message: generous, so a loaded machine is slow, not failing."""


@dataclass(frozen=True)
class SseEvent:
    event: str | None
    id: str | None
    data: str

    @property
    def body(self) -> Any:
        return json.loads(self.data)


class SseStream:
    """One open `text/event-stream` response, parsed into events as they arrive."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self.events: asyncio.Queue[SseEvent | None] = asyncio.Queue()
        self.comments = 0

    async def next(self, within: float = WITHIN) -> SseEvent:
        """The next event; fails if none comes in time or the stream ended."""
        event = await asyncio.wait_for(self.events.get(), within)
        if event is None:
            raise AssertionError("the stream ended")
        return event

    async def until_version(self, version: int, within: float = WITHIN) -> list[SseEvent]:
        """Every event up to and including the one at `version` (by `data.version`)."""
        seen: list[SseEvent] = []
        while not seen or seen[-1].body["version"] < version:
            seen.append(await self.next(within))
        return seen

    async def ended(self, within: float = WITHIN) -> bool:
        """True once the server closed the stream (events before the end are skipped)."""
        async with asyncio.timeout(within):
            while await self.events.get() is not None:
                pass
        return True

    async def _read(self) -> None:
        fields: dict[str, str] = {}
        data: list[str] = []
        try:
            async for line in self.response.aiter_lines():
                if line.startswith(":"):
                    self.comments += 1
                elif line == "":
                    if data:
                        self.events.put_nowait(
                            SseEvent(fields.get("event"), fields.get("id"), "\n".join(data))
                        )
                    fields, data = {}, []
                else:
                    name, _, value = line.partition(":")
                    value = value.removeprefix(" ")
                    if name == "data":
                        data.append(value)
                    else:
                        fields[name] = value
        except httpx.HTTPError:
            pass
        finally:
            self.events.put_nowait(None)


@asynccontextmanager
async def sse(base_url: str, path: str, headers: dict[str, str] | None = None) -> AsyncIterator[SseStream]:
    """Open an SSE stream (200 and text/event-stream asserted) and read it in the background."""
    async with (
        httpx.AsyncClient(base_url=base_url, timeout=httpx.Timeout(WITHIN, read=None)) as client,
        client.stream("GET", path, headers=headers) as response,
    ):
        assert response.status_code == 200, await response.aread()
        assert response.headers["content-type"].startswith("text/event-stream")
        stream = SseStream(response)
        reader = asyncio.create_task(stream._read())
        try:
            yield stream
        finally:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader


class Socket:
    """A WebSocket client speaking the live protocol."""

    def __init__(self, connection: ClientConnection) -> None:
        self.connection = connection

    async def send(self, message: dict[str, Any] | str | bytes) -> None:
        await self.connection.send(message if isinstance(message, str | bytes) else json.dumps(message))

    async def next(self, within: float = WITHIN) -> dict[str, Any]:
        raw = await asyncio.wait_for(self.connection.recv(), within)
        message: dict[str, Any] = json.loads(raw)
        return message

    async def subscribe(self, *channels: str) -> list[dict[str, Any]]:
        """Subscribe and return the ack."""
        await self.send({"op": "subscribe", "channels": list(channels)})
        return [await self.next()]

    async def values_until(self, channel: str, version: int) -> list[dict[str, Any]]:
        """`value` messages of `channel` up to `version` (other messages fail the test)."""
        seen: list[dict[str, Any]] = []
        while not seen or seen[-1]["version"] < version:
            message = await self.next()
            assert (message["type"], message["channel"]) == ("value", channel), message
            seen.append(message)
        return seen


@asynccontextmanager
async def websocket(base_url: str, query: str = "") -> AsyncIterator[Socket]:
    url = base_url.replace("http://", "ws://") + "/v1/ws" + query
    async with connect(url, open_timeout=WITHIN) as connection:
        yield Socket(connection)


async def server_let_go(port: int, client: socket.socket) -> bool:
    """Whether the server on `port` no longer holds its end of `client`'s connection: what a
    client that stopped reading would otherwise keep (a socket and its buffers on the server)."""
    peer = client.getsockname()[:2]
    for connection in psutil.net_connections("tcp"):
        if connection.laddr and connection.laddr.port == port and connection.raddr == peer:
            return connection.status != psutil.CONN_ESTABLISHED
    return True
