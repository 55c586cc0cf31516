"""One limit on every request body, enforced before and while it is read (`API_MAX_BODY_BYTES`).

A `Content-Length` over the limit is answered 413 `payload_too_large` before a byte of the body is
read; a chunked body (no length announced) is counted as it arrives and refused the moment it
passes the limit. Pure ASGI, so it covers every route, future ones included, and no route can
be made to buffer more than the limit.
"""

from __future__ import annotations

from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.errors import error_body


class BodyLimit:
    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self._announced(scope) > self.max_bytes:
            # Answered before the body is read; the server discards whatever of it still arrives.
            await JSONResponse(error_body("payload_too_large", self._message()), status_code=413)(
                scope, receive, send
            )
            return
        await self.app(scope, self._counted(receive), send)

    def _message(self) -> str:
        return f"request body over {self.max_bytes} bytes"

    @staticmethod
    def _announced(scope: Scope) -> int:
        for name, value in scope["headers"]:
            if name == b"content-length":
                return int(value) if value.isdigit() else 0  # the server refuses a malformed length
        return 0

    def _counted(self, receive: Receive) -> Receive:
        received = 0

        async def counting() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    # A Starlette HTTPException passes through FastAPI's body parsing untouched,
                    # and the app's handlers answer it as 413 `payload_too_large`.
                    raise HTTPException(413, self._message())
            return message

        return counting
