"""Text Postgres cannot store, refused with 422 naming the field before any route sees it.

Postgres `text` and `jsonb` refuse a NUL and a lone UTF-16 surrogate. Let through, such a string
fails the write deep inside, where no answer can name it; so this guard answers 422
`validation_error` with the field's path on every route, future ones included.

It costs the command road one bytes search: UTF-8 JSON can carry these characters only as
`\\u0000` or `\\ud800`-`\\udfff` escapes, so only a body holding one is parsed and walked (an
emoji's surrogate pair or an escaped backslash is a false alarm and passes). A body in UTF-16 or
UTF-32, which the JSON parser also reads, can carry them raw, so it is always walked. The body is
checked as the route reads it, never before, so a route's token check still comes before its body.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from urllib.parse import parse_qsl

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.errors import InvalidFields, invalid_fields_response
from domain.rules.commands import is_storable

_SUSPECT_ESCAPE = re.compile(rb"\\u(?:0000|d[89a-f])", re.IGNORECASE)
_UTF8 = frozenset({"utf-8", "utf-8-sig"})
_MESSAGE = "text may not contain NUL characters or unpaired surrogates"
_TYPE = "unstorable_text"

Path = tuple[str | int, ...]


def unstorable_paths(value: object, at: Path = ()) -> Iterator[Path]:
    """The path of every string (object key or value) in a parsed JSON value Postgres cannot store."""
    if isinstance(value, str):
        if not is_storable(value):
            yield at
    elif isinstance(value, dict):
        for key, item in value.items():
            if not is_storable(key):
                yield (*at, key)
            yield from unstorable_paths(item, (*at, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from unstorable_paths(item, (*at, index))


def _fields(paths: list[str]) -> list[dict[str, str]]:
    return [{"path": path, "message": _MESSAGE, "type": _TYPE} for path in paths]


def body_fields(body: bytes) -> list[dict[str, str]]:
    """The body's unstorable fields; none unless it may hold some and parses as JSON."""
    utf8 = json.detect_encoding(body) in _UTF8
    if utf8 and _SUSPECT_ESCAPE.search(body) is None:
        return []
    try:
        parsed = json.loads(body)
    except ValueError:
        return []  # the route answers its own 422 for a body that is not JSON
    return _fields([".".join(("body", *map(str, path))) for path in unstorable_paths(parsed)])


def url_fields(scope: Scope) -> list[dict[str, str]]:
    """A NUL in the decoded path or in a query parameter (a `%00`), by where it is."""
    found = ["path"] if "\x00" in scope["path"] else []
    query: bytes = scope.get("query_string", b"")
    if b"%00" in query or b"\x00" in query:
        pairs = parse_qsl(query.decode("latin-1"), keep_blank_values=True)
        found += [f"query.{name}" for name, value in pairs if not (is_storable(name) and is_storable(value))]
    return _fields(found)


class StorableText:
    """Answers 422 for a path or query holding a NUL; raises `InvalidFields` from `receive` when the
    body a route has just read holds unstorable text (the route's own handlers answer it)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        bad_url = url_fields(scope)
        if bad_url:
            await invalid_fields_response(InvalidFields(bad_url))(scope, receive, send)
            return
        await self.app(scope, _checked(receive), send)


def _checked(receive: Receive) -> Receive:
    chunks: list[bytes] = []

    async def checking() -> Message:
        message = await receive()
        if message["type"] != "http.request":
            return message
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            bad = body_fields(chunks[0] if len(chunks) == 1 else b"".join(chunks))
            chunks.clear()
            if bad:
                raise InvalidFields(bad)
        return message

    return checking
