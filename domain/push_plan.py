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

The match workflow builds each push here (pure, so it lives with the workflows); each activity's
mailbox (docs/live-activities.md) enforces the interval and the ordering.

Apple ends a Live Activity 8 hours after it started (apns.md §1.3 limits), and an ended one can
stay on the lock screen 4 hours more. An ODI or a Test day outlives that, and a Test stops
overnight. So a follower's activity for a match comes in generations (`PushInput.generation`):

- at `LA_RENEW_AFTER` (7 h 30 min) of the running generation, it is ended, dismissed at once and
  without an alert (`renew-N-end`), and the next is push-started (`renew-N+1`), within the half
  hour Apple still leaves;
- at stumps the day's generation is ended after the stumps update (`stumps-N-end`, the close of
  play shown for `STUMPS_DISMISS_AFTER_SECONDS`, then gone: nothing stale stays overnight); the
  next is push-started when play resumes (a playing or break state), carrying that change.

Budget: a push-to-start draws on the device's own start budget, "about 10 in a short window"
(apns.md §1.4, a DTS answer; `NSSupportsLiveActivitiesFrequentUpdates` does not raise it). A
follower gets one start at kick-off and then at most one per 7 h 30 min or per day of play: an ODI
(about 8 hours) costs 2 starts 7 h 30 min apart, a five-day Test 5 (one a day; 10 if every day ran
past 7 h 30 min), each hours from the last: never more than 2 in any 7 h 30 min, well inside the
budget. The generation ends are ordinary `end` pushes at priority 10 (the update budget, not the
start budget), one per generation on top of the match's updates.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from domain.moments import RETRACTION, KeyMoment
from domain.progress import IngestSummary, MatchProgress
from domain.pushes import LiveState, Priority, PushInput
from domain.snapshot import MatchState
from domain.states import BREAK_STATES, OVER_STATES, OVERNIGHT_STATES, PLAYING_STATES

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

STUMPS_DISMISS_AFTER_SECONDS = 900
"""How long the day's ended activity shows the close of play on the lock screen (then it is gone)."""

ChangeStep = Literal["update", "update_then_end_the_day", "start_next", "nothing"]
"""What a change does to the followers' activities (`after_change`)."""
CapStep = Literal["renew", "end_the_day", "nothing"]
"""What reaching `LA_RENEW_AFTER` does to the running generation (`at_the_cap`)."""


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


def after_change(state: MatchState, overnight: bool) -> ChangeStep:
    """What a change to `state` does to the followers' activities.

    Running (`overnight` False): an update; into stumps, the update then the day's `end`. Ended
    for the night: the next generation is started once play resumes (a playing or break state);
    any other change (a delay before the day's play, the result decided overnight) reaches no
    running activity, so it sends nothing.
    """
    if not overnight:
        return "update_then_end_the_day" if state in OVERNIGHT_STATES else "update"
    return "start_next" if state in PLAYING_STATES | BREAK_STATES else "nothing"


def at_the_cap(state: MatchState) -> CapStep:
    """The running generation reached `LA_RENEW_AFTER`: renew it (end it, start the next); at
    stumps only end it (the next starts when play resumes, not overnight); once the match is over,
    nothing (its final `end` is coming, unless play goes on: then it is renewed)."""
    if state in OVER_STATES:
        return "nothing"
    return "end_the_day" if state in OVERNIGHT_STATES else "renew"


def renewal_left(since: datetime, renew_after: timedelta, now: datetime) -> timedelta:
    """How long the generation started at `since` runs before it is renewed (zero or less: now)."""
    return since + renew_after - now


def update_push(
    fixture_id: int, previous: MatchProgress, summary: IngestSummary, at: datetime, generation: int = 1
) -> PushInput:
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
        generation=generation,
    )


def start_key(generation: int) -> str:
    """The push-to-start's `event_key`: `kickoff` for the first generation, `renew-N` after."""
    return "kickoff" if generation == 1 else f"renew-{generation}"


def start_push(
    fixture_id: int,
    progress: MatchProgress,
    at: datetime,
    trace_id: str | None = None,
    generation: int = 1,
) -> PushInput:
    """Push-to-start of `generation` for every follower without one (priority 10; a start always
    carries an alert)."""
    return PushInput(
        fixture_id=fixture_id,
        event_key=start_key(generation),
        kind="start",
        priority=10,
        state=live_state(progress),
        alert=True,
        timestamp=int(at.timestamp()),
        trace_id=trace_id,
        generation=generation,
    )


def end_push(fixture_id: int, progress: MatchProgress, at: datetime, generation: int = 1) -> PushInput:
    """The final state with a "Full time" alert; the activity is dismissed after `dismiss_after_seconds`."""
    return PushInput(
        fixture_id=fixture_id,
        event_key="full_time",
        kind="end",
        priority=10,
        state=live_state(progress),
        alert=True,
        timestamp=int(at.timestamp()),
        generation=generation,
    )


def generation_end_push(
    fixture_id: int, progress: MatchProgress, at: datetime, generation: int, *, overnight: bool
) -> PushInput:
    """End `generation` quietly (no alert): before its renewal dismissed at once (the next
    generation replaces it), at stumps after `STUMPS_DISMISS_AFTER_SECONDS`."""
    return PushInput(
        fixture_id=fixture_id,
        event_key=f"stumps-{generation}-end" if overnight else f"renew-{generation}-end",
        kind="end",
        priority=10,
        state=live_state(progress),
        timestamp=int(at.timestamp()),
        dismiss_after_seconds=STUMPS_DISMISS_AFTER_SECONDS if overnight else 0,
        generation=generation,
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
