"""Pages of a list result, by `page` (offset) or `cursor`, and the `pagination` object.

The real API moved from `next_page` URLs to opaque `next_cursor` values (2026-06-05) and accepts
both. A request that pages with `page` gets `next_page`; any other (first request, or `cursor`)
gets `next_cursor`, so clients meet both forms. `per_page` defaults to 25 and is capped at 50.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping, Sequence
from typing import Any

from starlette.datastructures import URL

from devkit.simulators.provider.envelope import Found, NoResults, Outcome, bad_request

DEFAULT_PER_PAGE = 25
MAX_PER_PAGE = 50


def encode_cursor(offset: int) -> str:
    """An opaque cursor for the row at `offset` (base64 of JSON, like the real ones)."""
    return base64.urlsafe_b64encode(json.dumps([offset]).encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> int | None:
    """The offset a cursor points at; None if it is not one of ours."""
    try:
        value = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], int) and value[0] >= 0:
        return int(value[0])
    return None


def _positive(text: str | None, default: int) -> int | None:
    if text is None:
        return default
    try:
        value = int(text)
    except ValueError:
        return None
    return value if value >= 1 else None


def paginate(items: Sequence[dict[str, Any]], params: Mapping[str, str], url: URL) -> Outcome:
    """The page of `items` the query asks for.

    Args:
        items: The whole result, in order.
        params: The request's query parameters.
        url: The request URL, from which `next_page` is built.
    """
    per_page = _positive(params.get("per_page"), DEFAULT_PER_PAGE)
    if per_page is None:
        return bad_request("The per_page parameter must be a positive integer.")
    per_page = min(per_page, MAX_PER_PAGE)
    page: int | None = None
    if "cursor" in params:
        offset = decode_cursor(params["cursor"])
        if offset is None:
            return bad_request("The cursor parameter is invalid.")
    elif "page" in params:
        page = _positive(params["page"], 1)
        if page is None:
            return bad_request("The page parameter must be a positive integer.")
        offset = (page - 1) * per_page
    else:
        offset = 0

    rows = list(items[offset : offset + per_page])
    if not rows:
        return NoResults()
    has_more = offset + per_page < len(items)
    pagination: dict[str, Any] = {
        "count": len(rows),
        "per_page": per_page,
        "current_page": offset // per_page + 1,
    }
    if page is not None:
        pagination["next_page"] = str(url.include_query_params(page=page + 1)) if has_more else None
    else:
        pagination["next_cursor"] = encode_cursor(offset + per_page) if has_more else None
    pagination["has_more"] = has_more
    return Found(data=rows, pagination=pagination)
