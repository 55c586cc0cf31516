"""MatchWorkflow (id `match-{fixture_id}`): one live match, from before kickoff to the final backfill.

The lifecycle (design §2):
1. a durable timer to shortly before kickoff;
2. a long-running watch activity that returns only on a material change, restarted after each;
3. full time is confirmed by a quiet settle period (SportMonks shows FT for a moment before extra
   time in a cup tie), then a post-match backfill fetches the fixture once more;
4. postponed: wait for the new start time, rechecking now and then, or give up after a while;
   suspended / delayed / interrupted: keep watching; cancelled / abandoned / awarded: end cleanly;
5. continue-as-new when Temporal suggests it, after every handler finished, carrying only the
   compact progress and the desk book.

Desk commands arrive as the `submit` Update (design §4). They are serialised by one lock, decided
by the pure `workflows.desk`, and answered only after the commit local activity returned. While
desks own the score (`desk` mode) the provider is not watched at all; an operator's mode switch
cancels or restarts the watch.
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from typing import Literal

from pydantic import BaseModel, ConfigDict
from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError

with workflow.unsafe.imports_passed_through():
    from workflows.command_types import (
        CommandAnswer,
        CommandRequest,
        CommitResult,
        CommitStatus,
        DeskContext,
        Outcome,
        Reason,
    )
    from workflows.desk import DeskBook, decide, desk_progress, open_book
    from workflows.match_types import (
        BREAK_STATES,
        OVER_STATES,
        PLAYING_STATES,
        FetchInput,
        IngestSummary,
        MatchProgress,
        WatchInput,
        WatchResult,
    )
    from workflows.push_plan import end_push, start_push, update_push
    from workflows.push_types import PUSH_ACTIVITY, PushInput, PushResult
    from workflows.rules import CommandShapeError, Mode, parse_command
    from workflows.snapshot import MatchState

WATCH_ACTIVITY = "watch_match"
FETCH_ACTIVITY = "fetch_and_ingest"
COMMIT_ACTIVITY = "commit_command"
CONTEXT_ACTIVITY = "load_desk_context"
MAX_COMMIT_ATTEMPTS = 5
"""Times a command is re-decided because the provider ingest wrote first, before `try_again`."""

PUSHES_PATCH = "live-activity-pushes"
"""Runs recorded before Live Activity pushes existed replay without them."""

STARTED_STATES = PLAYING_STATES | BREAK_STATES | OVER_STATES
"""Once a match is in one of these, its followers' Live Activities have been started."""

PUSH_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    maximum_interval=timedelta(seconds=30),
    maximum_attempts=20,
    non_retryable_error_types=["ApnsConfigError", "UnknownFixture"],
)

COMMIT_RETRY = RetryPolicy(
    initial_interval=timedelta(milliseconds=200), maximum_interval=timedelta(seconds=5)
)
"""A commit retries until Postgres answers: the desk hears `try_again` from the API meanwhile, and
its resend with the same key attaches to this same, still running, update."""


class MatchOptions(BaseModel):
    """Timings of one match's lifecycle; defaults are production values, tests shrink them."""

    model_config = ConfigDict(frozen=True)

    kickoff_lead_seconds: float = 300
    settle_seconds: float = 300
    heartbeat_timeout_seconds: float = 10
    polling_off_recheck_seconds: float = 60
    postponed_recheck_seconds: float = 600
    postponed_give_up_seconds: float = 7 * 24 * 3600
    watch_task_queue: str | None = None
    """Queue of the watch activity; None = this workflow's queue."""


class MatchInput(BaseModel):
    model_config = ConfigDict(frozen=True)

    fixture_id: int
    kickoff: datetime | None = None
    progress: MatchProgress = MatchProgress()
    options: MatchOptions = MatchOptions()
    postponed_since: datetime | None = None
    source: Literal["provider", "desk"] = "provider"
    """`desk`: a fixture no provider knows; it is never polled."""
    mode: Mode = "provider"
    """Who owns the score when the run starts (the book's mode wins once it is open)."""
    book: DeskBook | None = None
    live_activities_started: bool = False
    pending_pushes: tuple[PushInput, ...] = ()
    """Pushes queued but not sent when the previous run continued as new; sent first."""
    last_push_timestamp: int = 0


class MatchOutcome(BaseModel):
    model_config = ConfigDict(frozen=True)

    fixture_id: int
    state: MatchState
    home: int
    away: int
    version: int


@workflow.defn
class MatchWorkflow:
    @workflow.init
    def __init__(self, start: MatchInput) -> None:
        self._fixture_id = start.fixture_id
        self._source = start.source
        self._initial_mode = start.mode
        self._progress = start.progress
        self._book = start.book
        self._commands = asyncio.Lock()
        self._started = start.live_activities_started
        self._pending_pushes: list[PushInput] = list(start.pending_pushes)
        self._pusher: asyncio.Task[None] | None = None
        self._draining = False
        self._last_push_timestamp = start.last_push_timestamp
        self._pushes_patched: bool | None = None

    def _scoring(self) -> Mode:
        return self._book.rules.mode if self._book is not None else self._initial_mode

    def _interrupted(self) -> bool:
        """Why a running watch (or desk wait) must stop: the score changed hands, or history is long."""
        return self._scoring() == "desk" or workflow.info().is_continue_as_new_suggested()

    @workflow.query
    def progress(self) -> MatchProgress:
        """Where the match stands, for operators (Temporal UI → Queries)."""
        return self._progress

    @workflow.update
    async def submit(self, request: CommandRequest) -> CommandAnswer:
        """A desk command: answered only once its commit returned (design §4)."""
        async with self._commands:
            return await self._submit(request)

    @submit.validator
    def _check_shape(self, request: CommandRequest) -> None:
        """Bad shapes never reach history: the API checks them too, this guards other callers."""
        try:
            parse_command(request.code, request.input)
        except CommandShapeError as error:
            raise ApplicationError(error.message, {"path": error.path}, type="CommandShapeError") from None

    @workflow.signal
    def followers_changed(self) -> None:
        """A device followed the match: after kick-off its Live Activity starts at once (the
        `effect_log` gate skips the followers that already have one)."""
        if self._started:
            self._push_later(start_push(self._fixture_id, self._progress, workflow.now()))

    async def _submit(self, request: CommandRequest) -> CommandAnswer:
        for _ in range(MAX_COMMIT_ATTEMPTS):
            book = (self._book or await self._open_book()).moved_to(self._progress.version)
            decision = decide(
                book, self._fixture_id, request, self._progress, has_provider=self._source == "provider"
            )
            result: CommitResult = await workflow.execute_local_activity(
                COMMIT_ACTIVITY,
                decision.commit,
                result_type=CommitResult,
                start_to_close_timeout=timedelta(seconds=10),
                retry_policy=COMMIT_RETRY,
            )
            if result.status is CommitStatus.MOVED:
                self._book = book.moved_to(result.last_seq)
                continue
            if result.status is CommitStatus.KEY_REUSED:
                return CommandAnswer(
                    outcome=Outcome.REFUSED,
                    reason=Reason(code="key_reused", message="this key was already used for another command"),
                )
            ours = result.status is CommitStatus.COMMITTED or (
                decision.commit.seq is not None and result.stored_seq == decision.commit.seq
            )
            before = self._progress
            self._adopt(decision.after if ours and decision.commit.seq else book.moved_to(result.last_seq))
            board = decision.commit.board
            shown = (before.state, before.home, before.away)
            if (
                ours
                and decision.commit.seq is not None
                and board is not None
                and (decision.moments or shown != (board.state, board.home, board.away))
            ):
                self._after_change(
                    before,
                    IngestSummary(
                        fixture_id=self._fixture_id,
                        version=decision.commit.seq,
                        previous_version=decision.commit.seq - 1,
                        entries=1,
                        state=board.state,
                        home=board.home,
                        away=board.away,
                        minute=decision.commit.minute,
                        key_moments=decision.moments,
                        trace_id=result.trace_id,
                    ),
                )
            if result.status is CommitStatus.DUPLICATE:
                return CommandAnswer(outcome=Outcome.DUPLICATE, answer=result.answer)
            assert result.answer is not None
            return result.answer
        return CommandAnswer(
            outcome=Outcome.TRY_AGAIN,
            reason=Reason(code="busy", message="the match log kept moving; send the command again"),
        )

    async def _open_book(self) -> DeskBook:
        context: DeskContext = await workflow.execute_local_activity(
            CONTEXT_ACTIVITY,
            self._fixture_id,
            result_type=DeskContext,
            start_to_close_timeout=timedelta(seconds=10),
            retry_policy=COMMIT_RETRY,
        )
        book = open_book(context)
        self._adopt(book)
        return book

    def _adopt(self, book: DeskBook) -> None:
        """The book after a commit; when desks own the score it also is the match's progress."""
        self._book = book
        self._progress = desk_progress(book) or self._progress

    @workflow.run
    async def run(self, start: MatchInput) -> MatchOutcome:
        options = start.options
        if self._pending_pushes:
            self._pusher = asyncio.create_task(self._send_pushes())
        kickoff = start.kickoff
        postponed_since = start.postponed_since
        workflow.logger.info("match workflow started", extra={"fixture_id": start.fixture_id})

        while self._progress.state not in OVER_STATES:
            if workflow.info().is_continue_as_new_suggested():
                # The push in flight finishes here; the queued ones go to the next run.
                self._draining = True
                await workflow.wait_condition(
                    lambda: workflow.all_handlers_finished() and (self._pusher is None or self._pusher.done())
                )
                workflow.continue_as_new(
                    MatchInput(
                        fixture_id=start.fixture_id,
                        kickoff=kickoff,
                        progress=self._progress,
                        options=options,
                        postponed_since=postponed_since,
                        source=self._source,
                        mode=self._scoring(),
                        book=self._book,
                        live_activities_started=self._started,
                        pending_pushes=tuple(self._pending_pushes),
                        last_push_timestamp=self._last_push_timestamp,
                    )
                )
            if self._scoring() == "desk" or self._source == "desk":
                await self._desk_scored(options)
                continue
            if self._progress.state is MatchState.POSTPONED:
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
            if self._progress.state is MatchState.FINISHED and not await self._full_time_holds(
                start.fixture_id, options
            ):
                continue

        if self._source == "provider" and self._scoring() == "provider":
            final = await self._fetch(start.fixture_id, "postmatch")
            if final is not None:
                self._progress = final.progress
        if self._started:
            self._push_later(end_push(start.fixture_id, self._progress, workflow.now()))
        await workflow.wait_condition(lambda: workflow.all_handlers_finished() and self._pushes_done())
        workflow.logger.info(
            "match workflow finished", extra={"fixture_id": start.fixture_id, "state": self._progress.state}
        )
        return MatchOutcome(
            fixture_id=start.fixture_id,
            state=self._progress.state,
            home=self._progress.home,
            away=self._progress.away,
            version=self._progress.version,
        )

    async def _desk_scored(self, options: MatchOptions) -> None:
        """Desks own the score, or no provider knows the match: nothing to poll, commands move the
        match. After the final whistle corrections stay open for the settle period before the run
        ends."""
        await workflow.wait_condition(
            lambda: (
                self._progress.state in OVER_STATES
                or (self._source == "provider" and self._scoring() != "desk")
                or workflow.info().is_continue_as_new_suggested()
            )
        )
        if self._progress.state in OVER_STATES:
            try:
                await workflow.wait_condition(
                    lambda: self._progress.state not in OVER_STATES, timeout=options.settle_seconds
                )
            except TimeoutError:
                return

    async def _sleep_until_kickoff(self, kickoff: datetime | None, options: MatchOptions) -> None:
        if kickoff is None or self._progress.state is not MatchState.SCHEDULED:
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
            if self._progress.state is not MatchState.FINISHED:
                return self._progress.state in OVER_STATES

    async def _recheck_postponed(
        self, fixture_id: int, options: MatchOptions, kickoff: datetime | None
    ) -> datetime | None:
        await workflow.sleep(timedelta(seconds=options.postponed_recheck_seconds))
        summary = await self._fetch(fixture_id, "reconcile")
        if summary is None:
            return kickoff
        self._progress = summary.progress
        return summary.kickoff or kickoff

    async def _watch(
        self, fixture_id: int, options: MatchOptions, settle: float | None
    ) -> WatchResult | None:
        """One watch, until a material change; None when it was cancelled because `_interrupted`."""
        watch = workflow.start_activity(
            WATCH_ACTIVITY,
            WatchInput(fixture_id=fixture_id, progress=self._progress, settle_seconds=settle),
            result_type=WatchResult,
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
                pass  # the cancellation we asked for
            return None
        result: WatchResult = await watch
        before, self._progress = self._progress, result.progress
        if result.summary is not None:
            self._after_change(before, result.summary)
        return result

    def _after_change(self, before: MatchProgress, summary: IngestSummary) -> None:
        """The Live Activity push a change deserves: push-to-start at kick-off, an update after."""
        if not self._started:
            if summary.state in STARTED_STATES:
                self._started = True
                self._push_later(
                    start_push(self._fixture_id, summary.progress, workflow.now(), summary.trace_id)
                )
            return
        self._push_later(update_push(self._fixture_id, before, summary, workflow.now()))

    def _push_later(self, push: PushInput) -> None:
        """Queue a push behind the ones in flight, so followers see changes in order; a pending
        routine update is replaced by a newer one (the latest state is what matters)."""
        if self._pushes_patched is None:
            self._pushes_patched = workflow.patched(PUSHES_PATCH)
        if not self._pushes_patched:
            return
        # `aps.timestamp` is in whole seconds and a device keeps the newest: two changes in one
        # second must still be ordered, so each push is stamped at least a second after the last.
        stamp = max(push.timestamp, self._last_push_timestamp + 1)
        self._last_push_timestamp = stamp
        push = push.model_copy(update={"timestamp": stamp})
        if push.routine:
            self._pending_pushes = [pending for pending in self._pending_pushes if not pending.routine]
        self._pending_pushes.append(push)
        if self._pusher is None or self._pusher.done():
            self._pusher = asyncio.create_task(self._send_pushes())

    async def _send_pushes(self) -> None:
        while self._pending_pushes and not self._draining:
            push = self._pending_pushes.pop(0)
            try:
                await workflow.execute_activity(
                    PUSH_ACTIVITY,
                    push,
                    result_type=PushResult,
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

    def _pushes_done(self) -> bool:
        return not self._pending_pushes and (self._pusher is None or self._pusher.done())

    async def _fetch(self, fixture_id: int, source: str) -> IngestSummary | None:
        summary: IngestSummary | None = await workflow.execute_activity(
            FETCH_ACTIVITY,
            FetchInput(fixture_id=fixture_id, source=source),
            result_type=IngestSummary | None,  # type: ignore[arg-type]
            start_to_close_timeout=timedelta(minutes=2),
            retry_policy=RetryPolicy(
                initial_interval=timedelta(seconds=2),
                maximum_interval=timedelta(minutes=1),
                maximum_attempts=20,
            ),
        )
        return summary
