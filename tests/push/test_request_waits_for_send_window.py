"""A request's last check (`go`) comes once the whole request can leave at once.

The last check before a request says whether it may still go (no newer push claimed since its
look, the look recent enough). It used to be asked once a stream was free, before the headers;
the body then waited for the server to open its flow-control window, so a request could leave
well after its check said yes (while the other worker sent a newer push, the soak of 2026-12-05,
seed 18). Here a real TLS HTTP/2 server holds its connection window shut.

And a request whose answer timer came due while the loop stood still waits for its answer a
little longer.
"""

from __future__ import annotations

import asyncio
import ssl
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from h2.config import H2Configuration
from h2.connection import H2Connection
from h2.events import DataReceived, RequestReceived, StreamEnded

from activities.push.connection import ApnsConnection
from activities.push.provider_token import ProviderToken
from devkit.simulators.apns.keys import ensure_tls_certificate
from devkit.simulators.apns.server import tls_context
from tests.support.waiting import eventually

pytestmark = pytest.mark.timeout(30)

CONNECTION_WINDOW = 65_535
"""HTTP/2's initial connection window: one body this large fills it."""
HEADERS = [(":path", "/3/device/0123"), ("apns-topic", "t")]


class WindowHolder(asyncio.Protocol):
    """An HTTP/2 server that reads requests but acknowledges no data until `open_window()`."""

    def __init__(self) -> None:
        self.h2 = H2Connection(H2Configuration(client_side=False))
        self.transport: asyncio.Transport | None = None
        self.received: dict[int, int] = {}
        """Bytes of body per stream, headers counted as a stream seen."""
        self.ended: list[int] = []
        self.unacknowledged: list[tuple[int, int]] = []
        self.window_open = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self.h2.initiate_connection()
        self._flush()

    def data_received(self, data: bytes) -> None:
        for event in self.h2.receive_data(data):
            if isinstance(event, RequestReceived):
                self.received[event.stream_id] = 0
            elif isinstance(event, DataReceived):
                self.received[event.stream_id] += len(event.data)
                self.unacknowledged.append((event.flow_controlled_length, event.stream_id))
            elif isinstance(event, StreamEnded):
                self.ended.append(event.stream_id)
        self._answer_if_open()

    def open_window(self) -> None:
        self.window_open = True
        self._answer_if_open()

    def _answer_if_open(self) -> None:
        if self.window_open:
            for length, stream_id in self.unacknowledged:
                self.h2.acknowledge_received_data(length, stream_id)
            self.unacknowledged.clear()
            for stream_id in self.ended:
                self.h2.send_headers(stream_id, [(":status", "200")], end_stream=True)
            self.ended.clear()
        self._flush()

    def _flush(self) -> None:
        if self.transport is not None:
            self.transport.write(self.h2.data_to_send())


@pytest_asyncio.fixture
async def served(tmp_path: Path) -> AsyncIterator[tuple[WindowHolder, ApnsConnection]]:
    cert, key = ensure_tls_certificate(tmp_path, "localhost")
    server_side = WindowHolder()
    server = await asyncio.get_running_loop().create_server(
        lambda: server_side, "127.0.0.1", 0, ssl=tls_context(cert, key)
    )
    port = server.sockets[0].getsockname()[1]
    client_tls = ssl.create_default_context(cafile=str(cert))
    client_tls.set_alpn_protocols(["h2"])
    connection = await ApnsConnection.open(
        "localhost", port, client_tls, ProviderToken("test", 0), lambda _: None, timeout=5
    )
    try:
        yield server_side, connection
    finally:
        connection.close()
        await connection.wait_closed()
        server.close()
        await server.wait_closed()


async def test_go_is_asked_once_the_window_takes_the_whole_request(
    served: tuple[WindowHolder, ApnsConnection],
) -> None:
    """The second request waits, with nothing sent, until the server opens its window; then it is
    checked and leaves whole. Before the fix it was checked at once and its headers left, its body
    held back behind the shut window."""
    server, connection = served
    first = asyncio.create_task(connection.request(HEADERS, b"x" * CONNECTION_WINDOW, 5))

    async def window_filled() -> bool:
        return sum(server.received.values()) >= CONNECTION_WINDOW

    await eventually(window_filled, every=0.01)
    checked_while_shut: list[bool] = []

    def go() -> bool:
        checked_while_shut.append(not server.window_open)
        return True

    second = asyncio.create_task(connection.request(HEADERS, b"y" * 100, 5, go=go))
    await asyncio.sleep(0.3)

    assert checked_while_shut == [] and len(server.received) == 1, "the second request started early"
    server.open_window()
    answers = await asyncio.gather(first, second)

    assert [answer.status for answer in answers] == [200, 200]
    assert checked_while_shut == [False]
    assert sorted(server.received.values()) == [100, CONNECTION_WINDOW]


async def test_a_request_whose_timer_came_due_while_the_loop_stood_still_waits_for_its_answer(
    served: tuple[WindowHolder, ApnsConnection],
) -> None:
    """The soak of 2026-12-06 (seed 23): a worker SIGSTOPped for 16 s right after its requests'
    last checks flushed them only once resumed, and their timers, due during the pause, fired
    before APNs could answer: 426 goal alerts written in doubt, never delivered. Here the loop
    stands still for a second after the check (a blocking sleep); the answer comes in ms after
    the request leaves. Before the fix: MaybeSent "no answer within 0.2s"."""
    server, connection = served
    server.open_window()
    loop = asyncio.get_running_loop()

    def go() -> bool:
        loop.call_soon(time.sleep, 1.0)  # runs before the request's frames are flushed
        return True

    answer = await connection.request(HEADERS, b"{}", 0.2, go=go)

    assert answer.status == 200
