"""The match workflow's Live Activity pushes: published in order, carried across runs.

Owned by `MatchWorkflow` (plain class, workflow code: deterministic, no I/O). Each push is one
short activity (`publish_live_activity_push`) that moves every target's mailbox forward in
Postgres (docs/live-activities.md); the drainers on the workers send from there, however long
APNs takes. So the workflow never waits for a phone: a goal waits only for the publishes queued
before it, each a statement or two, and a publish is retried until Postgres takes it.

Generations (`domain.push_plan`: Apple ends an activity after 8 hours): a timer of its own wakes
the workflow when the running generation reaches `la_renew_after_seconds`, even while a long watch
activity runs, and queues the generation's end then the next one's start. At stumps the day's
generation ends; the next starts when play resumes. The generation, when it started and whether it
ended for the night are carried across continue-as-new.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime, timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from activities.push.publish import PublishActivities
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

PUBLISH_RETRY = RetryPolicy(initial_interval=timedelta(seconds=1), maximum_interval=timedelta(seconds=10))
"""A publish is retried until Postgres takes it, however long it is away: what a phone is owed is
never dropped. Later pushes wait behind it, so every phone's mailbox moves in the match's order."""


class PushQueue:
    """Every push one match run publishes, in the order the match produced them."""

    def __init__(
        self,
        fixture_id: int,
        progress: Callable[[], MatchProgress],
        *,
        started: bool,
        carried: tuple[PushInput, ...],
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
        self._fixture_id = fixture_id
        self._progress = progress
        self._queue = list(carried)
        self._publishing: asyncio.Task[None] | None = None
        self._cap: asyncio.Task[None] | None = None
        """The renewal timer's task (kept referenced while it waits)."""
        self._paused = False
        self._closing = False

    # --- what the workflow tells it ------------------------------------------------------------

    def resume(self) -> None:
        """Publish what the previous run left queued (call once, when the run starts)."""
        self._kick()

    def kick_off(self, progress: MatchProgress, trace_id: str | None) -> None:
        """Play started: push-to-start the first generation to every follower (a match first
        seen at stumps starts its first one when play resumes)."""
        self.started = True
        if progress.state in OVERNIGHT_STATES:
            self.overnight = True
            return
        self.since = workflow.now()
        self.add(start_push(self._fixture_id, progress, workflow.now(), trace_id, self.generation))

    def end_the_day_if_due(self) -> None:
        """A run starting at stumps whose day's activities may still run ends them; publishing
        that end again is harmless (it moves no mailbox that already wants it)."""
        if self.started and not self.overnight and self._progress().state in OVERNIGHT_STATES:
            self._end_the_day()

    def change(self, before: MatchProgress, change: IngestSummary) -> None:
        """A material change after kick-off: an update of the running generation; into stumps
        also the day's end; when play resumes, the next generation."""
        step = after_change(change.state, self.overnight)
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
        """Queue a push for publishing after those queued before it."""
        self._queue.append(push)
        self._kick()

    def close(self, end: PushInput) -> None:
        """The match is over: `end` goes last, and no generation is renewed any more."""
        self._closing = True
        self.add(end)

    def pause(self) -> None:
        """Continue-as-new is coming: the publish in flight finishes, the queued ones wait."""
        self._paused = True

    # --- what the workflow asks ----------------------------------------------------------------

    def idle(self) -> bool:
        """No publish is running."""
        return self._publishing is None or self._publishing.done()

    def done(self) -> bool:
        """Nothing queued and nothing in flight."""
        return not self._queue and self.idle()

    def carried(self) -> tuple[PushInput, ...]:
        """What the next run publishes first, in order."""
        return tuple(self._queue)

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

    # --- publishing ----------------------------------------------------------------------------

    def _kick(self) -> None:
        if not self._paused and self._queue and self.idle():
            self._publishing = asyncio.create_task(self._publish_all())

    async def _publish_all(self) -> None:
        while self._queue and not self._paused:
            try:
                await workflow.execute_activity_method(
                    PublishActivities.publish_live_activity_push,
                    self._queue[0],
                    start_to_close_timeout=timedelta(seconds=30),
                    retry_policy=PUBLISH_RETRY,
                )
            except ActivityError:
                # Only a push that can never be published gets here (its fixture is gone): a push
                # never fails the match, nor holds up the ones after it.
                workflow.logger.warning(
                    "live activity push not published",
                    extra={"fixture_id": self._fixture_id, "event_key": self._queue[0].event_key},
                )
            self._queue.pop(0)
