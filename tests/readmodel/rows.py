"""Builds match scenarios the way the ingest leaves them: rows written straight into the tables.

`MatchLog` keeps the per-match seq, so every event, amendment and retraction gets its log entry and
the scoreboard's version is the last seq, exactly as the ingest's invariants require.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from scoreline.db.tables import fixture, match_event, scoreboard, timeline_item

KICKOFF = datetime(2026, 3, 14, 15, 0, tzinfo=UTC)
HOME = {"id": 19, "name": "Arsenal", "short_code": "ARS", "image": "https://img/19.png"}
AWAY = {"id": 18, "name": "Chelsea", "short_code": "CHE", "image": "https://img/18.png"}
COMPETITION = {"id": 8, "name": "Premier League"}
NO_CRICKET: dict[str, Any] = dict.fromkeys(
    [
        "format",
        "innings",
        "batting_side",
        "batters",
        "bowler",
        "last_six",
        "target",
        "need",
        "balls_left",
        "required_rate",
        "stumps_day",
        "result",
    ]
)
"""A football match view's cricket fields: each one there, each one null."""
_EVENT_COLUMNS = frozenset({"type", "minute", "extra_minute", "sort_order", "side"})


class MatchLog:
    """One fixture's rows; each write is its own committed transaction, like one ingest."""

    def __init__(self, engine: AsyncEngine, fixture_id: int) -> None:
        self.engine = engine
        self.fixture_id = fixture_id
        self.seq = 0
        self.first_seq: dict[int, int] = {}

    @classmethod
    async def create(
        cls,
        engine: AsyncEngine,
        fixture_id: int,
        *,
        state: str = "scheduled",
        kickoff: datetime | None = KICKOFF,
        name: str = "Arsenal vs Chelsea",
        competition: dict[str, Any] | None = COMPETITION,
    ) -> MatchLog:
        async with engine.begin() as conn:
            await conn.execute(
                fixture.insert().values(
                    id=fixture_id,
                    sport="football",
                    league_id=8,
                    season_id=23614,
                    name=name,
                    starting_at=kickoff,
                    home_team=HOME,
                    away_team=AWAY,
                    competition=competition,
                    state=state,
                    provider_state_id=1,
                )
            )
        return cls(engine, fixture_id)

    async def event(
        self,
        provider_event_id: int,
        type: str = "other",
        minute: int | None = None,
        *,
        extra_minute: int | None = None,
        sort_order: int | None = None,
        side: str | None = "home",
        stream: str = "events",
        player: tuple[int, str] | None = None,
        related: tuple[int, str] | None = None,
        result: str | None = None,
        info: str | None = None,
    ) -> int:
        """Insert an event and its first `event` log entry; returns the match_event id."""
        body = {
            "stream": stream,
            "provider_id": provider_event_id,
            "type": type,
            "provider_type_id": 14,
            "minute": minute,
            "extra_minute": extra_minute,
            "side": side,
            "participant_id": None,
            "player_id": player[0] if player else None,
            "player_name": player[1] if player else None,
            "related_player_id": related[0] if related else None,
            "related_player_name": related[1] if related else None,
            "result": result,
            "info": info,
            "addition": None,
            "sort_order": sort_order,
            "rescinded": False,
        }
        async with self.engine.begin() as conn:
            event_id: int = (
                await conn.execute(
                    match_event.insert()
                    .values(
                        fixture_id=self.fixture_id,
                        stream=stream,
                        provider_event_id=provider_event_id,
                        type=type,
                        provider_type_id=14,
                        minute=minute,
                        extra_minute=extra_minute,
                        sort_order=sort_order,
                        side=side,
                        body=body,
                        body_hash=f"hash-{provider_event_id}",
                        source="live",
                    )
                    .returning(match_event.c.id)
                )
            ).scalar_one()
            self.first_seq[event_id] = await self._entry(conn, "event", event_id, minute=minute)
        return event_id

    async def amend(self, event_id: int, **changes: Any) -> None:
        """Change an event (body, and the column of the same name if any) and log an amendment."""
        async with self.engine.begin() as conn:
            body = (
                await conn.execute(select(match_event.c.body).where(match_event.c.id == event_id))
            ).scalar_one()
            columns = {name: value for name, value in changes.items() if name in _EVENT_COLUMNS}
            await conn.execute(
                match_event.update()
                .where(match_event.c.id == event_id)
                .values(body={**body, **changes}, **columns)
            )
            await self._entry(conn, "amendment", event_id, target_seq=self.first_seq[event_id])

    async def retract(self, event_id: int) -> None:
        async with self.engine.begin() as conn:
            await conn.execute(
                match_event.update().where(match_event.c.id == event_id).values(retracted_at=func.now())
            )
            await self._entry(conn, "retraction", event_id, target_seq=self.first_seq[event_id])

    async def board(self, state: str, home: int, away: int, minute: int | None = None) -> None:
        """Upsert the scoreboard at the current seq, as the ingest does after each transaction."""
        values = {
            "fixture_id": self.fixture_id,
            "version": self.seq,
            "state": state,
            "home_score": home,
            "away_score": away,
            "body": {"minute": minute, "periods": {}, "provider_state": "INPLAY_1ST_HALF"},
        }
        statement = insert(scoreboard).values(**values)
        async with self.engine.begin() as conn:
            await conn.execute(
                statement.on_conflict_do_update(
                    index_elements=[scoreboard.c.fixture_id],
                    set_={**{k: v for k, v in values.items() if k != "fixture_id"}, "updated_at": func.now()},
                )
            )
            await conn.execute(
                fixture.update()
                .where(fixture.c.id == self.fixture_id)
                .values(state=state, updated_at=func.now())
            )

    async def state_entry(self, state: str) -> None:
        """A log entry with no event: moves the version, as a state change does."""
        async with self.engine.begin() as conn:
            await self._entry(conn, "state", None, body={"state": state})

    async def _entry(
        self,
        conn: AsyncConnection,
        kind: str,
        event_id: int | None,
        *,
        target_seq: int | None = None,
        minute: int | None = None,
        body: dict[str, Any] | None = None,
    ) -> int:
        self.seq += 1
        await conn.execute(
            timeline_item.insert().values(
                fixture_id=self.fixture_id,
                seq=self.seq,
                kind=kind,
                origin="provider",
                match_event_id=event_id,
                target_seq=target_seq,
                minute=minute,
                body=body or {},
            )
        )
        return self.seq
