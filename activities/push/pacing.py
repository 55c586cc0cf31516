"""Per-activity pacing for the fan-out: whether one Live Activity gets a push now.

The workflow decides how loud a change is (`domain.push_plan`); here each activity's last sent
state decides whether it still needs it: never older than what it shows, routine updates at most
one per `LA_MIN_UPDATE_INTERVAL`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from domain.pushes import PushInput


@dataclass(frozen=True)
class LastSent:
    """What one activity was last sent (from its `live_activity` row)."""

    version: int | None = None
    timestamp: int | None = None
    routine_at: float | None = None
    """Epoch seconds of the last routine update."""


@dataclass(frozen=True)
class Decision:
    """`send` now, drop as `stale`, or `wait` until `until` (epoch seconds) and ask again."""

    action: Literal["send", "stale", "wait"]
    until: float | None = None


SEND = Decision("send")
STALE = Decision("stale")


def decide(last: LastSent, push: PushInput, now: float, min_interval: float) -> Decision:
    """Whether one activity gets `push` now.

    An equal version is neither stale nor made to wait: it is this very push, reserved by an
    earlier attempt, and the `effect_log` gate decides whether it still has to go.
    """
    if last.version is not None and push.state.version < last.version:
        return STALE
    if last.timestamp is not None and push.timestamp < last.timestamp:
        return STALE
    due = None if last.routine_at is None else last.routine_at + min_interval
    if push.routine and due is not None and now < due and last.version != push.state.version:
        return Decision("wait", due)
    return SEND
