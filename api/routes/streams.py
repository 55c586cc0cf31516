"""Live screens: one match's SSE stream, every live match's SSE stream, and the WebSocket.

The handlers subscribe before they read the first value, so a change committed in between is
queued rather than lost (and dropped later if the first value already had it). A match that does
not exist is a 404 with the usual error body before any stream starts.

Every connection first takes a slot of the process's connection limits (`api.live.limits`) and
gives it back however it ends. A refused stream is a 429 (this client holds its share) or a 503
(the process is full) with `Retry-After`; a refused WebSocket is accepted and closed with 1013.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Header, Query, Request, WebSocket
from pydantic import BeforeValidator

from api.errors import ApiError
from api.live.changes import LiveValue
from api.live.delay import Delay, first_due
from api.live.limits import RETRY_AFTER_SECONDS, Slot, TooManyConnectionsError
from api.live.runtime import LiveDep, LiveRuntime
from api.live.sse import EventStreamResponse, live_stream, match_stream
from api.live.subscriber import Subscriber
from api.live.tracking import VersionTracker
from api.live.ws import TRY_AGAIN_LATER, LiveSocket
from api.routes.matches import FixtureId
from scoreline.readmodel.ordering import BIGINT_MAX

router = APIRouter(tags=["live"])


def _digits_only(header: object) -> object:
    """An id this API sent is plain decimal digits; pydantic's int parsing would also take `1.0`,
    `+1`, `1_0` or `-0`, which no stream ever sent, so those are junk (422) rather than a version."""
    if header is None or (isinstance(header, str) and header.isascii() and header.isdigit()):
        return header
    raise ValueError("must be a version this stream sent: decimal digits only")


LastEventId = Annotated[
    int | None,
    BeforeValidator(_digits_only),
    Header(
        alias="Last-Event-ID",
        ge=0,
        le=BIGINT_MAX,
        description="The last `id` this client received; the stream resumes after it with no gap.",
    ),
]
MatchesFilter = Annotated[Literal["live"], Query(description="Which matches: `live` is every live match.")]

# The stream routes name their status: FastAPI reads it from the response class's `status_code`
# parameter otherwise, which `EventStreamResponse` does not take, and /openapi.json would not build.
_EVENT_STREAM: dict[int | str, dict[str, Any]] = {
    200: {"content": {"text/event-stream": {}}, "description": "`event: value` messages."},
    429: {"description": "This client address holds its share of live connections; see Retry-After."},
    503: {"description": "This server holds all the live connections it serves; see Retry-After."},
}


def _admit(live: LiveRuntime, request: Request) -> Slot:
    """A slot for this stream, or the HTTP refusal (429 for the client, 503 for the process)."""
    try:
        return live.limits.admit(request, "sse")
    except TooManyConnectionsError as refused:
        status, code = (429, "too_many_connections") if refused.reason == "client" else (503, "unavailable")
        headers = {"Retry-After": str(RETRY_AFTER_SECONDS)}
        raise ApiError(status, code, str(refused), headers=headers) from None


async def _hold(live: LiveRuntime, subscriber: Subscriber, first: list[LiveValue]) -> None:
    """Queue a delayed stream's first values, each due `delay` after its version's commit."""
    for value, due in zip(first, await first_due(live.engine, first, subscriber.delay), strict=True):
        subscriber.offer(value, due=due)


def _closer(live: LiveRuntime, subscriber: Subscriber, slot: Slot) -> Callable[[], None]:
    """What ends a stream's hold on the process: its subscription and its slot."""

    def close() -> None:
        live.hub.leave(subscriber)
        slot.release()

    return close


@router.get(
    "/v1/matches/{fixture_id}/stream",
    response_class=EventStreamResponse,
    status_code=200,
    responses={**_EVENT_STREAM, 404: {"description": "No such match."}},
)
async def match_changes(
    request: Request,
    fixture_id: FixtureId,
    live: LiveDep,
    last_event_id: LastEventId = None,
    delay: Delay = 0,
) -> EventStreamResponse:
    """The match's current value, then one `event: value` per change (`id` = version); with
    `delay`, each of them that many seconds after its commit."""
    slot = _admit(live, request)
    subscriber = live.hub.subscriber("sse", delay=delay)
    close = _closer(live, subscriber, slot)
    live.hub.follow(subscriber, fixture_id)
    try:
        first = await live.first_value(fixture_id, last_event_id)
        if first is not None and delay:
            await _hold(live, subscriber, [first])
    except BaseException:
        close()
        raise
    if first is None:
        close()
        raise ApiError(404, "match_not_found", f"no match with fixture id {fixture_id}")
    shown_first = None if delay else first
    events = match_stream(shown_first, subscriber, VersionTracker(live.engine), live.keepalive)
    return EventStreamResponse(events, subscriber, on_close=close)


@router.get("/v1/stream", response_class=EventStreamResponse, status_code=200, responses=_EVENT_STREAM)
async def live_changes(
    request: Request, matches: MatchesFilter, live: LiveDep, delay: Delay = 0
) -> EventStreamResponse:
    """Every live match's current value, then every change of a live match (no `id`); with
    `delay`, each of them that many seconds after its commit."""
    slot = _admit(live, request)
    subscriber = live.hub.subscriber("sse-live", delay=delay)
    close = _closer(live, subscriber, slot)
    live.hub.follow_everything(subscriber, True)
    try:
        current = await live.live_values()
        if delay:
            await _hold(live, subscriber, current)
            current = []
    except BaseException:
        close()
        raise
    events = live_stream(current, subscriber, VersionTracker(live.engine), live.keepalive)
    return EventStreamResponse(events, subscriber, on_close=close)


@router.websocket("/v1/ws")
async def live_socket(websocket: WebSocket, live: LiveDep, delay: Delay = 0) -> None:
    """Channels `scores`, `status` and `match:<id>`; see `api.live.ws` for the protocol. With
    `delay`, every message comes that many seconds after its commit (an invalid one: close 1008)."""
    try:
        slot = live.limits.admit(websocket, "websocket")
    except TooManyConnectionsError as refused:
        # Accepted first: a close before the handshake is an HTTP 403, with no code to tell a
        # client to come back later.
        await websocket.accept()
        await websocket.close(TRY_AGAIN_LATER, str(refused))
        return
    try:
        await LiveSocket(websocket, live, delay).run()
    finally:
        slot.release()
