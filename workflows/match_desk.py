"""The match workflow's desk commands: one at a time, decided purely, answered after the commit.

Owned by `MatchWorkflow` (plain class, workflow code). The `submit` Update hands each command
here. Commands are serialised by one lock; each is decided by `domain.desk.decide` against the
desk book (the rule state and what each part of the match was last touched by) and written by the
commit local activity in one transaction. If the provider's ingest logged first, the commit says
so (`moved`) and the command is decided again on the newer log, a few times at most.

The book is carried across continue-as-new; a run's first command opens it from Postgres. Any
commit that finds the log past what the book knows, and every refusal before it is stored, catch
the book up from Postgres (`DeskBook.caught_up`: what the missed entries touched counts as newer).
*Invariant:* a command is decided on the rule state Postgres stored with the log entry at
`book.version`, the log's last. Entries the book did not decide (the provider's, or this
workflow's own commit whose workflow task was lost to a paused or killed worker) are read back
with the rule state they left, never skipped over.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Protocol

from temporalio import workflow
from temporalio.common import RetryPolicy

with workflow.unsafe.imports_passed_through():
    from activities.commands.activities import CommandActivities
    from domain.commands import (
        KEY_REUSED,
        CommandAnswer,
        CommandRequest,
        CommitStatus,
        DeskContext,
        Outcome,
        Reason,
    )
    from domain.desk import Decision, DeskBook, decide, desk_progress, open_book
    from domain.moments import KeyMoment
    from domain.progress import FixtureSource, IngestSummary, MatchProgress
    from domain.rules import Mode

MAX_COMMIT_ATTEMPTS = 5
"""Times a command is re-decided because the provider ingest wrote first, before `try_again`."""

COMMIT_RETRY = RetryPolicy(
    initial_interval=timedelta(milliseconds=200), maximum_interval=timedelta(seconds=5)
)
"""A commit retries until Postgres answers: the desk hears `try_again` from the API meanwhile, and
its resend with the same key attaches to this same, still running, update."""

BUSY = Reason(code="busy", message="the match log kept moving; send the command again")


class MatchRun(Protocol):
    """What the desk side needs of the run that owns it."""

    current: MatchProgress
    """Where the match stands; the desks' board while they own the score."""

    def changed(self, before: MatchProgress, change: IngestSummary) -> None:
        """An accepted command changed what followers see."""


class DeskCommands:
    """The desk side of one match run."""

    def __init__(
        self,
        fixture_id: int,
        *,
        source: FixtureSource,
        mode: Mode,
        book: DeskBook | None,
        run: MatchRun,
    ) -> None:
        self._fixture_id = fixture_id
        self._source = source
        self._initial_mode = mode
        self._book = book
        self._run = run
        self._lock = asyncio.Lock()

    @property
    def book(self) -> DeskBook | None:
        return self._book

    @property
    def mode(self) -> Mode:
        """Who owns the score: the book's mode once it is open, else the run's starting mode."""
        return self._book.rules.mode if self._book is not None else self._initial_mode

    async def submit(self, request: CommandRequest) -> CommandAnswer:
        async with self._lock:
            answer = await self._submit(request)
        # The Update's own line in a trace (`scoreline trace`); the SDK's logger is silent on replay.
        workflow.logger.info(
            "desk command answered by the workflow",
            extra={
                "fixture_id": self._fixture_id,
                "key": request.key,
                "code": request.code,
                "outcome": answer.outcome.value,
                "seq": answer.seq,
            },
        )
        return answer

    async def _submit(self, request: CommandRequest) -> CommandAnswer:
        for _ in range(MAX_COMMIT_ATTEMPTS):
            book = (self._book or await self._open_book()).moved_to(self._run.current.version)
            decision = self._decide(book, request)
            if decision.commit.seq is None:
                # A "no" is stored for good under its key, and Postgres does not check it against the
                # log: decide it again if the log moved past the book.
                fresh = (await self._read_back(book)).moved_to(self._run.current.version)
                if fresh.version != book.version:
                    book, decision = fresh, self._decide(fresh, request)
            result = await workflow.execute_local_activity_method(
                CommandActivities.commit_command,
                decision.commit,
                start_to_close_timeout=timedelta(seconds=10),
                retry_policy=COMMIT_RETRY,
            )
            if result.status is CommitStatus.MOVED:
                await self._read_back(book)
                continue
            if result.status is CommitStatus.KEY_REUSED:
                return CommandAnswer(outcome=Outcome.REFUSED, reason=KEY_REUSED)
            # Not ours when `unstorable`: the refusal was written instead, so the book only
            # follows the log.
            ours = result.status is CommitStatus.COMMITTED or (
                decision.commit.seq is not None and result.stored_seq == decision.commit.seq
            )
            before = self._run.current
            after = decision.after if ours and decision.commit.seq else book
            if result.last_seq > after.version:
                await self._read_back(after)
            else:
                self._adopt(after)
            if ours and decision.commit.seq is not None:
                self._announce(before, decision, result.trace_id)
            if result.status is CommitStatus.COMMITTED:
                _count_key_moments(decision.moments)
            if result.status is CommitStatus.DUPLICATE:
                return CommandAnswer(outcome=Outcome.DUPLICATE, answer=result.answer)
            assert result.answer is not None
            return result.answer
        return CommandAnswer(outcome=Outcome.TRY_AGAIN, reason=BUSY)

    def _announce(self, before: MatchProgress, decision: Decision, trace_id: str | None) -> None:
        """Tell the run an accepted command changed what followers see (if it did)."""
        board, seq = decision.commit.board, decision.commit.seq
        shown = (before.state, before.home, before.away, before.cricket)
        # Every ball is news in cricket, as in a provider's match: a dot ball changes the line.
        cricket = self._run.current.cricket
        if (
            seq is None
            or board is None
            or not (decision.moments or shown != (board.state, board.home, board.away, cricket))
        ):
            return
        self._run.changed(
            before,
            IngestSummary(
                fixture_id=self._fixture_id,
                version=seq,
                previous_version=seq - 1,
                entries=1,
                state=board.state,
                home=board.home,
                away=board.away,
                minute=decision.commit.minute,
                key_moments=decision.moments,
                trace_id=trace_id,
                cricket=cricket,
            ),
        )

    def _decide(self, book: DeskBook, request: CommandRequest) -> Decision:
        has_provider = self._source == "provider"
        return decide(book, self._fixture_id, request, self._run.current, has_provider=has_provider)

    async def _open_book(self) -> DeskBook:
        book = open_book(await self._stored())
        self._adopt(book)
        return book

    async def _read_back(self, book: DeskBook) -> DeskBook:
        """`book` caught up with the log and the rule state Postgres stored at its last entry."""
        caught_up = book.caught_up(open_book(await self._stored()))
        self._adopt(caught_up)
        return caught_up

    async def _stored(self) -> DeskContext:
        return await workflow.execute_local_activity_method(
            CommandActivities.load_desk_context,
            self._fixture_id,
            start_to_close_timeout=timedelta(seconds=10),
            retry_policy=COMMIT_RETRY,
        )

    def _adopt(self, book: DeskBook) -> None:
        """The book after a commit; when desks own the score it also is the match's progress."""
        self._book = book
        self._run.current = desk_progress(book) or self._run.current


def _count_key_moments(moments: tuple[KeyMoment, ...]) -> None:
    """`scoreline_desk_key_moments_total`: through the workflow's meter, which records nothing
    while a history replays, so a moment is counted once however often its run is replayed."""
    if not moments:
        return
    counter = workflow.metric_meter().create_counter(
        "scoreline_desk_key_moments", "Key moments committed by desks, by kind.", ""
    )
    for moment in moments:
        counter.add(1, {"kind": moment.kind})
