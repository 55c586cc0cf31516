"""One HTTP/2 connection to APNs, on raw `h2` and asyncio (see `apns` for why not aioapns).

What it guarantees, because exactly-once delivery depends on it:

- every request ends in exactly one of: a response, `NotSent` (APNs cannot have processed it: the
  connection failed before the request was complete, the stream was refused, or it is above the
  `last_stream_id` of a GOAWAY), or `MaybeSent` (it went out and no answer came: a timeout, a reset,
  a connection lost mid-flight). Nothing is ever resent behind the caller's back;
- the server's `MAX_CONCURRENT_STREAMS` and flow-control windows are respected (a request waits
  for room instead of failing), and received data is acknowledged so the connection never stalls;
- a timed-out or cancelled request resets its stream and leaves the connection healthy.
"""

from __future__ import annotations

import asyncio
import json
import ssl
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

from h2.config import H2Configuration
from h2.connection import H2Connection
from h2.errors import ErrorCodes
from h2.events import (
    ConnectionTerminated,
    DataReceived,
    RemoteSettingsChanged,
    ResponseReceived,
    StreamEnded,
    StreamReset,
    WindowUpdated,
)
from h2.exceptions import H2Error, ProtocolError
from hpack import Encoder, NeverIndexedHeaderTuple

from activities.push.provider_token import ProviderToken

MAX_STREAMS_CAP = 1000
"""Never more streams per connection than this, whatever the server allows."""
STALL_S = 0.5
"""A request's timer firing this much later than due means the loop stood still meanwhile (the
process paused or starved): the request may only now have left, its answer only now be readable."""
STALL_GRACE_S = 2.0
"""How long such a request is given after the stall before it counts as unanswered."""
MAX_STALL_GRACES = 3
"""At most this many graces: a loop starved for good still gives up on its requests."""


class NotSent(Exception):
    """APNs did not process the request: retrying cannot make a duplicate."""


class MaybeSent(Exception):
    """The request left and no answer came back: APNs may have processed it."""


class ConnectionLost(MaybeSent):
    """The connection died while the request waited for its answer: APNs may have processed it,
    and the requests after it on a failing path may be lost the same way."""


class Withheld(Exception):
    """The caller's last check, made once the request had its stream and right before its first
    byte, said not to send it: nothing went out."""


@dataclass(frozen=True)
class RawResponse:
    status: int
    headers: dict[str, str]
    body: bytes


@dataclass
class _Stream:
    future: asyncio.Future[RawResponse]
    sent: bool = False
    status: int = 0
    headers: dict[str, str] = field(default_factory=dict)
    body: bytearray = field(default_factory=bytearray)
    timer: asyncio.TimerHandle | None = None
    """When it counts as unanswered (`ApnsConnection._time_out`)."""


class ApnsConnection(asyncio.Protocol):
    """A client connection; `token` is the provider token every request on it carries."""

    def __init__(
        self, token: ProviderToken, authority: str, on_closed: Callable[[ApnsConnection], None]
    ) -> None:
        self.token = token
        self._authority = authority
        self._on_closed = on_closed
        self._loop = asyncio.get_running_loop()
        # Our own request headers are well-formed by construction: skip h2's per-request checks.
        # Without normalisation h2 also no longer marks `authorization` never-indexed, so HPACK
        # sends the provider token once per connection instead of ~250 bytes per push. (Indexing
        # only ever matches a whole value: nothing about the token leaks to another header.)
        self._h2 = H2Connection(
            H2Configuration(
                client_side=True,
                header_encoding="utf-8",
                validate_outbound_headers=False,
                normalize_outbound_headers=False,
                validate_inbound_headers=False,
            )
        )
        self._h2.encoder = _PlainEncoder()
        self._transport: asyncio.Transport | None = None
        self._settled: asyncio.Future[None] = self._loop.create_future()
        self._streams: dict[int, _Stream] = {}
        self._slot_waiters: deque[asyncio.Future[None]] = deque()
        self._window_waiters: list[asyncio.Future[None]] = []
        self._flush_scheduled = False
        self._closed = False
        self._lost = asyncio.Event()
        self._draining = False
        self.goaway_reason: str | None = None
        self.in_flight = 0
        """Requests using this connection now (sending, waiting for an answer, or for a stream)."""

    @classmethod
    async def open(
        cls,
        host: str,
        port: int,
        context: ssl.SSLContext,
        token: ProviderToken,
        on_closed: Callable[[ApnsConnection], None],
        timeout: float,
    ) -> ApnsConnection:
        """Connect, and return once the server's SETTINGS arrived (its stream limit is known).

        Raises:
            NotSent: The connection could not be made.
        """
        authority = host if port == 443 else f"{host}:{port}"
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):
                _, protocol = await loop.create_connection(
                    lambda: cls(token, authority, on_closed), host, port, ssl=context, server_hostname=host
                )
            async with asyncio.timeout(timeout):
                await asyncio.shield(protocol._settled)
        except (OSError, TimeoutError, ssl.SSLError, NotSent) as error:
            raise NotSent(f"cannot connect to APNs at {authority}: {error!r}") from error
        return protocol

    @property
    def usable(self) -> bool:
        """Open and taking new requests."""
        return not self._closed and not self._draining

    @property
    def has_room(self) -> bool:
        """A new request would get a stream without waiting."""
        return self.in_flight < self._max_streams()

    def retire(self) -> None:
        """Take no new requests; close once the requests in flight are answered."""
        self._draining = True
        self._wake_all(self._slot_waiters)
        self._wake_all(self._window_waiters)
        if not self._streams:
            self.close()

    def close(self) -> None:
        if self._transport is not None and not self._transport.is_closing():
            try:
                self._h2.close_connection()
                self._transport.write(self._h2.data_to_send())
            except H2Error:
                pass
            self._transport.close()

    async def wait_closed(self) -> None:
        """Until the transport is gone (TLS close included): a loop may only close after that."""
        if self._transport is not None:
            await self._lost.wait()

    async def request(
        self,
        headers: list[tuple[str, str]],
        body: bytes,
        timeout: float,
        go: Callable[[], bool] | None = None,
    ) -> RawResponse:
        """Send one POST (pseudo-headers are added here) and wait at most `timeout` for the answer.

        `go` is asked once the stream slot is taken and the send windows have room for the whole
        body, with nothing between its answer and the request's last frame handed to the
        connection (written at the end of this loop iteration): waiting for a slot (or for the
        connection, or for the server to open its window) can take long enough for a newer push to
        go out first. A body larger than a new stream's window (never an APNs payload: 5 KB at
        most, windows of 64 KB) still waits for the window after `go`.

        Raises:
            Withheld: `go` said no.
            NotSent: The request was not (completely) sent.
            MaybeSent: It was sent and not answered in time, reset, or the connection was lost.
        """
        self.in_flight += 1
        try:
            await self._take_slot(len(body))
            if go is not None and not go():
                self._wake_slots()  # the free stream it was woken for goes to the next waiter
                raise Withheld("withheld right before sending")
            stream_id = self._h2.get_next_available_stream_id()
            stream = _Stream(self._loop.create_future())
            self._streams[stream_id] = stream
            try:
                self._h2.send_headers(
                    stream_id,
                    [(":method", "POST"), (":scheme", "https"), (":authority", self._authority), *headers],
                )
                await self._send_body(stream_id, body)
            except H2Error as error:
                self._reset(stream_id)
                raise NotSent(f"HTTP/2 refused the request: {error!r}") from error
            except asyncio.CancelledError:
                self._reset(stream_id)  # half-sent: free the stream, the server drops it
                raise
            stream.sent = True
            self._schedule_flush()
            # A timer per stream rather than `wait_for`: no extra task per push.
            stream.timer = self._loop.call_later(timeout, self._time_out, stream_id, timeout, 0)
            try:
                return await stream.future
            except asyncio.CancelledError:
                self._reset(stream_id)
                raise
            finally:
                if stream.timer is not None:
                    stream.timer.cancel()
        finally:
            self.in_flight -= 1

    # --- asyncio.Protocol ------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # A stream transport: asyncio's own subclasses `asyncio.Transport`; uvloop's TLS one (the
        # worker's loop) has the same methods without the subclass, so no isinstance check here.
        self._transport = cast(asyncio.Transport, transport)
        self._h2.initiate_connection()
        self._flush()

    def connection_lost(self, exc: Exception | None) -> None:
        self._closed = True
        self._lost.set()
        if not self._settled.done():
            self._settled.set_exception(NotSent(f"connection lost during set-up: {exc!r}"))
            self._settled.exception()  # retrieved: `open` may have given up on it already
        reason = self.goaway_reason or (repr(exc) if exc else "closed")
        for stream in self._streams.values():
            error = ConnectionLost if stream.sent else NotSent
            _fail(stream, error(f"connection lost ({reason})"))
        self._streams.clear()
        self._wake_all(self._slot_waiters)
        self._wake_all(self._window_waiters)
        self._on_closed(self)

    def data_received(self, data: bytes) -> None:
        try:
            events = self._h2.receive_data(data)
        except ProtocolError:
            if self._transport is not None:
                self._transport.abort()
            return
        for event in events:
            if isinstance(event, ResponseReceived) and event.stream_id in self._streams:
                stream = self._streams[event.stream_id]
                stream.headers = {str(k): str(v) for k, v in event.headers or ()}
                stream.status = int(stream.headers.get(":status", "0"))
            elif isinstance(event, DataReceived) and event.stream_id is not None:
                self._h2.acknowledge_received_data(event.flow_controlled_length or 0, event.stream_id)
                if event.stream_id in self._streams and event.data:
                    self._streams[event.stream_id].body += event.data
            elif isinstance(event, StreamEnded) and event.stream_id is not None:
                self._finish(event.stream_id)
            elif isinstance(event, StreamReset) and event.stream_id is not None:
                refused = event.error_code == ErrorCodes.REFUSED_STREAM
                error = NotSent if refused else MaybeSent
                self._end(event.stream_id, error(f"stream reset by APNs ({event.error_code!r})"))
            elif isinstance(event, RemoteSettingsChanged):
                if not self._settled.done():
                    self._settled.set_result(None)
                self._wake_slots()
                self._wake_all(self._window_waiters)  # a new initial window changes what fits
            elif isinstance(event, WindowUpdated):
                self._wake_all(self._window_waiters)
            elif isinstance(event, ConnectionTerminated):
                self._go_away(event)
        self._flush()

    # --- internals -------------------------------------------------------------------------

    def _max_streams(self) -> int:
        return min(self._h2.remote_settings.max_concurrent_streams, MAX_STREAMS_CAP)

    async def _take_slot(self, body_size: int) -> None:
        """Until a stream is free and the connection's send window takes `body_size` bytes: once
        it returns, the request goes out whole with no wait (`_send_body` only waits for a body
        larger than a new stream's window). A request whose last check came before a wait for the
        window left later than it said (the server reads at its pace)."""
        while True:
            if not self.usable:
                raise NotSent(f"connection closing ({self.goaway_reason or 'retired'})")
            if len(self._streams) >= self._max_streams():
                waiter = self._loop.create_future()
                self._slot_waiters.append(waiter)
                await waiter
            elif self._h2.outbound_flow_control_window < min(
                body_size, self._h2.remote_settings.initial_window_size
            ):
                waiter = self._loop.create_future()
                self._window_waiters.append(waiter)
                self._schedule_flush()
                await waiter
            else:
                return

    async def _send_body(self, stream_id: int, body: bytes) -> None:
        sent = 0
        while sent < len(body):
            if self._closed:
                raise NotSent("connection lost while sending")
            room = min(self._h2.local_flow_control_window(stream_id), self._h2.max_outbound_frame_size)
            if room <= 0:
                waiter = self._loop.create_future()
                self._window_waiters.append(waiter)
                self._schedule_flush()
                await waiter
                continue
            chunk = body[sent : sent + room]
            sent += len(chunk)
            self._h2.send_data(stream_id, chunk, end_stream=sent >= len(body))

    def _finish(self, stream_id: int) -> None:
        stream = self._streams.get(stream_id)
        if stream is not None and not stream.future.done():
            stream.future.set_result(RawResponse(stream.status, stream.headers, bytes(stream.body)))
        self._release(stream_id)

    def _end(self, stream_id: int, error: Exception) -> None:
        stream = self._streams.get(stream_id)
        if stream is not None:
            _fail(stream, error)
        self._release(stream_id)

    def _release(self, stream_id: int) -> None:
        self._streams.pop(stream_id, None)
        self._wake_slots()
        if self._draining and not self._streams:
            self.close()

    def _time_out(self, stream_id: int, timeout: float, graces: int) -> None:
        """No answer `timeout` after the request was handed over; unless the loop stood still
        meanwhile: then the request is given `STALL_GRACE_S` more. A worker paused (a SIGSTOP)
        with requests handed over sends them only once resumed, and their timers, due during the
        pause, fire before APNs can answer (uvloop runs due timers before it reads the sockets):
        without the grace each would count as in doubt, its alert never delivered."""
        stream = self._streams.get(stream_id)
        if stream is None or stream.timer is None:
            return
        late = self._loop.time() - stream.timer.when()
        if late > STALL_S and graces < MAX_STALL_GRACES:
            stream.timer = self._loop.call_later(
                STALL_GRACE_S, self._time_out, stream_id, timeout, graces + 1
            )
            return
        self._reset(stream_id, MaybeSent(f"no answer within {timeout:g}s"))

    def _reset(self, stream_id: int, error: Exception | None = None) -> None:
        """Give up on a stream (failing its request with `error`): tell the server, keep the connection."""
        stream = self._streams.get(stream_id)
        if stream is not None:
            if error is not None:
                _fail(stream, error)
            try:
                self._h2.reset_stream(stream_id, ErrorCodes.CANCEL)
            except H2Error:
                pass
            self._schedule_flush()
        self._release(stream_id)

    def _go_away(self, event: ConnectionTerminated) -> None:
        """GOAWAY: streams above `last_stream_id` were never processed; the rest may still be answered."""
        self._draining = True
        self.goaway_reason = _goaway_reason(event.additional_data) or str(event.error_code)
        last = event.last_stream_id if event.last_stream_id is not None else 0
        for stream_id in [sid for sid in self._streams if sid > last]:
            self._end(stream_id, NotSent(f"GOAWAY {self.goaway_reason}: not processed"))
        self._wake_all(self._slot_waiters)
        self._wake_all(self._window_waiters)

    def _wake_slots(self) -> None:
        room = self._max_streams() - len(self._streams)
        while room > 0 and self._slot_waiters:
            waiter = self._slot_waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                room -= 1

    @staticmethod
    def _wake_all(waiters: deque[asyncio.Future[None]] | list[asyncio.Future[None]]) -> None:
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)
        waiters.clear()

    def _schedule_flush(self) -> None:
        """Write once per loop iteration, so a burst of requests shares one TLS record and syscall."""
        if not self._flush_scheduled:
            self._flush_scheduled = True
            self._loop.call_soon(self._flush)

    def _flush(self) -> None:
        self._flush_scheduled = False
        data = self._h2.data_to_send()
        if data and self._transport is not None and not self._transport.is_closing():
            self._transport.write(data)


class _PlainEncoder(Encoder):
    """HPACK without Huffman coding, and without indexing the headers that differ on every
    request (the device token's path, the request id, the expiry): a few bytes more per push,
    and much less CPU. Indexed, each would push the others out of the dynamic table, so every
    request would search a full table and send the provider token again."""

    def encode(self, headers: Any, huffman: bool = True) -> bytes:
        return super().encode(
            [
                NeverIndexedHeaderTuple(name, value) if name in _UNIQUE_PER_REQUEST else (name, value)
                for name, value in headers
            ],
            huffman=False,
        )


_UNIQUE_PER_REQUEST = frozenset(
    {":path", "apns-id", "apns-expiration", b":path", b"apns-id", b"apns-expiration"}
)


def _fail(stream: _Stream, error: Exception) -> None:
    if not stream.future.done():
        stream.future.set_exception(error)
        stream.future.exception()  # retrieved: the waiter may have timed out already


def _goaway_reason(data: bytes | None) -> str | None:
    """APNs puts `{"reason": ...}` in the GOAWAY debug data."""
    if not data:
        return None
    try:
        reason = json.loads(data).get("reason")
    except (ValueError, AttributeError):
        return data[:100].decode("utf-8", "replace")
    return str(reason) if reason else None
