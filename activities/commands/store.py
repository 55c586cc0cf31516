"""The command commit: one desk command's whole effect in one Postgres transaction (design §4).

The fixture row is locked first — the same lock the provider ingest takes — so the log's next seq
is claimed by exactly one writer. Under it the `command` table decides what a key is: a key seen
before with the same payload is a duplicate (the stored first answer goes back), with another
payload it is `key_reused` (nothing written). Only then is anything written: the `command` row with
the exact answer and, for an accepted command, the `timeline_item`, the `scoreboard` snapshot, the
`domain_event` outbox row and the `pg_notify` wake-up. All or nothing; the desk hears `accepted`
only after this transaction committed.
"""

from __future__ import annotations

from typing import Any, cast

from sqlalchemy import func, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from domain.commands import (
    MAX_CONFLICT_ENTRIES,
    ChangedEntry,
    CommandAnswer,
    CommitInput,
    CommitResult,
    CommitStatus,
    DeskContext,
    Outcome,
)
from domain.failures import UnknownFixture
from domain.rules import Code
from scoreline.accounts.desk_fixtures import lineups_of
from scoreline.db.tables import command, fixture, scoreboard, timeline_item
from scoreline.outbox.writer import announce
from scoreline.readmodel.commands import StoredCommand, stored_command


class CommandStore:
    """Commits commands. One per process, sharing the engine's pool."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def commit(self, data: CommitInput, trace_id: str | None) -> CommitResult:
        async with self._engine.begin() as conn:
            fixture_state = await _lock_fixture(conn, data.fixture_id)
            stored = await stored_command(conn, data.request.key)
            last_seq = await _last_seq(conn, data.fixture_id)
            if stored is not None:
                return _known_key(stored, data, last_seq)
            if data.answer.outcome is Outcome.ACCEPTED and data.seq != last_seq + 1:
                return CommitResult(status=CommitStatus.MOVED, last_seq=last_seq)
            answer = data.answer
            if answer.outcome is Outcome.CONFLICT:
                answer = answer.model_copy(update={"changed": await _changed_since(conn, data)})
            await _insert_command(conn, data, answer, trace_id)
            if data.seq is not None:
                await _log(conn, data, fixture_state, trace_id)
                last_seq = data.seq
        return CommitResult(status=CommitStatus.COMMITTED, answer=answer, last_seq=last_seq)

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


async def _lock_fixture(conn: AsyncConnection, fixture_id: int) -> str:
    row = (
        await conn.execute(select(fixture.c.state).where(fixture.c.id == fixture_id).with_for_update())
    ).first()
    if row is None:
        raise UnknownFixture(f"fixture {fixture_id} is not stored")
    return cast(str, row.state)


async def _last_seq(conn: AsyncConnection, fixture_id: int) -> int:
    value = await conn.scalar(
        select(func.coalesce(func.max(timeline_item.c.seq), 0)).where(
            timeline_item.c.fixture_id == fixture_id
        )
    )
    return int(value or 0)


def _known_key(stored: StoredCommand, data: CommitInput, last_seq: int) -> CommitResult:
    if stored.payload_hash != data.request.payload_hash or stored.fixture_id != data.fixture_id:
        return CommitResult(status=CommitStatus.KEY_REUSED, last_seq=last_seq)
    return CommitResult(
        status=CommitStatus.DUPLICATE, answer=stored.answer, last_seq=last_seq, stored_seq=stored.answer.seq
    )


async def _changed_since(conn: AsyncConnection, data: CommitInput) -> tuple[ChangedEntry, ...]:
    rows = (
        await conn.execute(
            select(
                timeline_item.c.seq,
                timeline_item.c.kind,
                timeline_item.c.origin,
                timeline_item.c.body,
                timeline_item.c.minute,
                timeline_item.c.extra_minute,
            )
            .where(timeline_item.c.fixture_id == data.fixture_id, timeline_item.c.seq > data.saw)
            .order_by(timeline_item.c.seq)
            .limit(MAX_CONFLICT_ENTRIES)
        )
    ).all()
    return tuple(
        ChangedEntry(
            seq=row.seq,
            kind=row.kind,
            origin=row.origin,
            body=row.body,
            minute=row.minute,
            extra_minute=row.extra_minute,
        )
        for row in rows
    )


async def _insert_command(
    conn: AsyncConnection, data: CommitInput, answer: CommandAnswer, trace_id: str | None
) -> None:
    request = data.request
    await conn.execute(
        command.insert().values(
            command_id=request.key,
            fixture_id=data.fixture_id,
            sender=request.sender,
            code=request.code,
            input=request.input,
            payload_hash=request.payload_hash,
            saw=request.saw,
            outcome=answer.outcome.value,
            answer=answer.body(),
            seq=data.seq,
            sent_at=request.sent_at,
            trace_id=trace_id,
        )
    )


async def _log(conn: AsyncConnection, data: CommitInput, fixture_state: str, trace_id: str | None) -> None:
    """The accepted command's entry, scoreboard, outbox row and wake-up."""
    seq = cast(int, data.seq)
    await conn.execute(
        timeline_item.insert().values(
            fixture_id=data.fixture_id,
            seq=seq,
            kind=data.kind,
            origin="desk",
            command_id=data.request.key,
            target_seq=data.target_seq,
            minute=data.minute,
            extra_minute=data.extra_minute,
            body={**(data.entry or {}), "sender": data.request.sender},
            trace_id=trace_id,
        )
    )
    board = await _store_board(conn, data, fixture_state)
    if data.request.code == Code.MATCH_SET_MODE:
        await conn.execute(
            update(fixture)
            .where(fixture.c.id == data.fixture_id)
            .values(scoring_mode=data.request.input["mode"], updated_at=func.now())
        )
    elif data.board is not None:
        await conn.execute(
            update(fixture)
            .where(fixture.c.id == data.fixture_id, fixture.c.state != data.board.state.value)
            .values(state=data.board.state.value, updated_at=func.now())
        )
    payload: dict[str, Any] = {
        "fixture_id": data.fixture_id,
        "from_seq": seq,
        "version": seq,
        "state": board.state,
        "score": {"home": board.home_score, "away": board.away_score},
        "command": data.request.code,
    }
    await announce(conn, data.fixture_id, seq, payload, trace_id)


async def _store_board(conn: AsyncConnection, data: CommitInput, fixture_state: str) -> Any:
    """The snapshot at the new seq: the desks' board when they own the score, else the stored one."""
    given = data.board
    values: dict[str, Any] = {
        "fixture_id": data.fixture_id,
        "version": data.seq,
        "state": given.state.value if given else fixture_state,
        "home_score": given.home if given else 0,
        "away_score": given.away if given else 0,
        "body": given.body if given else {},
        "rule_state": data.rule_state,
    }
    statement = insert(scoreboard).values(**values)
    changes: dict[str, Any] = {
        "version": statement.excluded.version,
        "rule_state": statement.excluded.rule_state,
        "updated_at": func.now(),
    }
    if given is not None:
        changes |= {
            "state": statement.excluded.state,
            "home_score": statement.excluded.home_score,
            "away_score": statement.excluded.away_score,
            "body": statement.excluded.body,
        }
    result = await conn.execute(
        statement.on_conflict_do_update(index_elements=[scoreboard.c.fixture_id], set_=changes).returning(
            scoreboard.c.state, scoreboard.c.home_score, scoreboard.c.away_score
        )
    )
    return result.one()
