"""Matches for the partner change tests: `MatchWriter` commits (entries, board, outbox row, NOTIFY in
one transaction, as the ingest does), with the fixture placed in a competition."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncEngine

from scoreline.db.tables import fixture
from tests.outbox.writer import MatchWriter


async def match_in(engine: AsyncEngine, fixture_id: int, competition: int) -> MatchWriter:
    """A live match of `competition` with no log entries yet."""
    writer = await MatchWriter.create(engine, fixture_id)
    async with engine.begin() as conn:
        await conn.execute(
            fixture.update()
            .where(fixture.c.id == fixture_id)
            .values(competition={"id": competition, "name": f"Competition {competition}"})
        )
    return writer
