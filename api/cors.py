"""CORS for the public read API only: a fan's or broadcaster's page on another origin may read
matches, events and the live streams from the browser; nothing else answers another origin.

`API_CORS_ORIGINS` is `*` (any origin: development) or a comma list of exact origins. Only
`GET` (and its preflight) on `GET /v1/matches`, `/v1/matches/{id}`, `/v1/matches/{id}/events`,
`/v1/matches/{id}/stream` and `/v1/stream` gets CORS headers; no credentials are allowed, and the
read endpoints take none. Commands, devices, partner feeds, the console and the ops routes get no
CORS headers at all, so a browser refuses another origin's call there (a preflight for them is
answered without `Access-Control-Allow-Origin`).

WebSockets are not covered by CORS: browsers send `Origin` and leave the decision to the server.
`/v1/ws` is refused (403 at the handshake) to a browser origin outside the list; a client that
sends no `Origin` (not a browser) is let through, as it could claim any origin anyway.
"""

from __future__ import annotations

import re
from typing import Final

from starlette.datastructures import Headers
from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send

PUBLIC_READS: Final = re.compile(r"^/v1/(matches(/\d+(/events|/stream)?)?|stream)$")
WEBSOCKET: Final = "/v1/ws"


def parse_origins(setting: str) -> list[str]:
    """`*` or the listed origins, without blanks or trailing slashes."""
    origins = [origin.strip().rstrip("/") for origin in setting.split(",") if origin.strip()]
    return ["*"] if "*" in origins else origins


class PublicReadCors:
    """Starlette's CORS middleware, applied to the public read paths only."""

    def __init__(self, app: ASGIApp, origins: list[str]) -> None:
        self.app = app
        self.origins = origins
        self.cors = CORSMiddleware(
            app,
            allow_origins=origins,
            allow_methods=["GET"],
            allow_headers=["Last-Event-ID", "Cache-Control"],
            expose_headers=["X-Trace-Id"],
            allow_credentials=False,
            max_age=600,
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] == "http" and PUBLIC_READS.match(path):
            await self.cors(scope, receive, send)
            return
        if scope["type"] == "websocket" and path == WEBSOCKET and not self._origin_allowed(scope):
            await send({"type": "websocket.close", "code": 1008})
            return
        await self.app(scope, receive, send)

    def _origin_allowed(self, scope: Scope) -> bool:
        origin = Headers(scope=scope).get("origin")
        if origin is None or "*" in self.origins:
            return True
        host = Headers(scope=scope).get("host")
        same_origin = host is not None and origin.split("://", 1)[-1] == host
        return same_origin or origin.rstrip("/") in self.origins
