"""The fans' reads: match list, one match, and its events (design §5, "Fans").

Thin on purpose: the read model decides where an answer comes from (Redis, else Postgres, and
Postgres whenever this process's outbox listener heard of a newer version than Redis holds); these
handlers only parse the query, map "no such match" to 404 and mark the answers as live data.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Response

from api.deps import EngineDep, RedisDep
from api.errors import ApiError
from api.live.runtime import LiveDep
from scoreline.readmodel.ordering import EventCursor, InvalidCursorError
from scoreline.readmodel.queries import (
    DEFAULT_EVENTS_LIMIT,
    DEFAULT_MATCHES_LIMIT,
    MAX_EVENTS_LIMIT,
    MAX_MATCHES_LIMIT,
)
from scoreline.readmodel.reads import get_events, get_matches
from scoreline.readmodel.states import UnknownStateError, parse_state_filter
from scoreline.readmodel.views import EventPage, MatchList, MatchView

router = APIRouter(prefix="/v1/matches", tags=["matches"])

# Scores change by the second: a cache may keep a copy but must ask before reusing it.
LIVE_CACHE_CONTROL = "no-cache"

FixtureId = Annotated[int, Path(ge=1, le=2**63 - 1, description="The provider's fixture id.")]
StateFilter = Annotated[
    str | None,
    Query(
        max_length=400,
        description="`live`, a normalised state such as `finished` or `scheduled`, or a comma list.",
    ),
]
MatchesLimit = Annotated[int, Query(ge=1, le=MAX_MATCHES_LIMIT)]
EventsLimit = Annotated[
    int, Query(ge=1, le=MAX_EVENTS_LIMIT, description="The last N events before `before`.")
]
Before = Annotated[str | None, Query(description="The `next_before` of a previous page.")]

_NOT_FOUND: dict[int | str, dict[str, Any]] = {404: {"description": "No such match."}}


@router.get("", response_model=MatchList)
async def list_matches(
    *,
    engine: EngineDep,
    response: Response,
    state: StateFilter = None,
    limit: MatchesLimit = DEFAULT_MATCHES_LIMIT,
) -> MatchList:
    try:
        states = parse_state_filter(state)
    except UnknownStateError as error:
        raise _bad_query("state", str(error)) from error
    response.headers["Cache-Control"] = LIVE_CACHE_CONTROL
    return await get_matches(engine, states, limit)


@router.get("/{fixture_id}", response_model=MatchView, responses=_NOT_FOUND)
async def match(*, fixture_id: FixtureId, live: LiveDep, response: Response) -> MatchView:
    view = await live.current_view(fixture_id)
    if view is None:
        raise _match_not_found(fixture_id)
    response.headers["Cache-Control"] = LIVE_CACHE_CONTROL
    return view


@router.get("/{fixture_id}/events", response_model=EventPage, responses=_NOT_FOUND)
async def events(
    *,
    fixture_id: FixtureId,
    engine: EngineDep,
    redis: RedisDep,
    live: LiveDep,
    response: Response,
    limit: EventsLimit = DEFAULT_EVENTS_LIMIT,
    before: Before = None,
) -> EventPage:
    try:
        cursor = None if before is None else EventCursor.decode(before)
    except InvalidCursorError as error:
        raise _bad_query("before", str(error)) from error
    if not live.hub.knows(fixture_id):
        await live.current_view(fixture_id)  # the floor a cached page must reach (`current_view`)
    page = await get_events(
        engine, redis, fixture_id, limit, cursor, not_older_than=live.hub.announced(fixture_id)
    )
    if page is None:
        raise _match_not_found(fixture_id)
    response.headers["Cache-Control"] = LIVE_CACHE_CONTROL
    return page


def _match_not_found(fixture_id: int) -> ApiError:
    return ApiError(404, "match_not_found", f"no match with fixture id {fixture_id}")


def _bad_query(name: str, message: str) -> ApiError:
    """The same body FastAPI's own query validation produces, so clients handle one shape."""
    path = f"query.{name}"
    return ApiError(
        422,
        "validation_error",
        f"invalid request: {path}",
        fields=[{"path": path, "message": message, "type": "value_error"}],
    )
