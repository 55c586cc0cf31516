"""What the drainer does with each APNs answer (pure): Apple's response table, as one function.

Source: Apple's "Handling notification responses from APNs" and the notes in
/work/shared/apns.md §3.
"""

from __future__ import annotations

from enum import StrEnum


class Verdict(StrEnum):
    SENT = "sent"
    """200: APNs accepted it."""
    DEACTIVATE = "deactivate"
    """The token is dead (400 BadDeviceToken, 410 Unregistered/ExpiredToken): switch it off."""
    TRIM = "trim"
    """413: send a smaller version of the payload."""
    REFRESH_TOKEN = "refresh_token"
    """403 ExpiredProviderToken: mint a new provider JWT (at most once per 20 minutes) and resend."""
    NEW_CONNECTION = "new_connection"
    """429 TooManyProviderTokenUpdates: that connection is unusable for a while; resend on another."""
    RETRY = "retry"
    """429 TooManyRequests, 5xx, IdleTimeout: not delivered for a passing reason; back off."""
    REJECT = "reject"
    """Any other 4xx: our request (key, topic, shape) is wrong; retrying unchanged cannot help."""


DEAD_TOKEN_REASONS = frozenset({"BadDeviceToken", "Unregistered", "ExpiredToken"})


def classify(status: int, reason: str | None) -> Verdict:
    """The action for one APNs answer."""
    if status == 200:
        return Verdict.SENT
    if reason in DEAD_TOKEN_REASONS or status == 410:
        return Verdict.DEACTIVATE
    if status == 413:
        return Verdict.TRIM
    if status == 429:
        return Verdict.NEW_CONNECTION if reason == "TooManyProviderTokenUpdates" else Verdict.RETRY
    if status == 403 and reason == "ExpiredProviderToken":
        return Verdict.REFRESH_TOKEN
    if status >= 500 or reason == "IdleTimeout":
        return Verdict.RETRY
    # e.g. DeviceTokenNotForTopic: not deactivated (a wrong topic in our settings would otherwise
    # wipe every token); it stays owed until the cause is fixed.
    return Verdict.REJECT
