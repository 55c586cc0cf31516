"""A connection whose answer the app left unfinished is reset, not flushed.

When an app returns (or is cancelled) in the middle of a response, uvicorn closes the transport
gracefully: it first waits to flush what it had buffered. A client that stopped reading never lets
that flush happen, so it would keep its socket, its buffers and a file descriptor for as long as it
likes: a live stream cut for being too slow, opened again and again, would exhaust the process
whatever the connection caps say. So the connection is aborted (RST) instead, unless the response
was completed, the WebSocket closed, or the peer already went away.

This needs the server's transport, which ASGI does not expose: uvicorn's `send` is a bound method
of its per-connection object, which holds it (in its h11, httptools and websockets protocols). It
is looked for before any middleware wraps `send`; under another server nothing is aborted.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from starlette.types import Message, Receive, Scope, Send

ASGICall = Callable[[Scope, Receive, Send], Awaitable[None]]

_DONE_SENDING = frozenset({"http.response.body", "websocket.close", "websocket.http.response.body"})
_PEER_GONE = frozenset({"http.disconnect", "websocket.disconnect"})


async def serve_resetting_unfinished(app: ASGICall, scope: Scope, receive: Receive, send: Send) -> None:
    """Run `app` for one connection; abort its transport if the app ends with the answer unfinished."""
    transport = getattr(getattr(send, "__self__", None), "transport", None)
    if scope["type"] not in ("http", "websocket") or not isinstance(transport, asyncio.Transport):
        await app(scope, receive, send)
        return
    finished = False

    async def watching_send(message: Message) -> None:
        nonlocal finished
        if message["type"] in _DONE_SENDING and not message.get("more_body", False):
            finished = True
        await send(message)

    async def watching_receive() -> Message:
        nonlocal finished
        message = await receive()
        if message["type"] in _PEER_GONE:
            finished = True  # nothing left to flush to anyone
        return message

    try:
        await app(scope, watching_receive, watching_send)
    finally:
        if not finished:
            transport.abort()
