"""The SportMonks response envelope, checked once so the rest of the client can trust its shape.

Football v3: `{"data": ..., "pagination"?: ..., "subscription": [...], "rate_limit": {...}, "timezone":
"UTC"}`; an empty result is HTTP 200 with a `message` and **no** `data` (provider-api.md §5.3), which is
an empty result here, not an error. Cricket v2: `{"data": ...}`, lists paginated the Laravel way
(`links`, `meta: {current_page, last_page, per_page, total}`), no rate-limit block. Anything else that decodes as JSON but is not an envelope is a
`ProviderPayloadInvalid`. Unknown keys are ignored (the provider adds fields over time).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from activities.provider.errors import ProviderPayloadInvalid
from activities.provider.ratelimit import remaining_calls


@dataclass(frozen=True)
class Pagination:
    """Where a paginated list goes next: a cursor (2026+) or a page URL (older), while `has_more`."""

    has_more: bool
    next_cursor: str | None = None
    next_page: str | None = None
    current_page: int | None = None


@dataclass(frozen=True)
class Envelope:
    """One decoded answer.

    Attributes:
        endpoint: The endpoint name it answers.
        data: The `data` value: a list for list endpoints, an object for single-object ones; None
            for the "No result(s) found" answer.
        message: The provider's `message` (present on the empty answer).
        pagination: On paginated endpoints.
        rate_limit_remaining: Calls left in the provider's hourly window, if reported.
        attempts: Requests it took (1 unless retried).
        body: The HTTP body it was decoded from, as received (the shared live board passes it on
            to other workers as it is, without encoding it again).
    """

    endpoint: str
    data: list[Any] | dict[str, Any] | None
    message: str | None = None
    pagination: Pagination | None = None
    rate_limit_remaining: int | None = None
    attempts: int = 1
    body: bytes | None = field(default=None, repr=False, compare=False)

    @property
    def items(self) -> list[Any]:
        """`data` as a list: empty for no results, one element for a single-object endpoint."""
        if self.data is None:
            return []
        return [self.data] if isinstance(self.data, dict) else list(self.data)


def parse_envelope(endpoint: str, body: object, attempts: int = 1) -> Envelope:
    """Check a decoded 200 body and wrap it.

    Raises:
        ProviderPayloadInvalid: the body is not an envelope.
    """
    if not isinstance(body, Mapping):
        raise ProviderPayloadInvalid(
            "", f"expected a JSON object, got {type(body).__name__}", "envelope_type"
        )
    message = body.get("message")
    message = message if isinstance(message, str) else None
    if "data" not in body:
        if message is None:
            raise ProviderPayloadInvalid("data", "the response has neither data nor a message", "missing")
        data: list[Any] | dict[str, Any] | None = None
    else:
        raw = body["data"]
        if not isinstance(raw, list | dict):
            raise ProviderPayloadInvalid(
                "data", f"expected a list or an object, got {type(raw).__name__}", "data_type"
            )
        data = raw
    return Envelope(
        endpoint=endpoint,
        data=data,
        message=message,
        pagination=_pagination(body.get("pagination")) or _laravel_pagination(body.get("meta")),
        rate_limit_remaining=remaining_calls(body),
        attempts=attempts,
    )


def _pagination(raw: object) -> Pagination | None:
    if raw is None:
        return None
    if not isinstance(raw, Mapping) or not isinstance(raw.get("has_more"), bool):
        raise ProviderPayloadInvalid("pagination", "expected an object with a boolean has_more", "pagination")
    cursor, page, current = raw.get("next_cursor"), raw.get("next_page"), raw.get("current_page")
    return Pagination(
        has_more=raw["has_more"],
        next_cursor=cursor if isinstance(cursor, str) and cursor else None,
        next_page=page if isinstance(page, str) and page else None,
        current_page=current if isinstance(current, int) and not isinstance(current, bool) else None,
    )


def _laravel_pagination(raw: object) -> Pagination | None:
    """Cricket v2's `meta` block; more pages while `current_page < last_page`."""
    if raw is None:
        return None
    current = raw.get("current_page") if isinstance(raw, Mapping) else None
    last = raw.get("last_page") if isinstance(raw, Mapping) else None
    if not isinstance(current, int) or isinstance(current, bool) or not isinstance(last, int):
        raise ProviderPayloadInvalid("meta", "expected integer current_page and last_page", "pagination")
    return Pagination(has_more=current < last, current_page=current)
