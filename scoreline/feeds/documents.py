"""Document content, read from Postgres only (never from a cache), on a connection the caller owns.

The builder runs these inside one REPEATABLE READ transaction, so a match document's scoreboard
and events are from the same instant. Match documents reuse the fans' read-model queries; the day
list has its own query because it selects by kick-off date, which no fans' query does.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from sqlalchemy import Text, cast, literal, select
from sqlalchemy.ext.asyncio import AsyncConnection

from scoreline.db.fixture_scoreboard import match_listing, select_fixture_with_scoreboard
from scoreline.db.tables import fixture, published_document, scoreboard
from scoreline.feeds.keys import DocKey, MatchDoc
from scoreline.feeds.models import (
    FixtureEntry,
    FixturesContent,
    MatchContent,
    Scoreboard,
    competition_of,
)
from scoreline.readmodel.ordering import EventCursor
from scoreline.readmodel.queries import MAX_EVENTS_LIMIT, load_events, load_match
from scoreline.readmodel.views import CompetitionView, EventView, FixtureView, ScoreView, TeamView

Content = MatchContent | FixturesContent


async def document_content(conn: AsyncConnection, key: DocKey) -> Content | None:
    """What the document says now; None for a match whose fixture does not exist."""
    if isinstance(key, MatchDoc):
        return await match_content(conn, key.fixture_id)
    return await fixtures_content(conn, key.day)


async def match_content(conn: AsyncConnection, fixture_id: int) -> MatchContent | None:
    view = await load_match(conn, fixture_id)
    if view is None:
        return None
    board: Mapping[str, Any] = (
        await conn.execute(select(scoreboard.c.body).where(scoreboard.c.fixture_id == fixture_id))
    ).scalar_one_or_none() or {}
    return MatchContent(
        competition_id=competition_of(view.fixture),
        fixture=view.fixture,
        scoreboard=Scoreboard(
            state=view.state,
            score=view.score,
            periods=dict(board.get("periods") or {}),
            finished_after=board.get("finished_after"),
            **view.play_fields(),
        ),
        events=await _all_events(conn, fixture_id),
    )


async def _all_events(conn: AsyncConnection, fixture_id: int) -> list[EventView]:
    """Every event in match-time order: the read model's pages, walked back to the first."""
    pages: list[list[EventView]] = []
    before: EventCursor | None = None
    while True:
        page = await load_events(conn, fixture_id, MAX_EVENTS_LIMIT, before)
        pages.append(page.events)
        if page.next_before is None:
            break
        before = EventCursor.decode(page.next_before)
    return [event for page_events in reversed(pages) for event in page_events]


async def fixtures_content(conn: AsyncConnection, day: date) -> FixturesContent:
    start = datetime.combine(day, time(), tzinfo=UTC)
    rows = await conn.execute(
        select_fixture_with_scoreboard(*match_listing)
        .where(fixture.c.starting_at >= start, fixture.c.starting_at < start + timedelta(days=1))
        .order_by(fixture.c.starting_at, fixture.c.id)
    )
    entries = []
    for row in rows:
        view = FixtureView(
            id=row.id,
            name=row.name,
            sport=row.sport,
            kickoff=row.starting_at,
            home=None if row.home_team is None else TeamView.model_validate(row.home_team),
            away=None if row.away_team is None else TeamView.model_validate(row.away_team),
            competition=None if row.competition is None else CompetitionView.model_validate(row.competition),
            league_id=row.league_id,
            season_id=row.season_id,
        )
        entries.append(
            FixtureEntry(
                competition_id=competition_of(view),
                fixture=view,
                state=row.state,
                score=ScoreView(home=row.home_score or 0, away=row.away_score or 0),
            )
        )
    return FixturesContent(date=day, fixtures=entries)


async def unpublished_matches(conn: AsyncConnection, first: date, last: date) -> list[int]:
    """Fixtures kicking off from day `first` to day `last` that have no match document yet.

    The outbox only speaks when a match's log moves, so a fixture the sync just added (scheduled,
    nothing logged) would have no document until kick-off without this.
    """
    start = datetime.combine(first, time(), tzinfo=UTC)
    end = datetime.combine(last, time(), tzinfo=UTC) + timedelta(days=1)
    key = literal("match/", Text) + cast(fixture.c.id, Text)
    published = select(literal(1)).where(published_document.c.doc_key == key)
    rows = await conn.execute(
        select(fixture.c.id)
        .where(fixture.c.starting_at >= start, fixture.c.starting_at < end, ~published.exists())
        .order_by(fixture.c.id)
    )
    return [int(row.id) for row in rows]
