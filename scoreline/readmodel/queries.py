"""The read model's Postgres queries: the truth every cached view is built from.

Each function runs on a connection the caller owns, so a caller can read a match and its events
in one snapshot (as `cache.refresh` does) or in separate short reads (as the API does).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, TypeVar

from sqlalchemy import BigInteger, ColumnElement, Integer, Row, Select, cast, func, literal, select, tuple_
from sqlalchemy.ext.asyncio import AsyncConnection

from scoreline.db.fixture_scoreboard import match_listing, match_state, select_fixture_with_scoreboard
from scoreline.db.tables import fixture, match_event, scoreboard, timeline_item
from scoreline.readmodel.cricket import ball_view, play_of
from scoreline.readmodel.ordering import (
    EXTRA_MINUTE_NULL,
    MINUTE_NULL,
    SORT_ORDER_NULL,
    EventCursor,
)
from scoreline.readmodel.views import (
    CompetitionView,
    EventPage,
    EventView,
    FixtureView,
    MatchView,
    ScoreView,
    TeamView,
    player_view,
)

ViewT = TypeVar("ViewT", TeamView, CompetitionView)
_Row = Row[*tuple[Any, ...]]

DEFAULT_EVENTS_LIMIT = 100
MAX_EVENTS_LIMIT = 500
DEFAULT_MATCHES_LIMIT = 100
MAX_MATCHES_LIMIT = 500

# GREATEST ignores NULLs: a match without a scoreboard takes the fixture's time.
_updated_at = func.greatest(fixture.c.updated_at, scoreboard.c.updated_at)

# Filtering uses the same `match_state` the view shows, so `?state=` agrees with each listed view.
_MATCH = select_fixture_with_scoreboard(
    *match_listing,
    scoreboard.c.version,
    scoreboard.c.body.label("board"),
    _updated_at.label("updated_at"),
)

_EVENT_KEY: tuple[ColumnElement[int], ...] = (
    func.coalesce(cast(match_event.c.minute, Integer), literal(MINUTE_NULL, Integer)),
    func.coalesce(cast(match_event.c.extra_minute, Integer), literal(EXTRA_MINUTE_NULL, Integer)),
    func.coalesce(cast(match_event.c.sort_order, BigInteger), literal(SORT_ORDER_NULL, BigInteger)),
    match_event.c.id,
)
"""Match-time order with NULLs mapped as `ordering.sort_key` maps them."""


async def load_match(conn: AsyncConnection, fixture_id: int) -> MatchView | None:
    """The match view of one fixture, or None if there is no such fixture."""
    row = (await conn.execute(_MATCH.where(fixture.c.id == fixture_id))).first()
    return None if row is None else _match_view(row)


async def list_matches(
    conn: AsyncConnection,
    states: Collection[str] | None = None,
    limit: int = DEFAULT_MATCHES_LIMIT,
) -> list[MatchView]:
    """Matches in any of `states` (every match if None), by kick-off; unscheduled ones last."""
    _check_limit(limit, MAX_MATCHES_LIMIT)
    statement = _MATCH
    if states is not None:
        statement = statement.where(match_state.in_(sorted(states)))
    statement = statement.order_by(fixture.c.starting_at.asc().nulls_last(), fixture.c.id).limit(limit)
    return [_match_view(row) for row in await conn.execute(statement)]


async def fixture_exists(conn: AsyncConnection, fixture_id: int) -> bool:
    """Whether the fixture is known: tells an empty event list from an unknown match."""
    found = await conn.execute(select(literal(1)).where(fixture.c.id == fixture_id))
    return found.first() is not None


async def load_events(
    conn: AsyncConnection,
    fixture_id: int,
    limit: int = DEFAULT_EVENTS_LIMIT,
    before: EventCursor | None = None,
) -> EventPage:
    """The last `limit` events in match-time order (before `before`, if given), oldest first.

    Keyset pagination: the query reads backwards from the cursor and stops after `limit + 1` rows,
    the extra row only telling whether an earlier page exists. The cost of a page does not grow with
    how far back it is, and an event added meanwhile cannot shift a page boundary.
    """
    _check_limit(limit, MAX_EVENTS_LIMIT)
    rows = list(await conn.execute(_events_statement(fixture_id, limit, before)))
    earlier = len(rows) > limit
    page = rows[:limit][::-1]
    next_before = _cursor(page[0]).encode() if earlier and page else None
    return EventPage(events=[_event_view(row) for row in page], next_before=next_before)


def _events_statement(fixture_id: int, limit: int, before: EventCursor | None) -> Select[Any]:
    # One pass over the match's log: the first `event` entry and whether any amendment exists,
    # per event. A match's log is a few hundred rows, so this beats a per-event lookup on a
    # column (match_event_id) that has no index.
    log = (
        select(
            timeline_item.c.match_event_id,
            func.min(timeline_item.c.seq).filter(timeline_item.c.kind == "event").label("seq"),
            func.bool_or(timeline_item.c.kind == "amendment").label("amended"),
        )
        .where(timeline_item.c.fixture_id == fixture_id, timeline_item.c.match_event_id.is_not(None))
        .group_by(timeline_item.c.match_event_id)
        .subquery("log")
    )
    statement = (
        select(
            match_event.c.id,
            match_event.c.stream,
            match_event.c.provider_event_id,
            match_event.c.type,
            match_event.c.provider_type_id,
            match_event.c.minute,
            match_event.c.extra_minute,
            match_event.c.sort_order,
            match_event.c.side,
            match_event.c.body,
            match_event.c.retracted_at,
            log.c.seq,
            log.c.amended,
        )
        .select_from(match_event.outerjoin(log, log.c.match_event_id == match_event.c.id))
        .where(match_event.c.fixture_id == fixture_id)
    )
    if before is not None:
        statement = statement.where(tuple_(*_EVENT_KEY) < tuple_(*before.sort_key()))
    return statement.order_by(*(part.desc() for part in _EVENT_KEY)).limit(limit + 1)


def _check_limit(limit: int, maximum: int) -> None:
    if not 1 <= limit <= maximum:
        raise ValueError(f"limit must be between 1 and {maximum}, not {limit}")


def _match_view(row: _Row) -> MatchView:
    board: Mapping[str, Any] = row.board or {}
    return MatchView(
        fixture=FixtureView(
            id=row.id,
            name=row.name,
            sport=row.sport,
            kickoff=row.starting_at,
            home=_optional(TeamView, row.home_team),
            away=_optional(TeamView, row.away_team),
            competition=_optional(CompetitionView, row.competition),
            league_id=row.league_id,
            season_id=row.season_id,
        ),
        state=row.state,
        score=ScoreView(home=row.home_score or 0, away=row.away_score or 0),
        minute=board.get("minute"),
        version=row.version or 0,
        updated_at=row.updated_at,
        **play_of(row.id, board).play_fields(),
    )


def _optional(model: type[ViewT], value: Mapping[str, Any] | None) -> ViewT | None:
    return None if value is None else model.model_validate(value)


def _event_view(row: _Row) -> EventView:
    body: Mapping[str, Any] = row.body
    return EventView(
        seq=row.seq,
        stream=row.stream,
        provider_event_id=row.provider_event_id,
        type=row.type,
        provider_type_id=row.provider_type_id,
        minute=row.minute,
        extra_minute=row.extra_minute,
        sort_order=row.sort_order,
        side=row.side,
        player=player_view(body.get("player_id"), body.get("player_name")),
        related_player=player_view(body.get("related_player_id"), body.get("related_player_name")),
        result=body.get("result"),
        info=body.get("info"),
        retracted=row.retracted_at is not None,
        amended=bool(row.amended),
        ball=ball_view(row.id, body),
    )


def _cursor(row: _Row) -> EventCursor:
    return EventCursor(minute=row.minute, extra_minute=row.extra_minute, sort_order=row.sort_order, id=row.id)
