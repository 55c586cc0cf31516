"""The stored scoreboard of one match: read before a snapshot is planned, written after its entries.

The write never moves the board backwards, so a stale snapshot committing after a newer one leaves
the newer board standing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncConnection

from activities.ingest.plan import Board, IngestPlan
from domain.cricket.board import CricketBoard
from domain.cricket.live import CricketLine, line_of
from domain.snapshot import Snapshot
from scoreline.db.tables import scoreboard, timeline_item


async def load_board(conn: AsyncConnection, fixture_id: int) -> Board:
    """The board as stored, at the version of the log's last entry: the seq the next entry follows."""
    row = (
        await conn.execute(
            select(
                scoreboard.c.version, scoreboard.c.state, scoreboard.c.home_score, scoreboard.c.away_score
            ).where(scoreboard.c.fixture_id == fixture_id)
        )
    ).first()
    last_seq = (
        await conn.execute(
            select(func.coalesce(func.max(timeline_item.c.seq), 0)).where(
                timeline_item.c.fixture_id == fixture_id
            )
        )
    ).scalar_one()
    if row is None:
        return Board(version=int(last_seq))
    return Board(version=int(last_seq), state=row.state, home=row.home_score, away=row.away_score)


async def keep_ball_facts(conn: AsyncConnection, snapshot: Snapshot) -> Snapshot:
    """A cricket answer without its balls (an include not honoured) never takes back what the
    balls showed: the stored board's innings, batters, bowler and last six stand."""
    if snapshot.cricket is None or snapshot.balls is not None:
        return snapshot
    body = await conn.scalar(select(scoreboard.c.body).where(scoreboard.c.fixture_id == snapshot.fixture_id))
    stored = _cricket_board(body)
    if stored is None:
        return snapshot
    return snapshot.model_copy(update={"cricket": stored.with_facts_of(snapshot.cricket)})


def _cricket_board(body: Mapping[str, Any] | None) -> CricketBoard | None:
    raw = (body or {}).get("cricket")
    return None if raw is None else CricketBoard.model_validate(raw)


def stored_line(body: Mapping[str, Any] | None) -> CricketLine | None:
    """The cricket line a stored board's body shows; None for a match that is not cricket."""
    board = _cricket_board(body)
    return None if board is None else line_of(board)


async def store_board(conn: AsyncConnection, snapshot: Snapshot, decided: IngestPlan, version: int) -> None:
    """Upsert the planned board at `version`, unless a newer one is stored already."""
    board = decided.board
    body = _board_body(snapshot)
    statement = insert(scoreboard).values(
        fixture_id=snapshot.fixture_id,
        version=version,
        state=board.state,
        home_score=board.home,
        away_score=board.away,
        body=body,
    )
    await conn.execute(
        statement.on_conflict_do_update(
            index_elements=[scoreboard.c.fixture_id],
            set_={
                "version": statement.excluded.version,
                "state": statement.excluded.state,
                "home_score": statement.excluded.home_score,
                "away_score": statement.excluded.away_score,
                "body": statement.excluded.body,
                "updated_at": func.now(),
            },
            # Never move backwards, even if a stale snapshot arrives after a newer one committed.
            where=scoreboard.c.version <= statement.excluded.version,
        )
    )


def _board_body(snapshot: Snapshot) -> dict[str, Any]:
    scores = snapshot.scores
    periods: dict[str, Any] = {}
    if scores is not None:
        for name in ("first_half", "second_half", "extra_time", "penalties"):
            pair = getattr(scores, name)
            if pair is not None:
                periods[name] = {"home": pair.home, "away": pair.away}
    body: dict[str, Any] = {
        "minute": snapshot.minute,
        "periods": periods,
        "provider_state": snapshot.provider_state,
        "finished_after": snapshot.finished_after.value if snapshot.finished_after else None,
    }
    if snapshot.cricket is not None:
        body["cricket"] = snapshot.cricket.model_dump(mode="json")
    return body
