"""The messages of the Live Activity publish activity (`publish_live_activity_push`).

Pure pydantic, safe to import in a workflow. The input is small on purpose: the activity finds the
targets (followers or activities) in Postgres and the team names on the fixture row, so history
holds a score line and a few flags, never a device list or a payload.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from domain.cricket.live import CricketLine
from domain.frozen import Frozen
from domain.moments import KeyMoment

PushKind = Literal["start", "update", "end"]
"""`start`: push-to-start to every follower; `update`: new state to running activities; `end`: final
state (at full time, or when a generation is renewed or stops for the night)."""

Priority = Literal[5, 10]
"""APNs priority: 10 delivers now and spends the device's Live Activity budget, 5 is opportunistic."""

EventKey = Annotated[str, Field(min_length=1, max_length=200, pattern=r"^[A-Za-z0-9:._-]+$")]


class LiveState(Frozen):
    """What the scoreboard shows; the activity adds the team names from the fixture row."""

    home: Annotated[int, Field(ge=0)] = 0
    away: Annotated[int, Field(ge=0)] = 0
    state: Annotated[str, Field(min_length=1, max_length=40)]
    """The normalised match state (`live_first_half`, `half_time`, `finished` …)."""
    minute: Annotated[int, Field(ge=0, le=999)] | None = None
    detail: Annotated[str, Field(max_length=1000)] | None = None
    """One optional line under the score, e.g. a cricket innings `187/4 (20 ov)`."""
    version: Annotated[int, Field(ge=0)]
    """The scoreboard version (last log seq): orders states, so an older one is never shown after a newer."""
    cricket: CricketLine | None = None
    """A cricket match's line: batting score and overs, batters, bowler, last six, the chase."""


class PushInput(Frozen):
    """One Live Activity push for every target of a fixture (docs/live-activities.md).

    `(fixture_id, event_key, kind)` names it: publishing it again (a retry, a replay) changes nothing.
    """

    fixture_id: Annotated[int, Field(ge=1)]
    event_key: EventKey
    """Stable name of what caused the push: `kickoff`, `v42` (scoreboard version), `full_time` …"""
    kind: PushKind
    priority: Priority = 5
    state: LiveState
    moment: KeyMoment | None = None
    """Shown as the content-state's `lastMoment`; with `alert`, it is also what the alert says."""
    alert: bool = False
    """Light the screen up with an alert. Always sent on `start` (Apple requires one there)."""
    routine: bool = False
    """A routine change: coalesced to one per `LA_MIN_UPDATE_INTERVAL` per activity (latest state wins)."""
    timestamp: Annotated[int, Field(ge=0)]
    """When the change happened (`workflow.now()`, epoch seconds); its `aps.timestamp` is this or,
    if the fixture published a later one already, one second after that."""
    stale_after_seconds: Annotated[int, Field(ge=1, le=8 * 3600)] = 900
    """`stale-date` = timestamp + this, on `start` and `update`."""
    dismiss_after_seconds: Annotated[int, Field(ge=0, le=4 * 3600)] = 900
    """`dismissal-date` = timestamp + this, on `end` (0 dismisses at once)."""
    trace_id: Annotated[str, Field(max_length=64)] | None = None
    """The trace of the change that caused the push (a provider poll or a desk request), so its
    log lines and `push_attempt` rows are found with the change's."""

    generation: Annotated[int, Field(ge=1)] = 1
    """Which of a follower's Live Activities for the fixture this push is for: 1 from kick-off, the
    next after each renewal (Apple ends an activity after 8 hours) or each stumps. A `start`
    starts it for every follower who has none of it, an `update` goes to the running ones of it,
    an `end` ends it (and any older one still open)."""


class Published(Frozen):
    """What one publish did: the push's stamp (its `aps.timestamp`) and how many mailboxes it moved."""

    stamp: int
    mailboxes: int = 0
