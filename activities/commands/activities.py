"""The match workflow's local activities for desk commands: load the context, commit a command.

They run as *local* activities (design §7): a commit is one short transaction, and a normal
activity would add a server round trip (~30 ms here) to every desk command.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.commands.store import CommandStore
from domain.commands import CommitInput, CommitResult, CommitStatus, DeskContext
from domain.failures import UNKNOWN_FIXTURE, UnknownFixture
from scoreline.logging import get_logger
from scoreline.metrics.instruments import metrics
from scoreline.readmodel.refresher import ReadCopyRefresher
from scoreline.tracing import current_trace_id

log = get_logger(__name__)


class CommandActivities:
    def __init__(self, engine: AsyncEngine, read_copies: ReadCopyRefresher) -> None:
        self._store = CommandStore(engine)
        self._read_copies = read_copies

    @activity.defn(name="load_desk_context")
    async def load_desk_context(self, fixture_id: int) -> DeskContext:
        try:
            return await self._store.context(fixture_id)
        except UnknownFixture as error:
            raise ApplicationError(str(error), type=UNKNOWN_FIXTURE, non_retryable=True) from error

    @activity.defn(name="commit_command")
    async def commit_command(self, data: CommitInput) -> CommitResult:
        trace_id = current_trace_id()
        try:
            result = await self._store.commit(data, trace_id)
        except UnknownFixture as error:
            raise ApplicationError(str(error), type=UNKNOWN_FIXTURE, non_retryable=True) from error
        log.info(
            "command committed" if result.status is CommitStatus.COMMITTED else "command not written",
            fixture_id=data.fixture_id,
            key=data.request.key,
            code=data.request.code,
            status=result.status,
            outcome=result.answer.outcome if result.answer else None,
            seq=data.seq if result.status is CommitStatus.COMMITTED else None,
        )
        if result.status is CommitStatus.COMMITTED and data.seq is not None:
            metrics().changes_committed.add(1, {"source": "desk"})
            self._read_copies.refresh_soon(data.fixture_id)
        return result.model_copy(update={"trace_id": trace_id})
