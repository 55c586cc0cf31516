"""The match workflow's Live Activity pushes: stamped in order, sent in lanes, carried across runs.

Owned by `MatchWorkflow` (plain class, workflow code: deterministic, no I/O). Three lanes, each
one push activity at a time, so that nothing loud ever waits behind something quiet:

- **loud**: push-to-start at kick-off, key moments, period changes, corrections and the end, in the
  order they happened;
- **routine**: the latest routine update only (a newer one replaces a waiting one). Its activity may
  hold a push back to respect the per-activity minimum interval; the loud lane goes on meanwhile;
- **new followers**: a flag, not a queue. Followers who came after kick-off are started by one
  walk over the followers who have no Live Activity yet; however many follows arrive during a walk,
  one more walk follows it.

Order across lanes is kept by the pushes themselves: every push is stamped strictly later than the
one before (`aps.timestamp` has whole seconds), carries the scoreboard version, and the fan-out
never sends a device a state older than the one it shows.

Runs recorded before the lanes existed replay with one queue for everything (`LANES_PATCH`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from activities.push.fanout import PushActivities
    from domain.failures import APNS_CONFIG_ERROR, UNKNOWN_FIXTURE
    from domain.progress import MatchProgress
    from domain.push_plan import start_push
    from domain.pushes import PushInput

PUSHES_PATCH = "live-activity-pushes"
"""Runs recorded before Live Activity pushes existed replay without them."""
LANES_PATCH = "push-lanes"
"""Runs recorded with one push queue (a goal could wait behind a routine update) replay with it."""

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
    ) -> None:
        self.started = started
        """The followers' Live Activities were started (at kick-off)."""
        self._fixture_id = fixture_id
        self._progress = progress
        self._carried = list(carried)
        self._last_timestamp = last_timestamp
        self._followers_waiting = followers_waiting
        self._loud: list[PushInput] = []
        self._routine: PushInput | None = None
        self._lanes_running: dict[str, asyncio.Task[None]] = {}
        self._paused = False
        self._closing = False
        self._pushes_patched: bool | None = None
        self._lanes_patched: bool | None = None

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
            self.add(start_push(self._fixture_id, self._progress(), workflow.now()))
            return
        if not self._closing:
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
        else:
            self._loud.append(push)

    def _followers_due(self) -> bool:
        return self._followers_waiting and self.started and not self._closing

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
            self._run_lane("routine", self._next_routine)
        if self._followers_due():
            running = self._lanes_running.get("followers")
            if running is None or running.done():
                self._lanes_running["followers"] = asyncio.create_task(self._walk_new_followers())

    def _run_lane(self, name: str, take: Callable[[], PushInput | None]) -> None:
        running = self._lanes_running.get(name)
        if running is None or running.done():
            self._lanes_running[name] = asyncio.create_task(self._send_all(take))

    async def _send_all(self, take: Callable[[], PushInput | None]) -> None:
        while not self._paused:
            push = take()
            if push is None:
                return
            if push.kind == "end":
                # A new follower's start in flight must finish before the end closes every activity.
                running = self._lanes_running.get("followers")
                if running is not None:
                    await workflow.wait_condition(running.done)
            await self._send(push)

    def _next_loud(self) -> PushInput | None:
        """The oldest queued push (in runs recorded before the lanes: of every kind)."""
        return self._loud.pop(0) if self._loud else None

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
            self._followers_waiting = False
            await self._send(self._stamp(start_push(self._fixture_id, self._progress(), workflow.now())))

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
