"""Key moments: the changes a follower hears about at once, and how the log says which they are.

A goal, a red card, a wicket is pushed at once with an alert; its retraction is pushed at once
without one (the corrected score replaces the wrong one). Whether a provider log entry is such a
moment is read off the entry itself, never from what one ingest attempt happened to insert: a
watch retried after its worker died has the same entries to look at as the attempt that wrote
them, so the devices are told the same thing either way.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from domain.frozen import Frozen

Side = Literal["home", "away"]

ALERTING_KINDS = frozenset(
    {
        "goal",
        "own_goal",
        "penalty_goal",
        "red_card",
        "second_yellow",
        "wicket",
        "fifty",
        "hundred",
        "innings_end",
    }
)
"""Moments a follower wants to hear about at once, with an alert (design §5). The football ones
and `wicket` are also the provider item types (`ItemType`) that make a log entry a moment; a
cricket ball's `milestone` (a batter's fifty or hundred) is one too; `innings_end` comes from the
state moving on (`domain.push_plan`)."""

MILESTONES = frozenset({"fifty", "hundred"})

MOMENT_ENTRY_KINDS = ("event", "amendment", "retraction")
"""The log entry kinds `entry_moment` may find a moment in (the others never hold one)."""

RETRACTION = "retraction"
"""A moment taken back (VAR, a desk's undo, a provider's removal): pushed at once, never alerted."""


class KeyMoment(Frozen):
    """One key moment: what happened, for which side, in which minute."""

    kind: Annotated[str, Field(min_length=1, max_length=40)]
    """One of `ALERTING_KINDS`, or `retraction`."""
    side: Side | None = None
    minute: Annotated[int, Field(ge=0, le=999)] | None = None

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, value: Any) -> Any:
        """Histories recorded before this type carry moments as text: `goal:home`, `retraction:goal`."""
        if not isinstance(value, str):
            return value
        kind, _, qualifier = value.partition(":")
        side = qualifier if qualifier in ("home", "away") else None
        return {"kind": kind or "unknown", "side": side}

    @property
    def alerting(self) -> bool:
        return self.kind in ALERTING_KINDS


def entry_moment(kind: str, body: Mapping[str, Any]) -> KeyMoment | None:
    """The key moment one provider log entry records, if any.

    - an `event` of a key type that is not rescinded;
    - an `amendment` that turned an item into a key type, or restored a retracted one;
    - a `retraction` of a key type (the correction is pushed; the original alert never again).
    """
    if kind == "amendment":
        item_type = body.get("type") or (body.get("after") or {}).get("type")
        changed = body.get("changed") or ()
        if item_type in ALERTING_KINDS and ("type" in changed or body.get("restored")):
            return KeyMoment(kind=item_type, side=_side(body))
        return None
    item_type = body.get("type")
    if kind == "event" and item_type != "wicket" and body.get("milestone") in MILESTONES:
        return KeyMoment(kind=body["milestone"], side=_side(body))
    if item_type not in ALERTING_KINDS:
        return None
    if kind == "event":
        return None if body.get("rescinded") else KeyMoment(kind=item_type, side=_side(body))
    if kind == "retraction":
        return KeyMoment(kind=RETRACTION)
    return None


def moments_of(entries: Iterable[tuple[str, Mapping[str, Any]]]) -> tuple[KeyMoment, ...]:
    """The key moments of `(kind, body)` entries, in log order."""
    return tuple(moment for kind, body in entries if (moment := entry_moment(kind, body)) is not None)


def _side(body: Mapping[str, Any]) -> Side | None:
    side = body.get("side")
    return side if side in ("home", "away") else None
