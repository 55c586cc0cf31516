"""The HTTP/2 side of APNs on raw `h2`, one protocol object per TLS connection.

Raw h2 rather than an ASGI server because APNs behaviour lives at the connection level: the
provider token is pinned per connection, GOAWAY carries a JSON reason, and aioapns neither
negotiates ALPN nor sends `:authority`, which generic servers reject or route differently.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field

from h2.config import H2Configuration
from h2.connection import H2Connection
from h2.errors import ErrorCodes
from h2.events import (
    ConnectionTerminated,
    DataReceived,
    RequestReceived,
    StreamEnded,
    StreamReset,
    WindowUpdated,
)
from h2.exceptions import ProtocolError, StreamClosedError
from h2.settings import SettingCodes, Settings

from devkit.simulators.apns.provider_token import ConnectionTokenState
from devkit.simulators.apns.rules import MAX_KEPT_BODY_BYTES, PushRequest
from devkit.simulators.apns.service import Answer, PushService
from scoreline.logging import get_logger

# What APNs advertises once a connection is in use; senders size their stream pools from it.
MAX_CONCURRENT_STREAMS = 1000

log = get_logger("devkit.simulators.apns.protocol")


class ConnectionRegistry:
    """Numbers connections and keeps the open ones, for stats and for a clean shutdown."""

    def __init__(self) -> None:
        self.total = 0
        self._open: set[ApnsProtocol] = set()

    @property
    def open_count(self) -> int:
        """Connections currently open."""
        return len(self._open)

    def opened(self, connection: ApnsProtocol) -> int:
        """Track `connection`; returns its number."""
        self.total += 1
        self._open.add(connection)
        return self.total

    def closed(self, connection: ApnsProtocol) -> None:
        """Stop tracking `connection`."""
        self._open.discard(connection)

    def shut_down_all(self) -> None:
        """Say goodbye like APNs going down: GOAWAY with reason `Shutdown`, then close."""
        for connection in list(self._open):
            connection.go_away("Shutdown")


@dataclass
class _Stream:
    method: str
    path: str
    headers: list[tuple[str, str]]
    body: bytearray = field(default_factory=bytearray)
    size: int = 0


class ApnsProtocol(asyncio.Protocol):
    """Reads requests off one connection, asks `PushService`, writes the answers back."""

    def __init__(self, service: PushService, registry: ConnectionRegistry) -> None:
        self._service = service
        self._registry = registry
        self._h2 = H2Connection(H2Configuration(client_side=False))
        self._h2.local_settings = Settings(
            client=False, initial_values={SettingCodes.MAX_CONCURRENT_STREAMS: MAX_CONCURRENT_STREAMS}
        )
        self._transport: asyncio.Transport | None = None
        self._id = 0
        self._auth = ConnectionTokenState()
        self._streams: dict[int, _Stream] = {}
        # Error bodies waiting for flow-control window; each goes out as a single DATA frame
        # because aioapns parses every frame as a whole JSON document.
        self._blocked: dict[int, bytes] = {}
        self._delayed: set[asyncio.Task[None]] = set()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """Send our SETTINGS straight away; the client's preface is read in `data_received`."""
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport
        self._id = self._registry.opened(self)
        self._h2.initiate_connection()
        self._flush()
        log.debug("apns_connection_opened", connection=self._id, peer=transport.get_extra_info("peername"))

    def connection_lost(self, exc: Exception | None) -> None:
        """Forget the connection and any answers still waiting on injected latency."""
        self._registry.closed(self)
        for task in self._delayed:
            task.cancel()
        log.debug("apns_connection_closed", connection=self._id, error=str(exc) if exc else None)

    def data_received(self, data: bytes) -> None:
        """Feed h2 and act on its events."""
        try:
            events = self._h2.receive_data(data)
        except ProtocolError as exc:
            log.warning("apns_protocol_error", connection=self._id, error=str(exc))
            self._flush()
            self._close()
            return
        for event in events:
            if isinstance(event, RequestReceived) and event.stream_id is not None:
                self._streams[event.stream_id] = _new_stream(event)
            elif isinstance(event, DataReceived) and event.stream_id is not None:
                self._receive_body(event)
            elif isinstance(event, StreamEnded) and event.stream_id is not None:
                self._complete(event.stream_id)
            elif isinstance(event, StreamReset) and event.stream_id is not None:
                self._streams.pop(event.stream_id, None)
                self._blocked.pop(event.stream_id, None)
            elif isinstance(event, WindowUpdated):
                self._send_blocked()
            elif isinstance(event, ConnectionTerminated):
                self._close()
        self._flush()

    def go_away(self, reason: str, last_stream_id: int | None = None) -> None:
        """GOAWAY with APNs' JSON reason in the debug data, then close the connection."""
        if self._closing:
            return
        self._h2.close_connection(
            error_code=ErrorCodes.NO_ERROR,
            additional_data=json.dumps({"reason": reason}).encode(),
            last_stream_id=last_stream_id,
        )
        self._flush()
        self._close()

    @property
    def _closing(self) -> bool:
        return self._transport is None or self._transport.is_closing()

    def _receive_body(self, event: DataReceived) -> None:
        assert event.stream_id is not None
        if event.flow_controlled_length:
            self._h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
        stream = self._streams.get(event.stream_id)
        if stream is None or event.data is None:
            return
        stream.size += len(event.data)
        room = MAX_KEPT_BODY_BYTES - len(stream.body)
        if room > 0:
            stream.body += event.data[:room]

    def _complete(self, stream_id: int) -> None:
        stream = self._streams.pop(stream_id, None)
        if stream is None or self._closing:
            return
        request = PushRequest(stream.method, stream.path, stream.headers, bytes(stream.body), stream.size)
        answer = self._service.handle(request, connection_id=self._id, stream_id=stream_id, auth=self._auth)
        if answer.delay_s > 0:
            task = asyncio.get_running_loop().create_task(self._answer_later(stream_id, answer))
            self._delayed.add(task)
            task.add_done_callback(self._delayed.discard)
        else:
            self._answer(stream_id, answer)

    async def _answer_later(self, stream_id: int, answer: Answer) -> None:
        await asyncio.sleep(answer.delay_s)
        self._answer(stream_id, answer)
        self._flush()

    def _answer(self, stream_id: int, answer: Answer) -> None:
        if self._closing:
            return
        if answer.action == "goaway":
            # The stream that triggered it counts as unprocessed, so a client may retry it.
            self.go_away(answer.reason or "Shutdown", last_stream_id=max(stream_id - 2, 0))
            return
        if answer.action == "disconnect":
            assert self._transport is not None
            self._transport.abort()
            return
        body = answer.body()
        try:
            self._h2.send_headers(stream_id, answer.headers(body), end_stream=not body)
        except StreamClosedError:
            return  # the client reset the stream while we were delaying
        if body:
            self._blocked[stream_id] = body
            self._send_blocked()

    def _send_blocked(self) -> None:
        for stream_id, body in list(self._blocked.items()):
            try:
                if self._h2.local_flow_control_window(stream_id) < len(body):
                    continue
                self._h2.send_data(stream_id, body, end_stream=True)
            except StreamClosedError:
                pass
            del self._blocked[stream_id]

    def _flush(self) -> None:
        data = self._h2.data_to_send()
        if data and not self._closing:
            assert self._transport is not None
            self._transport.write(data)

    def _close(self) -> None:
        if self._transport is not None and not self._transport.is_closing():
            self._transport.close()


def _new_stream(event: RequestReceived) -> _Stream:
    pseudo: dict[str, str] = {}
    headers: list[tuple[str, str]] = []
    for raw_name, raw_value in event.headers or []:
        name, value = _text(raw_name), _text(raw_value)
        if name.startswith(":"):
            pseudo[name] = value
        else:
            headers.append((name, value))
    return _Stream(pseudo.get(":method", ""), pseudo.get(":path", ""), headers)


def _text(value: bytes | str) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value
