"""The desks given a fixture, for the console's per-match panel (creating and revoking them is
`scoreline.accounts.store`'s job; this only lists them)."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from scoreline.accounts.models import Desk
from scoreline.db.tables import desk


async def desks_of(engine: AsyncEngine, fixture_id: int) -> list[Desk]:
    """Every desk that was given `fixture_id`, revoked ones included, oldest first."""
    statement = (
        select(desk).where(desk.c.fixtures.any_() == fixture_id).order_by(desk.c.created_at, desk.c.id)
    )
    async with engine.connect() as conn:
        rows = (await conn.execute(statement)).all()
    return [
        Desk(
            id=row.id,
            name=row.name,
            fixtures=frozenset(row.fixtures),
            created_at=row.created_at,
            revoked_at=row.revoked_at,
        )
        for row in rows
    ]
