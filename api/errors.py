"""One error body for every 4xx/5xx the API sends: `{"error": {"code", "message", "fields"?}}`.

Clients branch on `code` (machine-readable, stable) and show `message`; a validation error lists
each bad field with its path (`body.input.minute`) so a desk can point at it.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

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


class ApiError(Exception):
    """Raise from a route for a precise error with a stable code."""

    def __init__(self, status: int, code: str, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.extra = extra


def error_body(code: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, **extra}}


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


async def _api_error(_: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, ApiError)
    return JSONResponse(error_body(error.code, error.message, **error.extra), status_code=error.status)


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(ApiError, _api_error)
