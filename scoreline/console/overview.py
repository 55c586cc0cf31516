"""Every match as an operator sees it: state, scoring mode, version, last change, Live Activities.

One query for the whole list, so the console's refresh costs one round trip however many matches
there are: the fixture with its scoreboard (a match a workflow has not written yet has none: it
reads as its fixture's state at version 0), and per match the followers, the Live Activities by
status and the pushes APNs accepted, each counted in a grouped subquery.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict
from sqlalchemy import Integer, Row, Subquery, func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from domain.rules import Mode
from scoreline.db.fixture_scoreboard import match_state, select_fixture_with_scoreboard
from scoreline.db.tables import fixture, follow, live_activity, push_attempt, scoreboard

MAX_MATCHES = 500


class LiveActivityCounts(BaseModel):
    """How a match's followers' Live Activities stand, and the pushes APNs took for it."""

    model_config = ConfigDict(frozen=True)

    followers: int = 0
    pending: int = 0
    active: int = 0
    ended: int = 0
    pushes_sent: int = 0


class ConsoleMatch(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: int
    name: str
    sport: str
    kickoff: datetime | None
    competition: str | None
    home: str | None
    away: str | None
    state: str
    mode: Mode
    source: str
    """`provider` (a fixture the provider covers) or `desk` (made by `fixtures create`)."""
    score: dict[str, int]
    version: int
    last_change: datetime | None
    live_activities: LiveActivityCounts


async def console_matches(engine: AsyncEngine, limit: int = MAX_MATCHES) -> list[ConsoleMatch]:
    """Every match, the most recently changed first (then by kickoff)."""
    followers, activities, pushes = _live_activity_counts()
    last_change = func.coalesce(scoreboard.c.updated_at, fixture.c.updated_at)
    statement = (
        select_fixture_with_scoreboard(
            fixture.c.id,
            fixture.c.name,
            fixture.c.sport,
            fixture.c.starting_at,
            fixture.c.competition,
            fixture.c.home_team,
            fixture.c.away_team,
            fixture.c.source,
            fixture.c.scoring_mode,
            match_state.label("state"),
            func.coalesce(scoreboard.c.home_score, 0).label("home_score"),
            func.coalesce(scoreboard.c.away_score, 0).label("away_score"),
            func.coalesce(scoreboard.c.version, 0).label("version"),
            last_change.label("last_change"),
            func.coalesce(followers.c.followers, 0).cast(Integer).label("followers"),
            func.coalesce(activities.c.pending, 0).cast(Integer).label("pending"),
            func.coalesce(activities.c.active, 0).cast(Integer).label("active"),
            func.coalesce(activities.c.ended, 0).cast(Integer).label("ended"),
            func.coalesce(pushes.c.pushes_sent, 0).cast(Integer).label("pushes_sent"),
        )
        .outerjoin(followers, followers.c.fixture_id == fixture.c.id)
        .outerjoin(activities, activities.c.fixture_id == fixture.c.id)
        .outerjoin(pushes, pushes.c.fixture_id == fixture.c.id)
        .order_by(last_change.desc(), fixture.c.starting_at, fixture.c.id)
        .limit(limit)
    )
    async with engine.connect() as conn:
        rows = (await conn.execute(statement)).all()
    return [_console_match(row) for row in rows]


def _live_activity_counts() -> tuple[Subquery, Subquery, Subquery]:
    """Per fixture: its followers; its activities by status; the pushes APNs accepted."""
    followers = (
        select(follow.c.fixture_id, func.count().label("followers")).group_by(follow.c.fixture_id).subquery()
    )
    activities = (
        select(
            live_activity.c.fixture_id,
            func.count().filter(live_activity.c.status == "pending").label("pending"),
            func.count().filter(live_activity.c.status == "active").label("active"),
            func.count().filter(live_activity.c.status == "ended").label("ended"),
        )
        .group_by(live_activity.c.fixture_id)
        .subquery()
    )
    pushes = (
        select(push_attempt.c.fixture_id, func.count().label("pushes_sent"))
        .where(push_attempt.c.status == 200)
        .group_by(push_attempt.c.fixture_id)
        .subquery()
    )
    return followers, activities, pushes


def _console_match(row: Row[*tuple[Any, ...]]) -> ConsoleMatch:
    return ConsoleMatch(
        id=row.id,
        name=row.name,
        sport=row.sport,
        kickoff=row.starting_at,
        competition=(row.competition or {}).get("name"),
        home=(row.home_team or {}).get("name"),
        away=(row.away_team or {}).get("name"),
        state=row.state,
        mode=row.scoring_mode,
        source=row.source,
        score={"home": row.home_score, "away": row.away_score},
        version=row.version,
        last_change=row.last_change,
        live_activities=LiveActivityCounts(
            followers=row.followers,
            pending=row.pending,
            active=row.active,
            ended=row.ended,
            pushes_sent=row.pushes_sent,
        ),
    )
