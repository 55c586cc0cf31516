"""How often and how loudly a Live Activity hears about a change (pure, safe in a workflow).

Apple gives each device a budget of priority-10 Live Activity pushes and drops updates over it
silently; priority 5 costs nothing but may be delayed. So (design §5):

- a key moment (goal, red card, wicket, a batter's fifty or hundred, the end of an innings) goes
  at once, priority 10, with an alert;
- a period change (kick-off of the second half, half time, full time) or a correction goes at once,
  priority 10, without an alert;
- anything else (the minute ticking, a corner) is routine: priority 5, and coalesced to at most one
  per `LA_MIN_UPDATE_INTERVAL` per activity, always carrying the latest state;
- a device never gets a state older than the one it shows (lower version or earlier timestamp).

The match workflow builds each push here (pure, so it lives with the workflows); the fan-out's
per-activity pacing (`activities.push.pacing.decide`) enforces the interval and the ordering.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from domain.moments import RETRACTION, KeyMoment
from domain.progress import IngestSummary, MatchProgress
from domain.pushes import LiveState, Priority, PushInput
from domain.snapshot import MatchState

INNINGS_STATES = frozenset(
    {
        MatchState.INNINGS_1.value,
        MatchState.INNINGS_2.value,
        MatchState.INNINGS_3.value,
        MatchState.INNINGS_4.value,
    }
)
INNINGS_OVER_STATES = INNINGS_STATES | {MatchState.INNINGS_BREAK.value, MatchState.FINISHED.value}
"""Where a cricket match goes when an innings ends (a lunch, tea or stumps interval only pauses it)."""


@dataclass(frozen=True)
class Pace:
    """How one change is pushed."""

    priority: Priority
    alert: bool
    routine: bool
    moment: KeyMoment | None = None


def pace(
    previous_state: str, state: str, key_moments: Sequence[KeyMoment], minute: int | None = None
) -> Pace:
    """Classify a change from its key moments; the moment shown carries the change's minute."""
    moments = [moment.model_copy(update={"minute": minute}) for moment in key_moments]
    if previous_state in INNINGS_STATES and state != previous_state and state in INNINGS_OVER_STATES:
        moments.append(KeyMoment(kind="innings_end"))
    key = [moment for moment in moments if moment.alerting]
    if key:
        # One alert per change: the ball's own moment (the last ball's wicket) says more than the
        # innings end it brought, which the content-state's phase and the alert's title still show.
        chosen = next((moment for moment in reversed(key) if moment.kind != "innings_end"), key[-1])
        return Pace(priority=10, alert=True, routine=False, moment=chosen)
    retraction = next((moment for moment in moments if moment.kind == RETRACTION), None)
    if retraction is not None:
        # The corrected state must replace the wrong one now, but the original alert is never repeated.
        return Pace(priority=10, alert=False, routine=False, moment=retraction)
    if state != previous_state:
        return Pace(priority=10, alert=False, routine=False)
    return Pace(priority=5, alert=False, routine=True)


def update_push(fixture_id: int, previous: MatchProgress, summary: IngestSummary, at: datetime) -> PushInput:
    """The `update` push for one material change; `event_key` is the new scoreboard version."""
    moments = summary.key_moments
    if summary.home < previous.home or summary.away < previous.away:
        # A score that goes down is a correction even before the provider's retraction arrives.
        moments = (*moments, KeyMoment(kind=RETRACTION))
    paced = pace(previous.state.value, summary.state.value, moments, summary.minute)
    return PushInput(
        fixture_id=fixture_id,
        event_key=f"v{summary.version}",
        kind="update",
        priority=paced.priority,
        state=live_state(summary.progress),
        moment=paced.moment,
        alert=paced.alert,
        routine=paced.routine,
        timestamp=int(at.timestamp()),
        trace_id=summary.trace_id,
    )


def start_push(
    fixture_id: int, progress: MatchProgress, at: datetime, trace_id: str | None = None
) -> PushInput:
    """Push-to-start for every follower at kick-off (priority 10; a start always carries an alert)."""
    return PushInput(
        fixture_id=fixture_id,
        event_key="kickoff",
        kind="start",
        priority=10,
        state=live_state(progress),
        alert=True,
        timestamp=int(at.timestamp()),
        trace_id=trace_id,
    )


def end_push(fixture_id: int, progress: MatchProgress, at: datetime) -> PushInput:
    """The final state with a "Full time" alert; the activity is dismissed after `dismiss_after_seconds`."""
    return PushInput(
        fixture_id=fixture_id,
        event_key="full_time",
        kind="end",
        priority=10,
        state=live_state(progress),
        alert=True,
        timestamp=int(at.timestamp()),
    )


def live_state(progress: MatchProgress) -> LiveState:
    return LiveState(
        home=progress.home,
        away=progress.away,
        state=progress.state.value,
        minute=progress.minute,
        version=progress.version,
        cricket=progress.cricket,
    )
