"""The match workflow's Live Activity pushes: stamped in order, sent in lanes, carried across runs.

Owned by `MatchWorkflow` (plain class, workflow code: deterministic, no I/O). Three lanes, each
one push activity at a time, so that nothing loud ever waits behind something quiet:

- **loud**: push-to-start at kick-off, key moments, period changes, corrections and the end, in the
  order they happened;
- **routine**: the latest routine update only (a newer one replaces a waiting one). Its activity may
  hold a push back to respect the per-activity minimum interval; the loud lane goes on meanwhile.
  It never overtakes a loud push stamped before it (`ROUTINE_BEHIND_LOUD_PATCH`): a device keeps
  the newest state, so a key moment sent after a newer routine state would be dropped unseen; and
  a loud update or end queued after it replaces it (`ROUTINE_SUPERSEDED_PATCH`): it carries a
  newer state, and the two sent side by side reached devices in either order;
- **new followers**: a flag, not a queue. Followers who came after kick-off are started by one
  walk over the followers who have no Live Activity yet; however many follows arrive during a walk,
  one more walk follows it.

Order across lanes is kept by the pushes themselves: every push is stamped strictly later than the
one before (`aps.timestamp` has whole seconds), carries the scoreboard version, and the fan-out
never sends a device a state older than the one it shows.

Generations (`domain.push_plan`: Apple ends an activity after 8 hours): a timer of its own wakes
the workflow when the running generation reaches `la_renew_after_seconds`, even while a long watch
activity runs, and queues the generation's end then the next one's start on the loud lane (in that
order: no walk over new followers starts the next generation ahead of the end). At stumps the day's
generation ends; the next starts when play resumes. The generation, when it started and whether it
ended for the night are carried across continue-as-new.

Runs recorded before the lanes existed replay with one queue for everything (`LANES_PATCH`); runs
recorded before generations, with one generation and no timer (`RENEWAL_PATCH`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime, timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from activities.push.fanout import PushActivities
    from domain.failures import APNS_CONFIG_ERROR, UNKNOWN_FIXTURE
    from domain.progress import IngestSummary, MatchProgress
    from domain.push_plan import (
        after_change,
        at_the_cap,
        generation_end_push,
        renewal_left,
        start_push,
        update_push,
    )
    from domain.pushes import PushInput
    from domain.states import OVERNIGHT_STATES

PUSHES_PATCH = "live-activity-pushes"
"""Runs recorded before Live Activity pushes existed replay without them."""
LANES_PATCH = "push-lanes"
"""Runs recorded with one push queue (a goal could wait behind a routine update) replay with it."""
ROUTINE_BEHIND_LOUD_PATCH = "routine-behind-loud"
"""Runs recorded while a routine update could overtake a queued key moment (whose push then found
its activities already showing a newer state and was dropped as stale: the alert never showed)
replay that way."""
ROUTINE_SUPERSEDED_PATCH = "routine-superseded-by-loud"
"""Runs recorded while a routine update still waiting behind an older loud push was sent beside a
newer loud one queued meanwhile (the soak of 2026-12-02, seed 6: the older state reached phones
after the newer) replay that way."""
FOLLOWERS_AFTER_START_PATCH = "followers-walk-after-start"
"""Runs recorded while a walk over new followers could run beside the loud lane's start of the
same generation replay that way. Both walk the followers not started yet under one gate, each
took the other's claims for a dead attempt's, and a request in flight was marked in doubt: its
answer was never written (the soak of 2026-12-03, seed 16: a 410 lost so, and the start sent to
the dead token again after its grace)."""
RENEWAL_PATCH = "live-activity-renewal"
"""Runs recorded with one Live Activity per follower for the whole match (no renewal timer, no end
at stumps) replay that way."""

NEW_FOLLOWERS_WALK_GAP = timedelta(seconds=3)
"""After a walk over new followers, the next waits this long: a storm of follows costs one walk
(and one signal) every few seconds, not one per follow."""

PUSH_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    maximum_interval=timedelta(seconds=30),
    maximum_attempts=20,
    non_retryable_error_types=[APNS_CONFIG_ERROR, UNKNOWN_FIXTURE],
)


class PushQueue:
    """Every push one match run sends."""

    def __init__(
        self,
        fixture_id: int,
        progress: Callable[[], MatchProgress],
        *,
        started: bool,
        carried: tuple[PushInput, ...],
        last_timestamp: int,
        followers_waiting: bool,
        generation: int = 1,
        since: datetime | None = None,
        overnight: bool = False,
    ) -> None:
        self.started = started
        """The followers' Live Activities were started (at kick-off)."""
        self.generation = generation
        """The followers' running generation of Live Activities (overnight: the one ended last)."""
        self.since = since
        """When that generation was started (None: not known yet)."""
        self.overnight = overnight
        """That generation was ended at stumps; the next starts when play resumes."""
        self._generations = False
        self._cap: asyncio.Task[None] | None = None
        """The renewal timer's task (kept referenced while it waits)."""
        self._fixture_id = fixture_id
        self._progress = progress
        self._carried = list(carried)
        self._last_timestamp = last_timestamp
        self._followers_waiting = followers_waiting
        self._loud: list[PushInput] = []
        self._loud_sending: PushInput | None = None
        """The loud lane's push in flight."""
        self._routine: PushInput | None = None
        self._lanes_running: dict[str, asyncio.Task[None]] = {}
        self._paused = False
        self._closing = False
        self._pushes_patched: bool | None = None
        self._lanes_patched: bool | None = None
        self._behind_loud_patched: bool | None = None
        self._superseded_patched: bool | None = None

    # --- what the workflow tells it ------------------------------------------------------------

    def resume(self) -> None:
        """Send what the previous run left queued (call once, when the run starts)."""
        if not self._carried and not self._followers_waiting:
            return
        if self._lanes():
            for push in self._carried:
                self._enqueue(push)
        else:
            self._loud = self._carried
        self._carried = []
        self._kick()

    def use_generations(self) -> None:
        """Renew before Apple's cap and end the day at stumps (runs recorded since `RENEWAL_PATCH`)."""
        self._generations = True

    def kick_off(self, progress: MatchProgress, trace_id: str | None) -> None:
        """Play started: push-to-start the first generation to every follower (with generations,
        a match first seen at stumps starts its first one when play resumes)."""
        self.started = True
        if self._generations and progress.state in OVERNIGHT_STATES:
            self.overnight = True
            return
        self.since = workflow.now()
        self.add(start_push(self._fixture_id, progress, workflow.now(), trace_id, self.generation))

    def end_the_day_if_due(self) -> None:
        """A run starting at stumps whose day's activities may still run (its previous run was
        recorded before generations, or the run starts from the database's facts) ends them; once
        more is harmless (the gate, and no activity of that generation left running)."""
        if (
            self._generations
            and self.started
            and not self.overnight
            and self._progress().state in OVERNIGHT_STATES
        ):
            self._end_the_day()

    def change(self, before: MatchProgress, change: IngestSummary) -> None:
        """A material change after kick-off: an update of the running generation; with
        generations, also the day's end at stumps, and the next generation when play resumes."""
        step = after_change(change.state, self.overnight) if self._generations else "update"
        if step == "start_next":
            self._start_next(change.progress, change.trace_id)
        elif step != "nothing":
            self.add(update_push(self._fixture_id, before, change, workflow.now(), self.generation))
            if step == "update_then_end_the_day":
                self._end_the_day()

    def renew_before_the_cap(self, renew_after: timedelta) -> None:
        """From now on, renew each running generation once it has run `renew_after`."""
        self._cap = asyncio.create_task(self._watch_the_cap(renew_after))

    def add(self, push: PushInput) -> None:
        """Queue a push; a start at kick-off starts every follower there is."""
        if self._pushes_patched is None:
            self._pushes_patched = workflow.patched(PUSHES_PATCH)
        if not self._pushes_patched:
            return
        if push.kind == "start" and self._lanes():
            self._followers_waiting = False  # this walk covers every follower
        stamped = self._stamp(push)
        if self._lanes():
            self._enqueue(stamped)
        else:
            if stamped.routine:
                self._loud = [pending for pending in self._loud if not pending.routine]
            self._loud.append(stamped)
        self._kick()

    def followers_changed(self) -> None:
        """Devices followed the match: after kick-off they get their Live Activity at once."""
        if not self.started:
            return
        if not self._lanes():
            # How runs recorded before the lanes behaved: a full walk queued per signal.
            self.add(
                start_push(self._fixture_id, self._progress(), workflow.now(), generation=self.generation)
            )
            return
        if not self._closing and not self._start_queued():
            self._followers_waiting = True
            self._kick()

    def close(self, end: PushInput) -> None:
        """The match is over: no more new followers are started, then `end` goes last."""
        self._closing = True
        self._followers_waiting = False
        self.add(end)

    def pause(self) -> None:
        """Continue-as-new is coming: the pushes in flight finish, the queued ones wait."""
        self._paused = True

    # --- what the workflow asks ----------------------------------------------------------------

    def idle(self) -> bool:
        """No push activity is running."""
        return all(task.done() for task in self._lanes_running.values())

    def done(self) -> bool:
        """Nothing queued and nothing in flight."""
        return not self._loud and self._routine is None and not self._followers_due() and self.idle()

    def carried(self) -> tuple[PushInput, ...]:
        """What the next run sends first, in the order it was queued."""
        return (*self._carried, *self._loud, *((self._routine,) if self._routine else ()))

    @property
    def last_timestamp(self) -> int:
        return self._last_timestamp

    @property
    def followers_waiting(self) -> bool:
        return self._followers_waiting

    # --- generations ---------------------------------------------------------------------------

    async def _watch_the_cap(self, renew_after: timedelta) -> None:
        """One durable timer per generation: it fires while the watch activity runs, and is
        cancelled when the generation ends first (stumps, the match's end)."""
        while True:
            await workflow.wait_condition(lambda: self._closing or (self.started and not self.overnight))
            if self._closing:
                return
            if self.since is None:
                self.since = workflow.now()
            if not await self._runs_out(
                self.generation, renewal_left(self.since, renew_after, workflow.now())
            ):
                continue
            step = at_the_cap(self._progress().state)
            if step == "renew":
                self._renew()
            elif step == "end_the_day":
                self._end_the_day()
            else:
                await workflow.wait_condition(
                    lambda: self._closing or at_the_cap(self._progress().state) != "nothing"
                )

    async def _runs_out(self, generation: int, left: timedelta) -> bool:
        """Wait until `generation` has run its time (True), or ended first (False)."""
        if left <= timedelta(0):
            return True
        try:
            await workflow.wait_condition(
                lambda: self._closing or self.overnight or self.generation != generation, timeout=left
            )
        except TimeoutError:
            return True
        return False

    def _renew(self) -> None:
        """End the running generation (dismissed at once), then start the next with today's state."""
        progress = self._progress()
        self.add(
            generation_end_push(self._fixture_id, progress, workflow.now(), self.generation, overnight=False)
        )
        self._start_next(progress, None)

    def _start_next(self, progress: MatchProgress, trace_id: str | None) -> None:
        self.generation += 1
        self.since = workflow.now()
        self.overnight = False
        self.add(start_push(self._fixture_id, progress, workflow.now(), trace_id, self.generation))

    def _end_the_day(self) -> None:
        self.overnight = True
        self.add(
            generation_end_push(
                self._fixture_id, self._progress(), workflow.now(), self.generation, overnight=True
            )
        )

    # --- internals -----------------------------------------------------------------------------

    def _lanes(self) -> bool:
        if self._lanes_patched is None:
            self._lanes_patched = workflow.patched(LANES_PATCH)
        return self._lanes_patched

    def _stamp(self, push: PushInput) -> PushInput:
        """`aps.timestamp` is in whole seconds and a device keeps the newest: two changes in one
        second must still be ordered, so each push is stamped at least a second after the last."""
        stamp = max(push.timestamp, self._last_timestamp + 1)
        self._last_timestamp = stamp
        return push.model_copy(update={"timestamp": stamp})

    def _enqueue(self, push: PushInput) -> None:
        if push.routine:
            self._routine = push
            return
        self._loud.append(push)
        if self._supersedes(push):
            self._routine = None

    def _supersedes(self, loud: PushInput) -> bool:
        """A loud update or end shows a newer state than the routine update still queued (of its
        generation or an older one): that one has nothing left to show."""
        routine = self._routine
        if routine is None or loud.kind == "start" or loud.generation < routine.generation:
            return False
        if self._superseded_patched is None:
            self._superseded_patched = workflow.patched(ROUTINE_SUPERSEDED_PATCH)
        return self._superseded_patched and routine.state.version <= loud.state.version

    def _followers_due(self) -> bool:
        if self._generations and self.overnight:
            return False  # no activity overnight: the start when play resumes covers every follower
        return self._followers_waiting and self.started and not self._closing

    def _start_queued(self) -> bool:
        """A start waits on the loud lane: it will walk every follower there is by then."""
        return self._generations and any(push.kind == "start" for push in self._loud)

    def _start_in_flight(self) -> bool:
        """The loud lane is sending a start: it walks the same followers as a new-followers walk."""
        sending = self._loud_sending
        return sending is not None and sending.kind == "start"

    def _kick(self) -> None:
        """Make sure every lane with work has its sender running."""
        if self._paused:
            return
        if not self._lanes():
            self._run_lane("queue", self._next_loud)
            return
        if self._loud:
            self._run_lane("loud", self._next_loud)
        if self._routine is not None:
            self._run_lane("routine", self._next_routine, after=self._routine_waits)
        if self._followers_due():
            running = self._lanes_running.get("followers")
            if running is None or running.done():
                self._lanes_running["followers"] = asyncio.create_task(self._walk_new_followers())

    def _run_lane(
        self, name: str, take: Callable[[], PushInput | None], *, after: Callable[[], bool] | None = None
    ) -> None:
        running = self._lanes_running.get(name)
        if running is None or running.done():
            self._lanes_running[name] = asyncio.create_task(self._send_all(take, after))

    async def _send_all(self, take: Callable[[], PushInput | None], after: Callable[[], bool] | None) -> None:
        """Send what `take` hands out until it has nothing; while `after()` holds, wait first (the
        push `take` would hand out may be replaced meanwhile by a newer one)."""
        while not self._paused:
            if after is not None and after():
                await workflow.wait_condition(lambda: self._paused or not after())
                continue
            push = take()
            if push is None:
                return
            if push.kind == "end":
                # A new follower's start in flight must finish before the end closes every activity.
                running = self._lanes_running.get("followers")
                if running is not None:
                    await workflow.wait_condition(running.done)
            await self._send(push)
            if push is self._loud_sending:
                self._loud_sending = None

    def _next_loud(self) -> PushInput | None:
        """The oldest queued push (in runs recorded before the lanes: of every kind)."""
        self._loud_sending = self._loud.pop(0) if self._loud else None
        return self._loud_sending

    def _routine_waits(self) -> bool:
        """The queued routine update was stamped after a loud push not sent yet (queued, or in
        flight on the loud lane): it goes once that one has."""
        if self._behind_loud_patched is None:
            self._behind_loud_patched = workflow.patched(ROUTINE_BEHIND_LOUD_PATCH)
        routine = self._routine
        if not self._behind_loud_patched or routine is None:
            return False
        sending = self._loud_sending
        return any(push.timestamp < routine.timestamp for push in self._loud) or (
            sending is not None and sending.timestamp < routine.timestamp
        )

    def _next_routine(self) -> PushInput | None:
        push, self._routine = self._routine, None
        return push

    async def _walk_new_followers(self) -> None:
        """Start every follower without a Live Activity, then again while more keep coming."""
        first = True
        while self._followers_due() and not self._paused:
            if not first:
                await workflow.sleep(NEW_FOLLOWERS_WALK_GAP)
                if not self._followers_due() or self._paused:
                    return
            first = False
            if self._start_in_flight() and workflow.patched(FOLLOWERS_AFTER_START_PATCH):
                # Follows that came during it may lie behind its cursor: walked once it is done.
                await workflow.wait_condition(lambda: self._paused or not self._start_in_flight())
                if not self._followers_due() or self._paused:
                    return
            self._followers_waiting = False
            push = start_push(self._fixture_id, self._progress(), workflow.now(), generation=self.generation)
            await self._send(self._stamp(push))

    async def _send(self, push: PushInput) -> None:
        try:
            await workflow.execute_activity_method(
                PushActivities.push_live_activities,
                push,
                start_to_close_timeout=timedelta(minutes=10),
                heartbeat_timeout=timedelta(seconds=30),
                retry_policy=PUSH_RETRY,
            )
        except ActivityError:
            # A push never fails the match; the attempts are recorded for support.
            workflow.logger.warning(
                "live activity push failed",
                extra={"fixture_id": push.fixture_id, "event_key": push.event_key},
            )
