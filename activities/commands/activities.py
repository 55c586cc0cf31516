"""The match workflow's local activities for desk commands: load the context, commit a command.

They run as *local* activities (design §7): a commit is one short transaction, and a normal
activity would add a server round trip (~30 ms here) to every desk command.
"""

from __future__ import annotations

import asyncio

import redis.asyncio as aioredis
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.commands.store import CommandStore
from domain.commands import CommitInput, CommitResult, CommitStatus, DeskContext
from domain.failures import UNKNOWN_FIXTURE, UnknownFixture
from scoreline.logging import get_logger
from scoreline.readmodel.cache import refresh as refresh_cache
from scoreline.tracing import current_trace_id

log = get_logger(__name__)


class CommandActivities:
    def __init__(self, engine: AsyncEngine, redis: aioredis.Redis) -> None:
        self._store = CommandStore(engine)
        self._engine = engine
        self._redis = redis
        self._refreshes: set[asyncio.Task[None]] = set()

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
            self._refresh_later(data.fixture_id)
        return result.model_copy(update={"trace_id": trace_id})

    def _refresh_later(self, fixture_id: int) -> None:
        """Refresh the fans' read copy after answering: the desk must not wait for a cache.

        The copy is written only if newer, so refreshes finishing out of order are harmless.
        """
        task = asyncio.create_task(self._refresh(fixture_id))
        self._refreshes.add(task)
        task.add_done_callback(self._refreshes.discard)

    async def _refresh(self, fixture_id: int) -> None:
        try:
            await refresh_cache(self._engine, self._redis, fixture_id)
        except (DBAPIError, OSError) as error:
            # The copy stays as it was; the reads notice it is behind and ask Postgres.
            log.warning("read copy not refreshed", fixture_id=fixture_id, error=str(error))
