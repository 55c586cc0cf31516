"""A request written by hand on a socket, so a test controls exactly which bytes the client sends."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import h11


@dataclass(frozen=True)
class RawAnswer:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


async def headers_only(
    url: str, method: str, path: str, headers: dict[str, str], *, wait: float
) -> RawAnswer:
    """Send a request's head and none of its body; the answer must come within `wait` seconds."""
    return await _exchange(url, method, path, headers, [], wait=wait)


async def chunked(
    url: str, method: str, path: str, headers: dict[str, str], chunks: list[bytes], *, wait: float
) -> RawAnswer:
    """Send a chunked body (no Content-Length), chunk by chunk, then read the answer."""
    return await _exchange(url, method, path, {**headers, "Transfer-Encoding": "chunked"}, chunks, wait=wait)


async def twice_on_one_connection(url: str, path: str, *, idle: float, wait: float) -> list[RawAnswer]:
    """GET `path`, leave the connection idle for `idle` seconds, then GET it again on the same one."""
    where = urlsplit(url)
    assert where.hostname is not None and where.port is not None
    reader, writer = await asyncio.open_connection(where.hostname, where.port)
    client = h11.Connection(h11.CLIENT)
    answers: list[RawAnswer] = []
    try:
        for attempt in range(2):
            if attempt:
                await asyncio.sleep(idle)
                client.start_next_cycle()
            request = h11.Request(method="GET", target=path, headers=[("Host", where.netloc)])
            writer.write((client.send(request) or b"") + (client.send(h11.EndOfMessage()) or b""))
            await writer.drain()
            async with asyncio.timeout(wait):
                answers.append(await _answer(client, reader))
        return answers
    finally:
        writer.close()


async def _exchange(
    url: str, method: str, path: str, headers: dict[str, str], chunks: list[bytes], *, wait: float
) -> RawAnswer:
    where = urlsplit(url)
    assert where.hostname is not None and where.port is not None
    reader, writer = await asyncio.open_connection(where.hostname, where.port)
    client = h11.Connection(h11.CLIENT)
    try:
        head = [("Host", where.netloc), *headers.items()]
        writer.write(client.send(h11.Request(method=method, target=path, headers=head)) or b"")
        for chunk in chunks:
            writer.write(client.send(h11.Data(data=chunk)) or b"")
        if chunks:
            writer.write(client.send(h11.EndOfMessage()) or b"")
        try:
            await writer.drain()
        except ConnectionError:
            pass  # the server may answer and close while a long body is still going out
        async with asyncio.timeout(wait):
            return await _answer(client, reader)
    finally:
        writer.close()


async def _answer(client: h11.Connection, reader: asyncio.StreamReader) -> RawAnswer:
    status, headers, body = 0, {}, b""
    while True:
        event = client.next_event()
        if event is h11.NEED_DATA:
            client.receive_data(await reader.read(65536))
        elif isinstance(event, h11.Response):
            status = event.status_code
            headers = {name.decode().lower(): value.decode() for name, value in event.headers}
        elif isinstance(event, h11.Data):
            body += event.data
        elif isinstance(event, h11.EndOfMessage | h11.ConnectionClosed):
            return RawAnswer(status, headers, body)
