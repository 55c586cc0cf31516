"""`scoreline api` itself (its uvicorn options, not the tests' server) refuses a WebSocket frame
too big for the protocol's 8,192-character messages from its header, before reading its payload."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from api.live.ws import MAX_MESSAGE
from devkit.devstack.ports import free_port
from tests.streams.clients import WITHIN, websocket
from tests.support.waiting import eventually

ANNOUNCED = 16 * 2**20
"""The frame size the server buffered before the fix (uvicorn's default `ws_max_size`)."""
MESSAGE_TOO_BIG = 1009


@pytest.fixture
async def api_process(database_url: str, redis_url: str, tmp_path: Path) -> AsyncIterator[str]:
    """`python -m scoreline api` on a free port, with an empty data dir (no local env file)."""
    port = free_port()
    environment = {**os.environ, "DATABASE_URL": database_url, "REDIS_URL": redis_url, "LOG_FORMAT": "json"}
    command = [sys.executable, "-m", "scoreline", "api", "--port", str(port), "--data-dir", str(tmp_path)]
    process = await asyncio.create_subprocess_exec(
        *command, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}"
    try:
        async with httpx.AsyncClient(base_url=url, timeout=2) as http:

            async def alive() -> bool:
                try:
                    return (await http.get("/healthz")).status_code == 200
                except httpx.TransportError:
                    return False

            await eventually(alive, within=30, every=0.1)
        yield url
    finally:
        process.terminate()
        await asyncio.wait_for(process.wait(), 15)


async def _handshake(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(
        b"GET /v1/ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), WITHIN)
    assert head.startswith(b"HTTP/1.1 101"), head
    return reader, writer


async def test_a_16_mib_frame_is_closed_1009_from_its_header(api_process: str) -> None:
    """Before the fix uvicorn's 16 MiB default let the server wait for (and buffer) the payload."""
    reader, writer = await _handshake(int(api_process.rsplit(":", 1)[1]))
    try:
        # FIN + text, masked, 64-bit length; a mask key and a few payload bytes, never the rest.
        writer.write(bytes([0x81, 0x80 | 127]) + ANNOUNCED.to_bytes(8, "big") + b"\x00\x00\x00\x00" + b"{}")
        await writer.drain()
        opcode, length = await asyncio.wait_for(reader.readexactly(2), 5)
        code = int.from_bytes(await asyncio.wait_for(reader.readexactly(2), 5), "big")
    finally:
        writer.close()
    assert (opcode & 0x0F, code) == (0x8, MESSAGE_TOO_BIG), (opcode, length, code)


async def test_a_message_of_the_most_characters_still_gets_through(api_process: str) -> None:
    """A guard (it passed before): the frame cap counts bytes, so 8,192 four-byte characters pass."""
    opening, closing = '{"op":"subscribe","channels":["', '"]}'
    text = opening + "\N{GRINNING FACE}" * (MAX_MESSAGE - len(opening) - len(closing)) + closing
    assert len(text) == MAX_MESSAGE
    async with websocket(api_process) as socket:
        await socket.send(text)
        answer = await socket.next()
    assert (answer["type"], answer["code"]) == ("error", "unknown_channel")
