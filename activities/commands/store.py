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
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import func, select, text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from domain.commands import (
    MAX_CONFLICT_ENTRIES,
    CommitInput,
    CommitResult,
    DeskContext,
)
from domain.failures import UnknownFixture
from scoreline.accounts.desk_fixtures import lineups_of
from scoreline.db.tables import fixture, scoreboard, timeline_item


class CommandStore:
    """Commits commands. One per process, sharing the engine's pool."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def commit(self, data: CommitInput, trace_id: str | None) -> CommitResult:
        """Decide the key and write the command in one round trip.

        Raises:
            UnknownFixture: the fixture is not stored.
        """
        async with self._engine.connect() as conn:
            autocommit = await conn.execution_options(isolation_level="AUTOCOMMIT")
            outcome = await autocommit.scalar(_COMMIT, {"c": _argument(data, trace_id)})
        result: dict[str, Any] = outcome if isinstance(outcome, dict) else json.loads(outcome)
        if result["status"] == "unknown_fixture":
            raise UnknownFixture(f"fixture {data.fixture_id} is not stored")
        return CommitResult.model_validate(result)

    async def context(self, fixture_id: int) -> DeskContext:
        """What a workflow run needs before its first command."""
        async with self._engine.connect() as conn:
            row = (
                await conn.execute(
                    select(
                        fixture.c.sport,
                        fixture.c.scoring_mode,
                        fixture.c.squads,
                        scoreboard.c.rule_state,
                    )
                    .select_from(fixture.outerjoin(scoreboard, scoreboard.c.fixture_id == fixture.c.id))
                    .where(fixture.c.id == fixture_id)
                )
            ).first()
            if row is None:
                raise UnknownFixture(f"fixture {fixture_id} is not stored")
            last_seq = await _last_seq(conn, fixture_id)
        return DeskContext(
            sport="cricket" if row.sport == "cricket" else "football",
            mode=row.scoring_mode,
            lineups=lineups_of(row.squads) or None,
            rule_state=row.rule_state,
            last_seq=last_seq,
        )


async def _last_seq(conn: AsyncConnection, fixture_id: int) -> int:
    value = await conn.scalar(
        select(func.coalesce(func.max(timeline_item.c.seq), 0)).where(
            timeline_item.c.fixture_id == fixture_id
        )
    )
    return int(value or 0)


_COMMIT = text("SELECT scoreline_commit_command(CAST(:c AS jsonb))")


def _argument(data: CommitInput, trace_id: str | None) -> str:
    """The function's argument as JSON text: the decided command, its answer and all it writes.

    The rule state is JSON text already (pydantic made it in the workflow), so it is spliced in
    as it is: parsing it only to dump it again was a fifth of the worker's event loop at desk speed
    (issue 15). `json.dumps` of a non-empty dict always ends with its closing brace.
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
        "sent_at": request.sent_at.isoformat() if request.sent_at else None,
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
