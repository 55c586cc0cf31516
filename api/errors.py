"""One error body for every 4xx/5xx the API sends: `{"error": {"code", "message", "fields"?}}`.

Clients branch on `code` (machine-readable, stable) and show `message`; a validation error lists
each bad field with its path (`body.input.minute`) so a desk can point at it.

An exception no handler knows is answered by `UnhandledErrors` as a 500 `internal_error`: its text
stays in the log (it may name hosts, SQL or secrets), the client gets the trace id to quote. One
kind is not our bug: Postgres or Redis out of reach (restarting, a network cut), or every
connection of the pool busy, is a 503 `unavailable` with `Retry-After`, which every client resends
(a 500 makes the desk app give a tap up as refused).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from scoreline.logging import get_logger
from scoreline.outages import is_outage, is_pool_exhausted
from scoreline.tracing import current_trace_id

_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "payload_too_large",
    415: "unsupported_media_type",
    422: "validation_error",
    429: "too_many_requests",
    503: "unavailable",
}

log = get_logger("api.errors")

OUTAGE_RETRY_AFTER_SECONDS = 1


class ApiError(Exception):
    """Raise from a route for a precise error with a stable code."""

    def __init__(
        self, status: int, code: str, message: str, *, headers: Mapping[str, str] | None = None, **extra: Any
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = dict(headers or {})
        """Response headers, e.g. `Retry-After` on a 429."""
        self.extra = extra


class InvalidFields(StarletteHTTPException):
    """A 422 `validation_error` naming its fields, raised where FastAPI lets only a Starlette
    `HTTPException` through (an ASGI guard's `receive`, read inside FastAPI's body parsing)."""

    def __init__(self, fields: list[dict[str, str]]) -> None:
        super().__init__(422, f"invalid request: {fields[0]['path']}")
        self.fields = fields


def error_body(code: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, **extra}}


def invalid_fields_response(error: InvalidFields) -> JSONResponse:
    """The 422 body FastAPI's own validation gets, for a guard answering before any route."""
    return JSONResponse(error_body("validation_error", error.detail, fields=error.fields), status_code=422)


def _field_path(location: tuple[int | str, ...] | list[int | str]) -> str:
    return ".".join(str(part) for part in location)


async def _validation_error(_: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, RequestValidationError)
    fields = [
        {"path": _field_path(item["loc"]), "message": item["msg"], "type": item["type"]}
        for item in error.errors()
    ]
    first = fields[0]["path"] if fields else "request"
    return JSONResponse(
        error_body("validation_error", f"invalid request: {first}", fields=fields), status_code=422
    )


async def _http_error(_: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, StarletteHTTPException)
    code = _CODES.get(error.status_code, "error")
    message = error.detail if isinstance(error.detail, str) else code
    return JSONResponse(
        error_body(code, message), status_code=error.status_code, headers=getattr(error, "headers", None)
    )


async def _invalid_fields(_: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, InvalidFields)
    return invalid_fields_response(error)


async def _api_error(_: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, ApiError)
    return JSONResponse(
        error_body(error.code, error.message, **error.extra), status_code=error.status, headers=error.headers
    )


class UnhandledErrors:
    """Answers an exception that escaped every handler with a JSON 500 `internal_error`.

    Not an `Exception` handler: Starlette runs that in `ServerErrorMiddleware`, outside every user
    middleware, where the request's trace id is no longer bound and the response skips
    `TraceMiddleware` (no `X-Trace-Id`). This pure ASGI middleware sits just inside it instead. A
    response that had started already cannot be replaced; the error is logged and re-raised so the
    server aborts the connection rather than pretend the body was complete.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def watching_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, watching_send)
        except Exception as error:
            busy = is_pool_exhausted(error)
            if (busy or is_outage(error)) and not started:
                log.warning(
                    "api.pool_exhausted" if busy else "api.store_unavailable",
                    method=scope["method"],
                    path=scope["path"],
                    error=str(error)[:200],
                )
                cause = "the server is busy" if busy else "a store is out of reach"
                body = error_body("unavailable", f"{cause} right now; send the same request again")
                headers = {"Retry-After": str(OUTAGE_RETRY_AFTER_SECONDS)}
                await JSONResponse(body, status_code=503, headers=headers)(scope, receive, send)
                return
            log.exception(
                "api.unhandled_error", method=scope["method"], path=scope["path"], response_started=started
            )
            if started:
                raise
            trace_id = current_trace_id()
            message = "internal error" if trace_id is None else f"internal error (trace id {trace_id})"
            await JSONResponse(error_body("internal_error", message), status_code=500)(scope, receive, send)


def install_error_handlers(app: FastAPI) -> None:
    """The error handlers and the catch-all. Call it before adding `TraceMiddleware`: middleware
    added later wraps what was added before, and the catch-all must run inside the trace."""
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(InvalidFields, _invalid_fields)
    app.add_exception_handler(ApiError, _api_error)
    app.add_middleware(UnhandledErrors)
