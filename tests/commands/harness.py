"""The command road end to end: a served API, a real worker, Postgres and Temporal; desks send HTTP."""

from __future__ import annotations

import random
import uuid
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import httpx
from sqlalchemy.ext.asyncio import AsyncEngine

from api.app import create_app
from scoreline.accounts.desk_fixtures import FixtureDraft, create_fixture
from scoreline.accounts.store import create_desk, create_operator
from scoreline.db.engine import create_engine
from scoreline.db.urls import asyncpg_dsn
from scoreline.settings import Settings
from tests.support.http import serve


def road_settings(settings: Settings, **changes: Any) -> Settings:
    """Short answer timeout and settle period, so the try_again and end-of-match paths run quickly."""
    return settings.model_copy(
        update={
            "command_answer_timeout": timedelta(seconds=3),
            "full_time_settle": timedelta(seconds=30),
            **changes,
        }
    )


async def spread_fixture_ids(database_url: str) -> None:
    """Desk fixture ids come from a sequence every test database starts alike, and the workflow id
    is `match-{id}` on a Temporal server all tests share: give each test its own range."""
    db = await asyncpg.connect(asyncpg_dsn(database_url))
    try:
        await db.execute("SELECT setval('desk_fixture_id', $1)", random.randrange(10**12, 9 * 10**15))
    finally:
        await db.close()


FOOTBALL_SQUADS: dict[str, list[dict[str, Any]]] = {
    side: [
        {"id": base + n, "name": f"{side.title()} Player {n}", "shirt_number": n, "starting": n <= 11}
        for n in range(1, 17)
    ]
    for side, base in (("home", 100), ("away", 200))
}
"""Home players 101-116, away 201-216; numbers 1-11 start."""


@dataclass
class Road:
    """One test's running system and what it takes to talk to it."""

    url: str
    engine: AsyncEngine
    database_url: str
    http: httpx.AsyncClient
    operator_token: str
    _keys: int = field(default=0)

    async def fixture(self, sport: str = "football", mode: str = "desk", squads: bool = True) -> int:
        draft = FixtureDraft.model_validate(
            {
                "sport": sport,
                "home": {"name": "Riverside", "players": FOOTBALL_SQUADS["home"] if squads else []},
                "away": {"name": "Harbour", "players": FOOTBALL_SQUADS["away"] if squads else []},
                "kickoff": datetime.now(UTC) + timedelta(hours=1),
                "mode": mode,
            }
        )
        return await create_fixture(self.engine, draft)

    async def desk(self, *fixture_ids: int) -> str:
        _, token = await create_desk(self.engine, f"desk-{uuid.uuid4().hex[:8]}", fixture_ids)
        return token

    def key(self) -> str:
        self._keys += 1
        return f"cmd-{uuid.uuid4().hex[:12]}-{self._keys}"

    async def send(
        self,
        token: str,
        fixture_id: int,
        code: str,
        input: Mapping[str, Any] | None = None,
        *,
        saw: int = 0,
        key: str | None = None,
    ) -> httpx.Response:
        body = {"key": key or self.key(), "code": code, "input": dict(input or {}), "saw": saw}
        return await self.post(token, fixture_id, body)

    async def post(self, token: str, fixture_id: int, body: object) -> httpx.Response:
        return await self.http.post(
            f"/v1/matches/{fixture_id}/commands", json=body, headers={"Authorization": f"Bearer {token}"}
        )

    async def rows(self, query: str, *args: object) -> list[asyncpg.Record]:
        db = await asyncpg.connect(asyncpg_dsn(self.database_url))
        try:
            return list(await db.fetch(query, *args))
        finally:
            await db.close()

    async def log(self, fixture_id: int) -> list[asyncpg.Record]:
        return await self.rows(
            "SELECT seq, kind, origin, command_id, body FROM timeline_item WHERE fixture_id = $1 ORDER BY seq",
            fixture_id,
        )


@asynccontextmanager
async def running_api(settings: Settings, database_url: str) -> AsyncIterator[Road]:
    engine = create_engine(settings.require_database_url())
    try:
        _, operator_token = await create_operator(engine, f"op-{uuid.uuid4().hex[:8]}")
        async with (
            serve(create_app(settings)) as url,
            httpx.AsyncClient(base_url=url, timeout=30) as http,
        ):
            yield Road(
                url=url, engine=engine, database_url=database_url, http=http, operator_token=operator_token
            )
    finally:
        await engine.dispose()
