"""Live screens: one match's SSE stream, every live match's SSE stream, and the WebSocket.

The handlers subscribe before they read the first value, so a change committed in between is
queued rather than lost (and dropped later if the first value already had it). A match that does
not exist is a 404 with the usual error body before any stream starts.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Header, Query, WebSocket

from api.errors import ApiError
from api.live.runtime import LiveDep
from api.live.sse import EventStreamResponse, live_stream, match_stream
from api.live.tracking import VersionTracker
from api.live.ws import LiveSocket
from api.routes.matches import FixtureId

router = APIRouter(tags=["live"])

LastEventId = Annotated[
    int | None,
    Header(
        alias="Last-Event-ID",
        ge=0,
        le=2**63 - 1,
        description="The last `id` this client received; the stream resumes after it with no gap.",
    ),
]
MatchesFilter = Annotated[Literal["live"], Query(description="Which matches: `live` is every live match.")]

# The stream routes name their status: FastAPI reads it from the response class's `status_code`
# parameter otherwise, which `EventStreamResponse` does not take, and /openapi.json would not build.
_EVENT_STREAM: dict[int | str, dict[str, Any]] = {
    200: {"content": {"text/event-stream": {}}, "description": "`event: value` messages."},
}


@router.get(
    "/v1/matches/{fixture_id}/stream",
    response_class=EventStreamResponse,
    status_code=200,
    responses={**_EVENT_STREAM, 404: {"description": "No such match."}},
)
async def match_changes(
    fixture_id: FixtureId, live: LiveDep, last_event_id: LastEventId = None
) -> EventStreamResponse:
    """The match's current value, then one `event: value` per change (`id` = version)."""
    hub = live.hub
    subscriber = hub.subscriber("sse")
    hub.follow(subscriber, fixture_id)
    try:
        first = await live.first_value(fixture_id, last_event_id)
    except BaseException:
        hub.leave(subscriber)
        raise
    if first is None:
        hub.leave(subscriber)
        raise ApiError(404, "match_not_found", f"no match with fixture id {fixture_id}")
    events = match_stream(first, subscriber, VersionTracker(live.engine), live.keepalive)
    return EventStreamResponse(events, on_close=lambda: hub.leave(subscriber))


@router.get("/v1/stream", response_class=EventStreamResponse, status_code=200, responses=_EVENT_STREAM)
async def live_changes(matches: MatchesFilter, live: LiveDep) -> EventStreamResponse:
    """Every live match's current value, then every change of a live match (no `id`)."""
    hub = live.hub
    subscriber = hub.subscriber("sse-live")
    hub.follow_everything(subscriber, True)
    try:
        current = await live.live_values()
    except BaseException:
        hub.leave(subscriber)
        raise
    events = live_stream(current, subscriber, VersionTracker(live.engine), live.keepalive)
    return EventStreamResponse(events, on_close=lambda: hub.leave(subscriber))


@router.websocket("/v1/ws")
async def live_socket(websocket: WebSocket, live: LiveDep) -> None:
    """Channels `scores`, `status` and `match:<id>`; see `api.live.ws` for the protocol."""
    await LiveSocket(websocket, live).run()
