"""Which provider log entries are key moments, read off the entries themselves (pure).

A follower hears about a goal, a red card or its retraction at once and with an alert. Whether an
entry is such a moment is decided from what the log stores, never from what one ingest attempt
happened to insert: a watch retried after its worker died has the same entries to look at as the
attempt that wrote them, so the devices are told the same thing either way.

A moment is written `kind:qualifier` (`goal:home`, `red_card:away`, `retraction:goal`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

KEY_ITEM_TYPES = frozenset({"goal", "own_goal", "penalty_goal", "red_card", "second_yellow"})
"""Provider item types that are key moments (design §5)."""


def entry_moment(kind: str, body: Mapping[str, Any]) -> str | None:
    """The key moment one provider log entry records, if any.

    - an `event` of a key type that is not rescinded;
    - an `amendment` that turned an item into a key type, or restored a retracted one;
    - a `retraction` of a key type (the correction is pushed; the original alert never again).
    """
    if kind == "amendment":
        item_type = body.get("type") or (body.get("after") or {}).get("type")
        changed = body.get("changed") or ()
        if item_type in KEY_ITEM_TYPES and ("type" in changed or body.get("restored")):
            return f"{item_type}:{body.get('side')}"
        return None
    item_type = body.get("type")
    if item_type not in KEY_ITEM_TYPES:
        return None
    if kind == "event":
        return None if body.get("rescinded") else f"{item_type}:{body.get('side')}"
    if kind == "retraction":
        return f"retraction:{item_type}"
    return None


def moments_of(entries: Iterable[tuple[str, Mapping[str, Any]]]) -> tuple[str, ...]:
    """The key moments of `(kind, body)` entries, in log order."""
    return tuple(moment for kind, body in entries if (moment := entry_moment(kind, body)) is not None)
