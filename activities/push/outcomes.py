"""What the sender does with each APNs answer (pure): Apple's response table, as one function.

Source: Apple's "Handling notification responses from APNs" and the notes in
/work/shared/apns.md §3. Reasons that concern every push alike (our key, topic or request shape)
stop the whole fan-out instead of being repeated thousands of times: APNs disconnects providers
that keep producing errors.
"""

from __future__ import annotations

from enum import StrEnum


class Verdict(StrEnum):
    SENT = "sent"
    """200: APNs accepted it."""
    DEACTIVATE = "deactivate"
    """The token is dead (400 BadDeviceToken, 410 Unregistered/ExpiredToken): never use it again."""
    TRIM = "trim"
    """413: send a smaller version of the payload."""
    REFRESH_TOKEN = "refresh_token"
    """403 ExpiredProviderToken: mint a new provider JWT (at most once per 20 minutes) and retry."""
    NEW_CONNECTION = "new_connection"
    """429 TooManyProviderTokenUpdates: that connection is unusable for a while; retry on another."""
    THROTTLED = "throttled"
    """429 TooManyRequests: too many pushes to this token; back off the token, slow the batch."""
    RETRY = "retry"
    """5xx, IdleTimeout: APNs trouble; retry with backoff."""
    REJECT = "reject"
    """This push can never be delivered as it is; do not retry it."""
    CONFIG_ERROR = "config_error"
    """Our key, team, topic or request shape is wrong: every push would fail; stop and alert."""


DEAD_TOKEN_REASONS = frozenset({"BadDeviceToken", "Unregistered", "ExpiredToken"})

CONFIG_REASONS = frozenset(
    {
        "BadTopic",
        "MissingTopic",
        "TopicDisallowed",
        "InvalidPushType",
        "BadPriority",
        "BadExpirationDate",
        "BadMessageId",
        "BadCollapseId",
        "DuplicateHeaders",
        "MissingDeviceToken",
        "PayloadEmpty",
        "BadPath",
        "MethodNotAllowed",
        "InvalidProviderToken",
        "MissingProviderToken",
        "UnrelatedKeyIdInToken",
        "BadEnvironmentKeyIdInToken",
        "BadCertificate",
        "BadCertificateEnvironment",
        "Forbidden",
    }
)


def classify(status: int, reason: str | None) -> Verdict:
    """The action for one APNs answer."""
    if status == 200:
        return Verdict.SENT
    if reason in DEAD_TOKEN_REASONS or status == 410:
        return Verdict.DEACTIVATE
    if status == 413:
        return Verdict.TRIM
    if status == 429:
        return Verdict.NEW_CONNECTION if reason == "TooManyProviderTokenUpdates" else Verdict.THROTTLED
    if status == 403 and reason == "ExpiredProviderToken":
        return Verdict.REFRESH_TOKEN
    if status >= 500 or reason == "IdleTimeout":
        return Verdict.RETRY
    if reason in CONFIG_REASONS or status in (403, 404, 405):
        return Verdict.CONFIG_ERROR
    # e.g. DeviceTokenNotForTopic: the token belongs to another app or attributes type. Not
    # deactivated (a wrong topic in our settings would otherwise wipe every token), not retried.
    return Verdict.REJECT
