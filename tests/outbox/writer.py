"""Writes match changes the way the ingest commits them: log entries, scoreboard, outbox row, NOTIFY.

All four in one transaction, as `activities.ingest.store.IngestStore.ingest` does, so what the live
streams read (scoreboard, `timeline_item` by seq, `domain_event`) is exactly what production leaves.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import func
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from scoreline.db.tables import fixture, scoreboard, timeline_item
from scoreline.outbox.writer import announce as outbox_announce

HOME = {"id": 19, "name": "Arsenal", "short_code": "ARS", "image": None}
AWAY = {"id": 18, "name": "Chelsea", "short_code": "CHE", "image": None}


@dataclass
class MatchWriter:
    """One fixture's log; `change` commits the next version."""

    engine: AsyncEngine
    fixture_id: int
    state: str = "live_first_half"
    home: int = 0
    away: int = 0
    version: int = 0
    minute: int = 1
    versions: list[int] = field(default_factory=list)

    @classmethod
    async def create(
        cls, engine: AsyncEngine, fixture_id: int, state: str = "live_first_half"
    ) -> MatchWriter:
        async with engine.begin() as conn:
            await conn.execute(
                fixture.insert().values(
                    id=fixture_id,
                    name=f"Arsenal vs Chelsea {fixture_id}",
                    starting_at=func.now(),
                    home_team=HOME,
                    away_team=AWAY,
                    state=state,
                )
            )
        return cls(engine, fixture_id, state=state)

    async def change(
        self,
        *,
        entries: int = 1,
        goal: str | None = None,
        state: str | None = None,
        padding: int = 0,
        conn: AsyncConnection | None = None,
    ) -> int:
        """Commit `entries` log entries (a goal for `goal` = home/away) and return the new version.

        `padding` characters are added to each entry's body (large changes); with `conn`, the rows
        are written on that connection and the caller commits.
        """
        if conn is None:
            async with self.engine.begin() as own:
                return await self.change(entries=entries, goal=goal, state=state, padding=padding, conn=own)
        previous = self.version
        await conn.execute(select_for_update(self.fixture_id))
        for _ in range(entries):
            self.version += 1
            self.minute += 1
            kind, body = "event", {"type": "other", "minute": self.minute, "note": "x" * padding}
            if goal is not None and self.version == previous + 1:
                kind, body = "event", {"type": "goal", "side": goal}
                self.home += goal == "home"
                self.away += goal == "away"
            await conn.execute(
                timeline_item.insert().values(
                    fixture_id=self.fixture_id,
                    seq=self.version,
                    kind=kind,
                    origin="provider",
                    minute=self.minute,
                    body=body,
                )
            )
        if state is not None:
            self.state = state
        await self._store_board(conn)
        await announce(conn, self.fixture_id, previous, self.version, self.state, self.home, self.away)
        self.versions.append(self.version)
        return self.version

    async def _store_board(self, conn: AsyncConnection) -> None:
        values: dict[str, Any] = {
            "fixture_id": self.fixture_id,
            "version": self.version,
            "state": self.state,
            "home_score": self.home,
            "away_score": self.away,
            "body": {"minute": self.minute, "periods": {}},
        }
        statement = insert(scoreboard).values(**values)
        await conn.execute(
            statement.on_conflict_do_update(
                index_elements=[scoreboard.c.fixture_id],
                set_={**{k: v for k, v in values.items() if k != "fixture_id"}, "updated_at": func.now()},
            )
        )
        await conn.execute(
            fixture.update()
            .where(fixture.c.id == self.fixture_id)
            .values(state=self.state, updated_at=func.now())
        )


def select_for_update(fixture_id: int) -> Any:
    """The fixture row lock every log writer takes first (seqs stay gap-free)."""
    return fixture.select().where(fixture.c.id == fixture_id).with_for_update()


async def announce(
    conn: AsyncConnection, fixture_id: int, previous: int, version: int, state: str, home: int, away: int
) -> None:
    """The outbox row and the NOTIFY, written the way every log writer writes them."""
    payload = {
        "fixture_id": fixture_id,
        "from_seq": previous + 1,
        "version": version,
        "state": state,
        "score": {"home": home, "away": away},
    }
    await outbox_announce(conn, fixture_id, version, payload, None)
