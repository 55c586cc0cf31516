"""Misbehaviour below HTTP: resetting the connection, or cutting a body short and hanging up.

An ASGI app can only send messages, so to break the connection it needs the connection's asyncio
transport. uvicorn's `send` callable is a bound method of its per-request cycle object, which
holds that transport (`cycle.transport`, in both its h11 and httptools protocols).
`remember_transport` stores it in the scope on the way in, before any middleware wraps `send`; the
responses below use it. Under any other server (or uvicorn at `trace` log level, whose message
logger wraps `send`) these responses fail loudly instead of pretending.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
from typing import Any

from starlette.responses import Response
from starlette.types import Receive, Scope, Send

TRANSPORT_SCOPE_KEY = "scoreline.sim.transport"
# Upper bound on waiting for the server to notice the closed connection.
DISCONNECT_WAIT_SECONDS = 1.0


def remember_transport(scope: Scope, send: Send) -> None:
    """Keep uvicorn's transport for this request in `scope`, if it can be found."""
    transport = getattr(getattr(send, "__self__", None), "transport", None)
    if isinstance(transport, asyncio.Transport):
        scope[TRANSPORT_SCOPE_KEY] = transport


def _transport(scope: Scope) -> asyncio.Transport:
    transport: Any = scope.get(TRANSPORT_SCOPE_KEY)
    if not isinstance(transport, asyncio.Transport):
        raise RuntimeError("connection faults need the simulator to run under uvicorn (no transport found)")
    return transport


async def _until_disconnected(receive: Receive) -> None:
    # Returning before the server has seen the connection drop would make it log an unfinished
    # response and try to answer 500 on a dead socket.
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(DISCONNECT_WAIT_SECONDS):
            while (await receive())["type"] != "http.disconnect":
                pass


class ConnectionReset(Response):
    """No answer at all: the TCP connection is reset (RST), so the client sees a transport error."""

    def __init__(self) -> None:
        super().__init__()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        transport = _transport(scope)
        sock = transport.get_extra_info("socket")
        if sock is not None:
            # Linger 0 turns the close into an RST rather than an orderly FIN.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        transport.abort()
        await _until_disconnected(receive)


class TruncatedResponse(Response):
    """Headers with the full Content-Length, half the body, then the connection is closed."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        transport = _transport(scope)
        await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
        await send(
            {"type": "http.response.body", "body": self.body[: len(self.body) // 2], "more_body": True}
        )
        transport.close()  # an orderly close flushes the half body first
        await _until_disconnected(receive)
