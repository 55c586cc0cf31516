"""Binds a trace id to every request: from `traceparent` when the caller sent one, else fresh.

A pure ASGI middleware (not BaseHTTPMiddleware) so streaming responses keep the binding and pay
no extra task per request. The id is echoed in `X-Trace-Id` so a client can quote it to support.
"""

from __future__ import annotations

from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from scoreline.tracing import bound_trace, trace_id_from_traceparent

TRACE_HEADER = "x-trace-id"


class TraceMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        incoming = trace_id_from_traceparent(Headers(scope=scope).get("traceparent"))
        with bound_trace(incoming) as trace_id:

            async def send_with_trace(message: Message) -> None:
                if message["type"] == "http.response.start":
                    MutableHeaders(scope=message)[TRACE_HEADER] = trace_id
                await send(message)

            await self.app(scope, receive, send_with_trace)
