"""Whether a device would act on a payload: the checks APNs itself does not make.

APNs accepts any JSON body under the size limit; ActivityKit on the phone then drops, silently,
a Live Activity push whose `aps` is incomplete (forum threads 776165, 777566, 799195). These rules
name why, so the simulator can either reject the push (strict mode) or note it in the journal.
The reason strings are the simulator's own; Apple has none for these cases.
"""

from __future__ import annotations

import json
import time
from typing import Any, TypeGuard

EVENTS = frozenset({"start", "update", "end"})
# ActivityKit ignores timestamps further ahead than this; far-future values usually mean
# milliseconds were sent where seconds are expected.
MAX_FUTURE_S = 8 * 60 * 60
_DATE_KEYS = ("stale-date", "dismissal-date")


def parse_payload(body: bytes) -> tuple[Any, str | None]:
    """The decoded JSON body, or None and `InvalidPayload` when it is not a JSON object."""
    try:
        payload = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None, "InvalidPayload"
    if not isinstance(payload, dict):
        return payload, "InvalidPayload"
    return payload, None


def live_activity_problem(payload: dict[str, Any], now: float | None = None) -> str | None:
    """The first reason ActivityKit would drop this `liveactivity` payload, or None if usable."""
    now = time.time() if now is None else now
    aps = payload.get("aps")
    if not isinstance(aps, dict):
        return "MissingAps"
    timestamp = aps.get("timestamp")
    if not _is_number(timestamp):
        return "MissingTimestamp"
    if timestamp > now + MAX_FUTURE_S:
        return "BadTimestamp"
    event = aps.get("event")
    if event not in EVENTS:
        return "BadEvent"
    # `end` may omit the final state, but any state sent must decode into the app's ContentState.
    if (event != "end" or "content-state" in aps) and not isinstance(aps.get("content-state"), dict):
        return "MissingContentState"
    if event == "start":
        attributes_type = aps.get("attributes-type")
        if not isinstance(attributes_type, str) or not attributes_type:
            return "MissingAttributesType"
        if not isinstance(aps.get("attributes"), dict):
            return "MissingAttributes"
        if "alert" not in aps:
            return "MissingAlert"
    if "alert" in aps and not isinstance(aps["alert"], dict | str):
        return "BadAlert"
    if any(key in aps and not _is_number(aps[key]) for key in _DATE_KEYS):
        return "BadDate"
    if "relevance-score" in aps and not _is_number(aps["relevance-score"]):
        return "BadRelevanceScore"
    return None


def is_update_older_than(payload: dict[str, Any], last_timestamp: float | None) -> bool:
    """An `update` older than the newest one already delivered is discarded by the device."""
    aps = payload.get("aps")
    if last_timestamp is None or not isinstance(aps, dict) or aps.get("event") != "update":
        return False
    timestamp = aps.get("timestamp")
    return _is_number(timestamp) and timestamp < last_timestamp


def timestamp_of(payload: dict[str, Any]) -> float | None:
    """`aps.timestamp` when it is a number."""
    aps = payload.get("aps")
    timestamp = aps.get("timestamp") if isinstance(aps, dict) else None
    return float(timestamp) if _is_number(timestamp) else None


def _is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)
