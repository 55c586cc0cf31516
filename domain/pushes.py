"""The messages of the Live Activity push activity (`push_live_activities`).

Pure pydantic, safe to import in a workflow. The input is small on purpose: the activity finds the
targets (followers or activities) in Postgres and the team names on the fixture row, so history
holds a score line and a few flags, never a device list or a payload. Fields are only ever added,
with defaults, so old histories keep decoding.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from domain.cricket.live import CricketLine
from domain.moments import KeyMoment

PushKind = Literal["start", "update", "end"]
"""`start`: push-to-start to every follower; `update`: new state to running activities; `end`: final
state (at full time, or when a generation is renewed or stops for the night)."""

Priority = Literal[5, 10]
"""APNs priority: 10 delivers now and spends the device's Live Activity budget, 5 is opportunistic."""

EventKey = Annotated[str, Field(min_length=1, max_length=200, pattern=r"^[A-Za-z0-9:._-]+$")]


class _Message(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class LiveState(_Message):
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


class PushInput(_Message):
    """One Live Activity push to every target of a fixture, sent at most once per target.

    `(fixture_id, event_key, effect)` names the push in the `effect_log` gate, where `effect` is
    `la.start`, `la.alert` (an update with an alert), `la.update` or `la.end`: running the activity
    again with the same input (a retry, a replay) sends nothing twice.
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
    """`aps.timestamp` in epoch seconds: when the change happened (`workflow.now()`), the same on every retry."""
    stale_after_seconds: Annotated[int, Field(ge=1, le=8 * 3600)] = 900
    """`stale-date` = timestamp + this, on `start` and `update`."""
    dismiss_after_seconds: Annotated[int, Field(ge=0, le=4 * 3600)] = 900
    """`dismissal-date` = timestamp + this, on `end` (0 dismisses at once)."""
    trace_id: Annotated[str, Field(max_length=64)] | None = None
    """The trace of the change that caused the push (a provider poll or a desk request), so its
    log lines and `push_attempt` rows are found with the change's."""

    @property
    def repeatable(self) -> bool:
        """A device shows it once however often it arrives (a state-only update, an end): safe to
        send again when it is unknown whether an earlier send reached APNs. An alert or a start
        would show twice."""
        return self.kind != "start" and not self.alert

    @property
    def resent_quietly(self) -> bool:
        """An end with its result alert, whose earlier send a crash left unknown: it goes again
        without the alert, once the attempt that marked it has had `CLAIMANT_GRACE_S` to settle it. An end left unsent keeps the activity on the lock screen for hours (the
        soak of 2026-12-06, seed 22: a worker SIGKILLed 0.1 s after marking 1,053 ends); sent
        twice, the phone ends the activity once, drops the second end, and shows one banner at
        most."""
        return self.kind == "end" and self.alert

    generation: Annotated[int, Field(ge=1)] = 1
    """Which of a follower's Live Activities for the fixture this push is for: 1 from kick-off, the
    next after each renewal (Apple ends an activity after 8 hours) or each stumps. A `start`
    starts it for every follower who has none of it, an `update` goes to the running ones of it,
    an `end` ends it (and any older one still open)."""

    @property
    def effect(self) -> str:
        """The `effect_log.effect` this push is gated under."""
        if self.kind == "update":
            return "la.alert" if self.alert else "la.update"
        return f"la.{self.kind}"


class PushResult(_Message):
    """Totals for this push (`fixture_id`, `event_key`, `effect`) from the ledger, over every attempt."""

    effect: str
    targets: int = 0
    """Targets with a ledger row: every device or activity the push concerned."""
    sent: int = 0
    """APNs answered 200."""
    stale: int = 0
    """Not sent: the activity already shows this or a newer state."""
    deactivated: int = 0
    """Not sent: APNs said the token is dead (400 BadDeviceToken, 410); it is never used again."""
    rejected: int = 0
    """Not sent: APNs refused the push for good (too large even trimmed, not for this topic …)."""
    in_doubt: int = 0
    """A crashed attempt had sent these and never heard back: not sent again (no double alert)."""
    deferred: int = 0
    """Routine updates this attempt waited for, to respect the per-activity minimum interval."""
