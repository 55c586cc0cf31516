"""The command commit: one desk command's whole effect in one Postgres transaction (design §4).

The fixture row is locked first — the same lock the provider ingest takes — so the log's next seq
is claimed by exactly one writer. Under it the `command` table decides what a key is: a key seen
before with the same payload is a duplicate (the stored first answer goes back), with another
payload it is `key_reused` (nothing written). Only then is anything written: the `command` row with
the exact answer and, for an accepted command, the `timeline_item`, the `scoreboard` snapshot, the
`domain_event` outbox row and the `pg_notify` wake-up. All or nothing; the desk hears `accepted`
only after this transaction committed.

All of it is one SQL function (`scoreline_commit_command`, migration 0007), called as a single
statement outside any explicit transaction: one round trip, whose implicit transaction is the
commit. The command's lock, reads and writes never wait on the network in between.

A commit Postgres refuses for what it writes (a data or constraint error) would fail the
same way on every retry, under the desk's lock: the command is refused `unstorable` instead, and
that refusal is what gets written. Anything else (a lost connection, a lock timeout, a
deadlock) is raised, and the local activity retries it while the desk hears `try_again`.
"""

from __future__ import annotations

import json
from datetime import UTC
from typing import Any

import asyncpg
from sqlalchemy import func, select, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncEngine

from domain.commands import (
    MAX_CONFLICT_ENTRIES,
    UNSTORABLE,
    CommandAnswer,
    CommitInput,
    CommitResult,
    CommitStatus,
    DeskContext,
    Outcome,
)
from domain.failures import UnknownFixture
from scoreline.accounts.desk_fixtures import lineups_of
from scoreline.db.fixture_scoreboard import select_fixture_with_scoreboard
from scoreline.db.tables import fixture, scoreboard, timeline_item
from scoreline.logging import get_logger
from scoreline.outages import driver_cause

log = get_logger(__name__)


class CommandStore:
    """Commits commands. One per process, sharing the engine's pool."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def commit(self, data: CommitInput, trace_id: str | None) -> CommitResult:
        """Decide the key and write the command in one round trip; if Postgres refuses what it
        writes, write its `unstorable` refusal instead (status `unstorable`).

        Raises:
            UnknownFixture: the fixture is not stored.
            DBAPIError: Postgres could not be reached or asked for a retry; or it refused even the
                refusal, which names no value of the command: the store itself is at fault.
        """
        try:
            return await self._call(data, trace_id)
        except DBAPIError as error:
            # A lost connection, a lock timeout or a deadlock is none of these: it is retried.
            refused = driver_cause(error, _UNSTORABLE_ERRORS)
            if refused is None:
                raise
        log.warning(
            "command unstorable: refused in its place",
            fixture_id=data.fixture_id,
            key=data.request.key,
            code=data.request.code,
            sqlstate=refused.sqlstate,
            error=str(refused),
        )
        result = await self._call(_refusal(data), trace_id)
        if result.status is CommitStatus.COMMITTED:
            return result.model_copy(update={"status": CommitStatus.UNSTORABLE})
        return result

    async def _call(self, data: CommitInput, trace_id: str | None) -> CommitResult:
        async with self._engine.connect() as conn:
            autocommit = await conn.execution_options(isolation_level="AUTOCOMMIT")
            outcome = await autocommit.scalar(_COMMIT, {"c": _argument(data, trace_id)})
        result: dict[str, Any] = outcome if isinstance(outcome, dict) else json.loads(outcome)
        if result["status"] == "unknown_fixture":
            raise UnknownFixture(f"fixture {data.fixture_id} is not stored")
        return CommitResult.model_validate(result)

    async def context(self, fixture_id: int) -> DeskContext:
        """What a workflow run needs before its first command."""
        # One statement, one snapshot: the rule state is the one stored with the log's last entry.
        last_seq = (
            select(func.coalesce(func.max(timeline_item.c.seq), 0))
            .where(timeline_item.c.fixture_id == fixture_id)
            .scalar_subquery()
        )
        async with self._engine.connect() as conn:
            row = (
                await conn.execute(
                    select_fixture_with_scoreboard(
                        fixture.c.sport,
                        fixture.c.scoring_mode,
                        fixture.c.squads,
                        scoreboard.c.rule_state,
                        last_seq.label("last_seq"),
                    ).where(fixture.c.id == fixture_id)
                )
            ).first()
        if row is None:
            raise UnknownFixture(f"fixture {fixture_id} is not stored")
        return DeskContext(
            sport="cricket" if row.sport == "cricket" else "football",
            mode=row.scoring_mode,
            lineups=lineups_of(row.squads) or None,
            rule_state=row.rule_state,
            last_seq=int(row.last_seq),
        )


_COMMIT = text("SELECT scoreline_commit_command(CAST(:c AS jsonb))")

_UNSTORABLE_ERRORS = (
    asyncpg.exceptions.DataError,
    asyncpg.exceptions.IntegrityConstraintViolationError,
)
"""Postgres's error classes 22 (data) and 23 (constraint): the same command fails the same way
every time. A statement or privilege error (class 42) is the deployment's fault, not the
command's: it is retried like an outage, so fixing the deployment lets the command through."""


def _refusal(data: CommitInput) -> CommitInput:
    """The `unstorable` refusal of `data`'s command: its row in the `command` table, which makes a
    resend its duplicate. The input, where the value Postgres refused usually is, stays out."""
    return CommitInput(
        fixture_id=data.fixture_id,
        request=data.request.model_copy(update={"input": {}}),
        answer=CommandAnswer(outcome=Outcome.REFUSED, reason=UNSTORABLE),
        saw=data.saw,
    )


def _argument(data: CommitInput, trace_id: str | None) -> str:
    """The function's argument as JSON text: the decided command, its answer and all it writes.

    The rule state is JSON text already (pydantic made it in the workflow), so it is spliced in
    as it is: parsing it only to dump it again costs a fifth of the worker's event loop at desk
    speed. `json.dumps` of a non-empty dict always ends with its closing brace.
    """
    text = json.dumps(_call(data, trace_id))
    if data.rule_state is None:
        return text
    return f'{text[:-1]}, "rule_state": {data.rule_state}}}'


def _call(data: CommitInput, trace_id: str | None) -> dict[str, Any]:
    """Everything but the rule state."""
    request = data.request
    return {
        "fixture_id": data.fixture_id,
        "key": request.key,
        "payload_hash": request.payload_hash,
        "sender": request.sender,
        "code": request.code,
        "input": request.input,
        "saw": request.saw,
        # In UTC: Postgres takes offsets up to ±15:59 only, ISO 8601 (and the API) up to ±23:59.
        "sent_at": request.sent_at.astimezone(UTC).isoformat() if request.sent_at else None,
        "answer": data.answer.body(),
        "max_changed": MAX_CONFLICT_ENTRIES,
        "seq": data.seq,
        "kind": data.kind,
        "entry": data.entry,
        "target_seq": data.target_seq,
        "minute": data.minute,
        "extra_minute": data.extra_minute,
        "board": data.board.model_dump(mode="json") if data.board is not None else None,
        "trace_id": trace_id,
    }
