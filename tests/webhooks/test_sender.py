"""The sender against raw socket servers: keep-alive, and every answer shape."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import timedelta

import pytest

from scoreline.webhooks.sender import ANSWER_HEAD_BYTES, Answer, Sender
from scoreline.webhooks.signing import new_secret
from scoreline.webhooks.urls import UrlPolicy

pytestmark = pytest.mark.unit

Answerer = Callable[[asyncio.StreamReader, asyncio.StreamWriter, int], Awaitable[bool]]
"""Reads one request and answers it; False to close the connection. Gets the request's number."""


async def _request(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    return head + await reader.readexactly(length)


@asynccontextmanager
async def server(answer: Answerer) -> AsyncIterator[tuple[str, list[int]]]:
    """Yields (url, connections): connections holds the number of requests each connection carried."""
    connections: list[int] = []
    count = 0

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal count
        index = len(connections)
        connections.append(0)
        try:
            while True:
                await _request(reader)
                connections[index] += 1
                count += 1
                if not await answer(reader, writer, count):
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        writer.close()

    listening = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = listening.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/hook", connections
    finally:
        listening.close()


async def _ok(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter, _n: int) -> bool:
    writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
    await writer.drain()
    return True


def _sender(timeout: float = 2.0) -> Sender:
    return Sender(UrlPolicy(development=True), timedelta(seconds=timeout), max_connections=8)


async def test_many_connections_are_kept_alive() -> None:
    """A hundred receivers' worth of concurrent POSTs go over a hundred kept-alive connections, each
    carrying its share: none is opened per request (what a POST costs is bench/webhooks.py's)."""
    sender = Sender(UrlPolicy(development=True), timedelta(seconds=5), max_connections=128)
    async with server(_ok) as (url, connections):

        async def burst(first: int) -> list[Answer]:
            return await asyncio.gather(
                *(sender.post(url, f"msg_{first + n}", b"{}", [new_secret()]) for n in range(100))
            )

        await burst(0)
        answers = [answer for round_ in range(1, 6) for answer in await burst(round_ * 100)]
    await sender.aclose()
    assert {(a.status, a.head, a.delivered) for a in answers} == {(200, "ok", True)}
    assert len(connections) == 100 and set(connections) == {6}


async def test_a_kept_alive_connection_the_receiver_closed_is_not_a_failure() -> None:
    async def once(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter, _n: int) -> bool:
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")
        await writer.drain()
        return False  # closes after each answer without saying so

    sender = _sender()
    async with server(once) as (url, connections):
        first = await sender.post(url, "msg_1", b"{}", [new_secret()])
        await asyncio.sleep(0.05)
        second = await sender.post(url, "msg_2", b"{}", [new_secret()])
    await sender.aclose()
    assert (first.status, second.status) == (200, 200)
    assert connections == [1, 1]


async def test_chunked_interim_and_closing_answers_are_read() -> None:
    async def shapes(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> bool:
        if n == 1:
            writer.write(
                b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 503 Busy\r\nRetry-After: 7\r\n"
                b"Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n"
            )
        elif n == 2:
            writer.write(b"HTTP/1.1 204 No Content\r\n\r\n")
        else:
            writer.write(b"HTTP/1.0 201 Created\r\n\r\nmade")
            await writer.drain()
            return False
        await writer.drain()
        return True

    sender = _sender()
    async with server(shapes) as (url, connections):
        answers = [await sender.post(url, f"msg_{n}", b"{}", [new_secret()]) for n in range(3)]
    await sender.aclose()
    assert [(a.status, a.head, a.retry_after) for a in answers] == [
        (503, "abcde", "7"),
        (204, "", None),
        (201, "made", None),
    ]
    assert connections == [3]


async def test_a_long_answer_is_cut_and_its_connection_not_reused() -> None:
    async def long(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter, _n: int) -> bool:
        size = ANSWER_HEAD_BYTES * 100
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n%s" % (size, b"x" * size))
        await writer.drain()
        return True

    sender = _sender()
    async with server(long) as (url, connections):
        answers = [await sender.post(url, f"msg_{n}", b"{}", [new_secret()]) for n in range(2)]
    await sender.aclose()
    assert [(a.status, len(a.head)) for a in answers] == [(200, ANSWER_HEAD_BYTES)] * 2
    assert connections == [1, 1]


async def test_garbage_and_silence_are_failures() -> None:
    async def garbage(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> bool:
        if n == 1:
            writer.write(b"SSH-2.0-OpenSSH\r\n\r\n")
            await writer.drain()
        else:
            await asyncio.sleep(5)
        return True

    sender = _sender(timeout=0.3)
    async with server(garbage) as (url, _connections):
        bad = await sender.post(url, "msg_1", b"{}", [new_secret()])
        silent = await sender.post(url, "msg_2", b"{}", [new_secret()])
    await sender.aclose()
    assert bad.status is None and bad.error is not None and "not an HTTP/1.x answer" in bad.error
    assert (silent.status, silent.error) == (None, "timeout")
