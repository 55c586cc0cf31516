"""Everything the provider client raises to its callers: one `ProviderError` hierarchy.

Callers (activities, the poller) decide what to do by type, never by message: a
`ProviderRateLimited` says *when* to come back, a `ProviderAuthError` will not heal by retrying, a
`ProviderUnavailable` might. No httpx or JSON exception ever leaves the client.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from activities.provider.normaliser import ProviderPayloadError

UnavailableReason = Literal["breaker_open", "retries_exhausted", "transport"]


class ProviderError(Exception):
    """Base of every failure the provider client reports.

    It deliberately has no `__init__` of its own, so `ProviderPayloadInvalid` can also be the
    normaliser's `ProviderPayloadError` (whose constructor it then uses).
    """


class ProviderUnavailable(ProviderError):
    """The provider could not be reached or kept failing; trying later may succeed.

    Attributes:
        endpoint: The endpoint name (`livescores/inplay`, `fixtures/{id}`, ...).
        reason: `breaker_open` (no request was sent), `retries_exhausted` (every attempt failed
            with a transient error) or `transport` (a non-retryable client-side HTTP error).
        attempts: Requests actually sent for this call.
        detail: The last failure, in words, for logs.
    """

    def __init__(
        self, endpoint: str, reason: UnavailableReason, *, attempts: int = 0, detail: str = ""
    ) -> None:
        super().__init__(endpoint, reason, attempts, detail)
        self.endpoint = endpoint
        self.reason: UnavailableReason = reason
        self.attempts = attempts
        self.detail = detail

    def __str__(self) -> str:
        suffix = f": {self.detail}" if self.detail else ""
        return f"provider unavailable for {self.endpoint} ({self.reason}, {self.attempts} attempts){suffix}"


class ProviderRateLimited(ProviderError):
    """The provider's request budget is spent until `retry_at`; no request is sent before then.

    Attributes:
        endpoint: The endpoint that was asked for.
        retry_at: When requests may be sent again (UTC).
        sent: True for the call whose request got the 429, False for calls refused locally.
    """

    def __init__(self, endpoint: str, retry_at: datetime, *, sent: bool = False) -> None:
        super().__init__(endpoint, retry_at, sent)
        self.endpoint = endpoint
        self.retry_at = retry_at
        self.sent = sent

    def __str__(self) -> str:
        return f"provider rate limit reached ({self.endpoint}); retry at {self.retry_at.isoformat()}"


class ProviderBudgetSpent(ProviderError):
    """Our own hourly budget for the entity has no call to spare for this one; nothing was sent.

    A deferrable call (a reconcile) is refused first, so the live board keeps its share: the caller
    tries again at its next turn, which stretches its interval instead of meeting a 429.

    Attributes:
        endpoint: The endpoint that was asked for.
        entity: The provider entity whose budget is short.
        priority: The call's priority (`board`, `urgent`, `deferrable`).
    """

    def __init__(self, endpoint: str, entity: str, priority: str) -> None:
        super().__init__(endpoint, entity, priority)
        self.endpoint = endpoint
        self.entity = entity
        self.priority = priority

    def __str__(self) -> str:
        return f"hourly budget of {self.entity} has no {self.priority} call to spare ({self.endpoint})"


class ProviderAuthError(ProviderError):
    """The provider rejected the token (HTTP 401). Retrying cannot help; fix `PROVIDER_TOKEN`."""

    def __init__(self, endpoint: str, message: str | None = None) -> None:
        super().__init__(endpoint, message)
        self.endpoint = endpoint
        self.message = message

    def __str__(self) -> str:
        return f"provider rejected the token ({self.endpoint}): {self.message or 'HTTP 401'}"


class ProviderRequestError(ProviderError):
    """The provider refused the request itself (400, 403, 404, ...): a bug or a plan limit.

    Attributes:
        endpoint: The endpoint that was asked for.
        status: The HTTP status.
        message: The provider's `message`, if the body had one.
        code: The provider's numeric `code` (e.g. 5002 "include not in plan"), if any.
    """

    def __init__(
        self, endpoint: str, status: int, message: str | None = None, code: int | None = None
    ) -> None:
        super().__init__(endpoint, status, message, code)
        self.endpoint = endpoint
        self.status = status
        self.message = message
        self.code = code

    def __str__(self) -> str:
        return f"provider refused {self.endpoint} with HTTP {self.status}: {self.message or '-'}"


class ProviderPayloadInvalid(ProviderError, ProviderPayloadError):
    """A well-formed JSON answer that is not what the endpoint promises (not an envelope, bad `data`).

    It is both a `ProviderError` and the normaliser's `ProviderPayloadError` (same attributes:
    `path`, `reason`, `code`, `index`, `fixture_id`), so either `except` clause catches it.
    """

    @classmethod
    def wrap(cls, error: ProviderPayloadError) -> ProviderPayloadInvalid:
        """The same fault, as a member of the client's hierarchy."""
        return cls(error.path, error.reason, error.code, error.index, error.fixture_id)


__all__ = [
    "ProviderAuthError",
    "ProviderError",
    "ProviderPayloadError",
    "ProviderPayloadInvalid",
    "ProviderRateLimited",
    "ProviderRequestError",
    "ProviderUnavailable",
    "UnavailableReason",
]
