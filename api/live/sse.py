"""Server-sent events: the wire format, and the two streams (one match, every live match).

Each change is one `event: value` whose `data` is a `LiveValue` as JSON. On the one-match stream
its `id` is the version, so a reconnecting browser sends it back as `Last-Event-ID` and gets exactly
what it missed. The all-live stream carries no id (a version belongs to one match): a client that
reconnects gets every live match's current value again. A comment line every keep-alive interval
keeps proxies from closing an idle stream and tells the client the server is still there.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable

from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError
from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from api.live.changes import LiveValue
from api.live.subscriber import Subscriber, SubscriberDroppedError, cut_when_dropped
from api.live.tracking import VersionTracker
from scoreline.logging import get_logger
from scoreline.readmodel.states import LIVE_STATES

log = get_logger(__name__)

KEEP_ALIVE = ": keep-alive\n\n"
HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
"""No caching, and no buffering in a proxy (nginx honours X-Accel-Buffering)."""


def value_event(value: LiveValue, *, with_id: bool) -> str:
    lines = ["event: value"]
    if with_id:
        lines.append(f"id: {value.version}")
    lines.append(f"data: {value.wire}")
    return "\n".join(lines) + "\n\n"


class EventStreamResponse(StreamingResponse):
    """A `text/event-stream` response that always closes its stream and runs `on_close`.

    Starlette cancels the sending task when the client goes away; if the stream was waiting in a
    `send` at that moment it is never resumed, so it is closed here explicitly (its `finally`
    blocks run) and the subscription and connection slot are released however the response ends:
    a client dropped as too slow that is stuck in a `send` is cut (`cut_when_dropped`).
    """

    media_type = "text/event-stream"

    def __init__(
        self, events: AsyncIterator[str], subscriber: Subscriber, on_close: Callable[[], None]
    ) -> None:
        super().__init__(events, headers=HEADERS)
        self._events = events
        self._subscriber = subscriber
        self._on_close = on_close

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await cut_when_dropped(self._subscriber, super().__call__(scope, receive, send))
        finally:
            aclose = getattr(self._events, "aclose", None)
            if aclose is not None:
                await aclose()
            self._on_close()


async def match_stream(
    first: LiveValue | None, subscriber: Subscriber, tracker: VersionTracker, keepalive: float
) -> AsyncIterator[str]:
    """The first value (None: it is queued in the subscriber, as a delayed stream's is), then
    every newer version of one match."""
    fitted = None if first is None else await tracker.fit(first)
    if fitted is not None:
        yield value_event(fitted, with_id=True)
    async for value in _changes(subscriber, tracker, keepalive):
        yield value_event(value, with_id=True) if value is not None else KEEP_ALIVE


async def live_stream(
    current: Iterable[LiveValue], subscriber: Subscriber, tracker: VersionTracker, keepalive: float
) -> AsyncIterator[str]:
    """Every live match's current value, then every change of a match that is (or was just) live.

    A match that kicks off joins the stream with the change that made it live; one that ends
    leaves it after the change that says so.
    """
    showing: set[int] = set()
    for now in current:
        fitted = await tracker.fit(now)
        if fitted is not None:
            showing.add(now.fixture_id)
            yield value_event(fitted, with_id=False)
    async for value in _changes(subscriber, tracker, keepalive):
        if value is None:
            yield KEEP_ALIVE
            continue
        live = value.match.state in LIVE_STATES
        if not live and value.fixture_id not in showing:
            tracker.forget(value.fixture_id)
            continue
        if live:
            showing.add(value.fixture_id)
        else:
            showing.discard(value.fixture_id)
        yield value_event(value, with_id=False)


async def _changes(
    subscriber: Subscriber, tracker: VersionTracker, keepalive: float
) -> AsyncIterator[LiveValue | None]:
    """Fitted changes for this connection, None for each quiet keep-alive interval.

    Ends (and so ends the response) when the subscriber is dropped or a gap cannot be read; the
    client reconnects and resumes.
    """
    while True:
        try:
            value = await subscriber.next(keepalive)
            if value is None:
                yield None
                continue
            fitted = await tracker.fit(value)
        except SubscriberDroppedError:
            return
        except (DBAPIError, PoolTimeoutError, OSError) as error:
            log.warning(
                "live.stream_ended", subscriber=subscriber.id, error=f"{type(error).__name__}: {error}"
            )
            return
        if fitted is not None:
            yield fitted
