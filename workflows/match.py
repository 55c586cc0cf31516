"""MatchWorkflow (id `match-{fixture_id}`): one live match, from before kickoff to the final backfill.

The lifecycle (design §2):
1. a durable timer to shortly before kickoff;
2. a long-running watch activity that returns only on a material change, restarted after each;
3. full time is confirmed by a quiet settle period (SportMonks shows FT for a moment before extra
   time in a cup tie), then a post-match backfill fetches the fixture once more;
4. postponed: wait for the new start time, rechecking now and then, or give up after a while;
   suspended / delayed / interrupted: keep watching; cancelled / abandoned / awarded: end cleanly;
5. continue-as-new when Temporal suggests it, after every handler finished, carrying only the
   compact progress, the desk book and the queued pushes;
6. the followers' Live Activities never outlive Apple's 8 hours: a timer renews them at
   `la_renew_after_seconds` (an end, then a new push-to-start), even in the middle of a watch,
   and a Test's day ends them at stumps and starts new ones when play resumes (`match_pushes`).

A provider that stays down through the backfill or a postponed recheck never fails the match: the
fetch is given up, the end push goes out with what is known, and a later replay can amend it.

A cricket match (its id says so) is the same lifecycle with two additions: every ball is a
material change (the watch decides), and after the end push the fixture is fetched again on
durable timers (`post_match_rechecks_seconds`: by default 2 min, 10 min, 1 h, 6 h and 24 h), since
the provider edits balls in place long after `Finished`; every output follows those amendments.

Two parts live in their own classes, owned here: the desk commands (`match_desk`: the `submit`
Update, serialised and answered only after the commit) and the Live Activity pushes
(`match_pushes`: publishing in order, generations). While desks own the score (`desk` mode) the provider
is not watched at all; an operator's mode switch cancels or restarts the watch.

A run may start for a match that is over (a desk command after the end): the command is decided
against the stored state, and the run ends once it is answered, unless it reopened the match.

It runs outside the workflow sandbox (`sandboxed=False`). The sandbox re-checks every module
access and runs a compiled snippet per payload it converts; for the desk's command, decided,
committed and answered in one task, that is one of the largest costs on the road
(`bench/command_latency.py --what-if sandbox`: 20 desks get 147 accepted/s instead of 160-167). What
the sandbox guarded is kept by other means: `tests/foundation/test_purity.py` checks statically
that this package and `domain/` read no clock, randomness, file, socket or environment, and the
replay tests run committed histories through this code. The other workflows keep the sandbox:
they are not on a hot path.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import NoReturn

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError

with workflow.unsafe.imports_passed_through():
    from activities.watch import WatchActivities
    from domain.commands import CommandAnswer, CommandRequest
    from domain.cricket.board import cricket_provider_id
    from domain.match_run import (
        MATCH_WORKFLOW,
        SUBMIT,
        FetchInput,
        MatchInput,
        MatchOptions,
        MatchOutcome,
        Source,
        WatchInput,
        WatchResult,
    )
    from domain.progress import IngestSummary, MatchProgress
    from domain.push_plan import end_push
    from domain.rules import COMMAND_SHAPE_ERROR, CommandShapeError, parse_command
    from domain.snapshot import MatchState
    from domain.states import OVER_STATES, STARTED_STATES
    from workflows.match_desk import DeskCommands
    from workflows.match_pushes import PushQueue

FETCH_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=2), maximum_interval=timedelta(minutes=1), maximum_attempts=20
)
"""About 15 minutes of provider errors before a one-off fetch is given up (and the match goes on)."""


@workflow.defn(name=MATCH_WORKFLOW, sandboxed=False)
class MatchWorkflow:
    @workflow.init
    def __init__(self, start: MatchInput) -> None:
        self.current = start.progress
        self._fixture_id = start.fixture_id
        self._source = start.source
        self._desk = DeskCommands(
            start.fixture_id, source=start.source, mode=start.mode, book=start.book, run=self
        )
        self._pushes = PushQueue(
            start.fixture_id,
            lambda: self.current,
            started=start.live_activities_started,
            carried=start.pending_pushes,
            generation=start.live_activity_generation,
            # Not known (a run carried over from before generations): they started at kick-off.
            since=start.live_activity_since or (start.kickoff if start.live_activities_started else None),
            overnight=start.live_activities_overnight,
        )
        self._rechecked = False

    def _interrupted(self) -> bool:
        """Why a running watch (or desk wait) must stop: the score changed hands, or history is long."""
        return self._desk.mode == "desk" or workflow.info().is_continue_as_new_suggested()

    @workflow.query
    def progress(self) -> MatchProgress:
        """Where the match stands, for operators (Temporal UI → Queries)."""
        return self.current

    @workflow.update(name=SUBMIT)
    async def submit(self, request: CommandRequest) -> CommandAnswer:
        """A desk command: answered only once its commit returned (design §4)."""
        return await self._desk.submit(request)

    @submit.validator
    def _check_shape(self, request: CommandRequest) -> None:
        """Bad shapes never reach history: the API checks them too, this guards other callers."""
        try:
            parse_command(request.code, request.input)
        except CommandShapeError as error:
            raise ApplicationError(error.message, {"path": error.path}, type=COMMAND_SHAPE_ERROR) from None

    def changed(self, before: MatchProgress, change: IngestSummary) -> None:
        """The Live Activity push a change deserves: push-to-start at kick-off, an update after
        (and, with generations, the day's end at stumps and a new start when play resumes)."""
        if not self._pushes.started:
            if change.state in STARTED_STATES:
                self._pushes.kick_off(change.progress, change.trace_id)
            return
        self._pushes.change(before, change)

    @workflow.run
    async def run(self, start: MatchInput) -> MatchOutcome:
        options = start.options
        self._pushes.resume()
        self._pushes.end_the_day_if_due()
        kickoff = start.kickoff
        postponed_since = start.postponed_since
        workflow.logger.info("match workflow started", extra={"fixture_id": start.fixture_id})
        if self.current.state in OVER_STATES:
            await workflow.wait_condition(lambda: workflow.all_handlers_finished() and self._pushes.done())
            if self.current.state in OVER_STATES:
                return self._outcome()

        self._pushes.renew_before_the_cap(timedelta(seconds=options.la_renew_after_seconds))
        while self.current.state not in OVER_STATES:
            if workflow.info().is_continue_as_new_suggested():
                await self._continue_as_new(start, kickoff, postponed_since)
            if self._desk.mode == "desk" or self._source == "desk":
                await self._desk_scored(options)
                continue
            if self.current.state is MatchState.POSTPONED:
                postponed_since = postponed_since or workflow.now()
                if workflow.now() - postponed_since > timedelta(seconds=options.postponed_give_up_seconds):
                    workflow.logger.info(
                        "postponed for too long; ending", extra={"fixture_id": start.fixture_id}
                    )
                    break
                kickoff = await self._recheck_postponed(start.fixture_id, options, kickoff)
                continue
            postponed_since = None
            await self._sleep_until_kickoff(kickoff, options)
            result = await self._watch(start.fixture_id, options, settle=None)
            if result is None:
                continue
            if result.summary is not None and result.summary.kickoff is not None:
                kickoff = result.summary.kickoff
            if result.reason == "polling_off":
                await workflow.sleep(timedelta(seconds=options.polling_off_recheck_seconds))
            if self.current.state is MatchState.FINISHED and not await self._full_time_holds(
                start.fixture_id, options
            ):
                continue
        return await self._finish(start.fixture_id, options)

    async def _continue_as_new(
        self, start: MatchInput, kickoff: datetime | None, postponed_since: datetime | None
    ) -> NoReturn:
        """Carry the match into a new run: the pushes in flight finish here, the queued ones go on."""
        self._pushes.pause()
        await workflow.wait_condition(lambda: workflow.all_handlers_finished() and self._pushes.idle())
        workflow.continue_as_new(
            MatchInput(
                fixture_id=start.fixture_id,
                kickoff=kickoff,
                progress=self.current,
                options=start.options,
                postponed_since=postponed_since,
                source=self._source,
                mode=self._desk.mode,
                book=self._desk.book,
                live_activities_started=self._pushes.started,
                pending_pushes=self._pushes.carried(),
                live_activity_generation=self._pushes.generation,
                live_activity_since=self._pushes.since,
                live_activities_overnight=self._pushes.overnight,
            )
        )

    async def _finish(self, fixture_id: int, options: MatchOptions) -> MatchOutcome:
        """The match is over: the provider's final word, the end pushed, late edits rechecked."""
        if self._source == "provider" and self._desk.mode == "provider":
            final = await self._fetch(fixture_id, "postmatch")
            if final is not None:
                self.current = final.progress
        if self._pushes.started:
            self._pushes.close(end_push(fixture_id, self.current, workflow.now(), self._pushes.generation))
        await workflow.wait_condition(lambda: workflow.all_handlers_finished() and self._pushes.done())
        if self._source == "provider" and cricket_provider_id(fixture_id) is not None:
            await self._recheck_after_the_end(fixture_id, options)
        workflow.logger.info(
            "match workflow finished", extra={"fixture_id": fixture_id, "state": self.current.state}
        )
        return self._outcome()

    async def _recheck_after_the_end(self, fixture_id: int, options: MatchOptions) -> None:
        """Late ball edits: fetch the fixture after each wait; the ingest logs any as amendments."""
        for wait in options.post_match_rechecks_seconds:
            await workflow.sleep(timedelta(seconds=wait))
            summary = await self._fetch(fixture_id, "postmatch")
            if summary is not None:
                self.current = summary.progress

    def _outcome(self) -> MatchOutcome:
        return MatchOutcome(
            fixture_id=self._fixture_id,
            state=self.current.state,
            home=self.current.home,
            away=self.current.away,
            version=self.current.version,
        )

    async def _desk_scored(self, options: MatchOptions) -> None:
        """Desks own the score, or no provider knows the match: nothing to poll, commands move the
        match. After the final whistle corrections stay open for the settle period before the run
        ends."""
        await workflow.wait_condition(
            lambda: (
                self.current.state in OVER_STATES
                or (self._source == "provider" and self._desk.mode != "desk")
                or workflow.info().is_continue_as_new_suggested()
            )
        )
        if self.current.state in OVER_STATES:
            try:
                await workflow.wait_condition(
                    lambda: self.current.state not in OVER_STATES, timeout=options.settle_seconds
                )
            except TimeoutError:
                return

    async def _sleep_until_kickoff(self, kickoff: datetime | None, options: MatchOptions) -> None:
        if kickoff is None or self.current.state is not MatchState.SCHEDULED:
            return
        wake = kickoff - timedelta(seconds=options.kickoff_lead_seconds)
        if wake > workflow.now():
            await workflow.sleep(wake - workflow.now())

    async def _full_time_holds(self, fixture_id: int, options: MatchOptions) -> bool:
        """Keep watching through a quiet settle period; FT that turns into extra time is not the end."""
        while True:
            result = await self._watch(fixture_id, options, settle=options.settle_seconds)
            if result is None or result.reason == "settled":
                return True
            if self.current.state is not MatchState.FINISHED:
                return self.current.state in OVER_STATES

    async def _recheck_postponed(
        self, fixture_id: int, options: MatchOptions, kickoff: datetime | None
    ) -> datetime | None:
        """Fetch the fixture for a new start time; a run's first recheck goes at once (the next
        call waits an interval first, whatever this one found)."""
        first = not self._rechecked
        self._rechecked = True
        if not first:
            await workflow.sleep(timedelta(seconds=options.postponed_recheck_seconds))
        summary = await self._fetch(fixture_id, "reconcile")
        if summary is None:
            return kickoff
        self.current = summary.progress
        return summary.kickoff or kickoff

    async def _watch(
        self, fixture_id: int, options: MatchOptions, settle: float | None
    ) -> WatchResult | None:
        """One watch, until a material change; None when it was cancelled because `_interrupted`."""
        watch = workflow.start_activity_method(
            WatchActivities.watch_match,
            WatchInput(fixture_id=fixture_id, progress=self.current, settle_seconds=settle),
            task_queue=options.watch_task_queue,
            start_to_close_timeout=timedelta(hours=12),
            heartbeat_timeout=timedelta(seconds=options.heartbeat_timeout_seconds),
            # A crashed watch is resumed by another worker quickly and forever: polling is the job.
            retry_policy=RetryPolicy(initial_interval=timedelta(seconds=1), backoff_coefficient=1.0),
        )
        await workflow.wait_condition(lambda: watch.done() or self._interrupted())
        if not watch.done():
            watch.cancel()
            try:
                await watch
            except ActivityError:
                pass  # the cancellation asked for above
            return None
        result = await watch
        before, self.current = self.current, result.progress
        if result.summary is not None:
            self.changed(before, result.summary)
        return result

    async def _fetch(self, fixture_id: int, source: Source) -> IngestSummary | None:
        """One full fetch and ingest; None when the fixture is unknown or the provider stayed down."""
        try:
            summary = await workflow.execute_activity_method(
                WatchActivities.fetch_and_ingest,
                FetchInput(fixture_id=fixture_id, source=source),
                start_to_close_timeout=timedelta(minutes=2),
                retry_policy=FETCH_RETRY,
            )
        except ActivityError as error:
            workflow.logger.warning(
                "fetch given up; the match goes on with what is known",
                extra={"fixture_id": fixture_id, "source": source, "error": str(error.cause or error)},
            )
            return None
        return summary
