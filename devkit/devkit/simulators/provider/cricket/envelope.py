"""Cricket v2 response bodies: `{"data": …}`, Laravel pagination, and `{"message"}` errors.

Unlike Football v3 there is no `rate_limit`, `subscription` or `timezone` block, and an empty list
is `{"data": []}`, not a "No result(s)" message (cricket.md §1). Lists that page use Laravel's
paginator: `links {first, last, prev, next}` and `meta {current_page, from, last_page, path,
per_page, to, total}`, 100 rows a page. The page links keep the request's other query parameters
(filters, includes), so following `next` gives the next page of the same list; `api_token` is left
out, so a body never echoes the token (the client adds it, as to any request).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from starlette.datastructures import URL

from devkit.simulators.provider.envelope import ApiError

T = TypeVar("T")

PER_PAGE = 100
# Laravel's throttle answer (the docs promise 429 and no body beyond the message).
TOO_MANY_ATTEMPTS = "Too Many Attempts."


@dataclass(frozen=True)
class CricketFound:
    """Data to send: an object or a list, with `links` and `meta` when the list pages."""

    data: dict[str, Any] | list[dict[str, Any]]
    links: dict[str, Any] | None = None
    meta: dict[str, Any] | None = None

    def body(self) -> dict[str, Any]:
        """The response body."""
        body: dict[str, Any] = {"data": self.data}
        if self.links is not None:
            body["links"] = self.links
        if self.meta is not None:
            body["meta"] = self.meta
        return body


CricketOutcome = CricketFound | ApiError


def too_many_attempts_body() -> dict[str, Any]:
    """The 429 body: a message only, no rate-limit block."""
    return {"message": TOO_MANY_ATTEMPTS}


def not_found(message: str) -> ApiError:
    """A 404 for an id the API does not have."""
    return ApiError(status=404, body={"message": message})


def bad_request(message: str) -> ApiError:
    """A 400 for a parameter the API rejects."""
    return ApiError(status=400, body={"message": message})


def _page_number(text: str | None) -> int:
    # Laravel reads a page that is not a positive integer as page 1.
    try:
        page = int(text) if text is not None else 1
    except ValueError:
        return 1
    return max(page, 1)


@dataclass(frozen=True)
class Page(Generic[T]):
    """One page of a list: its rows and the paginator's `links` and `meta`."""

    rows: list[T]
    links: dict[str, Any]
    meta: dict[str, Any]


def paginate(items: Sequence[T], params: Mapping[str, str], url: URL) -> Page[T]:
    """The page of `items` the `page` parameter asks for (beyond the last page: no rows).

    Args:
        items: The whole result, in order.
        params: The request's query parameters.
        url: The request URL, from which the page links are built.
    """
    page = _page_number(params.get("page"))
    total = len(items)
    last_page = max(1, math.ceil(total / PER_PAGE))
    offset = (page - 1) * PER_PAGE
    rows = list(items[offset : offset + PER_PAGE])
    base = url.remove_query_params("api_token")
    path = str(base.replace(query=""))

    def link(number: int) -> str:
        return str(base.include_query_params(page=number))

    links = {
        "first": link(1),
        "last": link(last_page),
        "prev": link(page - 1) if page > 1 else None,
        "next": link(page + 1) if page < last_page else None,
    }
    meta = {
        "current_page": page,
        "from": offset + 1 if rows else None,
        "last_page": last_page,
        "path": path,
        "per_page": PER_PAGE,
        "to": offset + len(rows) if rows else None,
        "total": total,
    }
    return Page(rows=rows, links=links, meta=meta)
