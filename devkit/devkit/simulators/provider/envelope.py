"""SportMonks response bodies: the data envelope, the "No result(s)" quirk and the error shapes.

Shapes follow provider-api.md Part 2: `data` plus `subscription` (an array), `rate_limit` and
`timezone`; `pagination` before `subscription` on paginated endpoints; an empty result is HTTP 200
with a message and **no** `data` key; errors are `{"message", "code"?, "link"?}`.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

from devkit.simulators.provider.endpoints import FIXTURE_ENTITY
from devkit.simulators.provider.ratelimit import Quota
from devkit.simulators.provider.timemap import format_datetime

NO_RESULTS_MESSAGE = (
    "No result(s) found matching your request. Either the query did not return any results or "
    "you don't have access to it via your current subscription."
)
OTHER_EXCEPTIONS_LINK = "https://docs.sportmonks.com/football/api/response-codes/other-exceptions"
FILTERING_EXCEPTIONS_LINK = (
    "https://docs.sportmonks.com/football/api/response-codes/filtering-and-complexity-exceptions"
)
RATE_LIMIT_CODE = 5005
SUBSCRIPTION_DAYS = 365


@dataclass(frozen=True)
class Found:
    """Data to send: a fixture object or a list, with `pagination` on paginated endpoints."""

    data: dict[str, Any] | list[dict[str, Any]]
    pagination: dict[str, Any] | None = None


@dataclass(frozen=True)
class NoResults:
    """Nothing matched: HTTP 200 with the "No result(s)" message and no `data`."""


@dataclass(frozen=True)
class ApiError:
    """A request the real API rejects, with its status and body."""

    status: int
    body: dict[str, Any]


Outcome = Found | NoResults | ApiError


def subscription_block(now: float) -> list[dict[str, Any]]:
    """The `subscription` array of a paid plan, current as of epoch `now`."""
    return [
        {
            "meta": {
                "trial_ends_at": None,
                "ends_at": format_datetime(now + SUBSCRIPTION_DAYS * 86400),
                "current_timestamp": int(now),
            },
            "plans": [{"plan": "Football Enterprise Plan", "sport": "Football", "category": "Standard"}],
            "add_ons": [],
            "widgets": [],
        }
    ]


def rate_limit_block(quota: Quota) -> dict[str, Any]:
    """The `rate_limit` object."""
    return {
        "resets_in_seconds": quota.resets_in_seconds,
        "remaining": quota.remaining,
        "requested_entity": FIXTURE_ENTITY,
    }


def envelope(outcome: Found | NoResults, quota: Quota, now: float) -> dict[str, Any]:
    """The full body for data or an empty result."""
    body: dict[str, Any]
    if isinstance(outcome, Found):
        body = {"data": outcome.data}
        if outcome.pagination is not None:
            body["pagination"] = outcome.pagination
    else:
        body = {"message": NO_RESULTS_MESSAGE}
    body["subscription"] = subscription_block(now)
    body["rate_limit"] = rate_limit_block(quota)
    body["timezone"] = "UTC"
    return body


def rate_limited_body(quota: Quota) -> dict[str, Any]:
    """The 429 body (provider-api.md §5.2) plus the `rate_limit` block that counts down."""
    return {
        "message": "You have reached your rate limit",
        "code": RATE_LIMIT_CODE,
        "link": OTHER_EXCEPTIONS_LINK,
        "reset_code": secrets.token_hex(16),
        "rate_limit": rate_limit_block(quota),
    }


def unauthenticated_body() -> dict[str, Any]:
    """The 401 body for a missing or wrong token."""
    return {"message": "Unauthenticated."}


def endpoint_not_found_body() -> dict[str, Any]:
    """The 404 body for a path the API does not have."""
    return {"message": "The requested endpoint does not exist"}


def status_body(status: int) -> dict[str, Any]:
    """A body for an injected status: its reason phrase as the message."""
    try:
        return {"message": HTTPStatus(status).phrase}
    except ValueError:
        return {"message": f"HTTP {status}"}


def bad_request(message: str) -> ApiError:
    """A 400 for a parameter the API rejects."""
    return ApiError(status=400, body={"message": message, "link": FILTERING_EXCEPTIONS_LINK})
