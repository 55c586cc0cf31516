"""What publishing, following and token reports share about Live Activity mailboxes
(docs/live-activities.md): the fixture's push lock, the drainers' wake-up, and which published
push a generation shows now.

Publishing (the worker) and a follow or a report (the API) both fill mailboxes of one fixture. They
take the fixture's advisory lock, the publish exclusively, a follow or report shared: so a follow
either commits before a start's publish reads the followers, or reads the start it missed.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

DUE_CHANNEL = "live_activity_due"
"""Postgres NOTIFY channel: a mailbox became due (a publish, a follow, a token report)."""
PUSH_LOCK_CLASS = 7261
"""First key of the fixtures' advisory push locks (the second is the fixture id's hash)."""


@dataclass(frozen=True)
class Wanted:
    """The published push a generation's activities should show now."""

    stamp: int
    generation: int
    end: bool


async def lock_pushes(conn: AsyncConnection, fixture_id: int, *, shared: bool) -> None:
    """Hold the fixture's push lock until the transaction ends."""
    function = "pg_advisory_xact_lock_shared" if shared else "pg_advisory_xact_lock"
    await conn.execute(
        text(f"SELECT {function}(:class, hashint8(:fixture_id))"),
        {"class": PUSH_LOCK_CLASS, "fixture_id": fixture_id},
    )


async def notify_due(conn: AsyncConnection) -> None:
    """Wake the drainers once the transaction commits."""
    await conn.execute(text("SELECT pg_notify(:channel, '')"), {"channel": DUE_CHANNEL})


async def running_generation(conn: AsyncConnection, fixture_id: int) -> Wanted | None:
    """The generation whose activities run now and the push they show; None before kick-off,
    overnight and after the end (an end of the newest push's generation or a newer one was
    published: a correction published after the final whistle starts nothing)."""
    row = (
        await conn.execute(
            text(
                """SELECT p.stamp, p.generation, EXISTS (
                        SELECT 1 FROM la_push e WHERE e.fixture_id = p.fixture_id AND e.event = 'end'
                          AND e.generation >= p.generation) AS ended
                FROM la_push p WHERE p.fixture_id = :fixture_id ORDER BY p.stamp DESC LIMIT 1"""
            ),
            {"fixture_id": fixture_id},
        )
    ).first()
    if row is None or row.ended:
        return None
    return Wanted(stamp=int(row.stamp), generation=int(row.generation), end=False)


async def wanted_by(conn: AsyncConnection, fixture_id: int, generation: int) -> Wanted | None:
    """The newest push that `generation`'s activities should show: the newest end of it or a newer
    generation (an end closes every older generation too, and sticks), else its own newest push;
    None if none was published."""
    row = (
        await conn.execute(
            text(
                """SELECT stamp, event FROM la_push WHERE fixture_id = :fixture_id
                  AND ((event = 'end' AND generation >= :generation) OR generation = :generation)
                ORDER BY event = 'end' DESC, stamp DESC LIMIT 1"""
            ),
            {"fixture_id": fixture_id, "generation": generation},
        )
    ).first()
    if row is None:
        return None
    return Wanted(stamp=int(row.stamp), generation=generation, end=row.event == "end")
