"""The WebSocket protocol: subscribe to channels, get only what changed.

Client → server, JSON text frames:

    {"op": "subscribe",   "channels": ["scores", "status", "match:81000001"]}
    {"op": "unsubscribe", "channels": ["match:81000001"]}

Server → client:

- `{"type": "subscribed" | "unsubscribed", "channels": [...]}` — the ack, before any value.
- `match:{id}` → `{"type": "value", "channel", ...LiveValue}`: the current value on subscribe,
  then every newer version with the log entries since the previous one (as on the SSE stream).
- `scores` → `{"type": "score", "channel", "fixture_id", "version", "score"}`: every live match's
  score on subscribe, then a message only when a match's score changes. A cricket match's message
  also carries `current_innings` (the match view's last innings: runs, wickets, overs …) and is
  sent when that changes too, since a wicket or a dot ball moves the board but not the runs.
- `status` → `{"type": "status", "channel", "fixture_id", "version", "state"}`: likewise for the
  match state (kick-off, half time, full time...).
- `{"type": "error", "code", "message"}` for a message the server cannot use (`bad_message`: not
  JSON or not the protocol; `unknown_channel`; `too_many_channels`; `match_not_found`), or when
  current values could not be read (`unavailable`). The connection stays open.

A channel nobody subscribed to costs nothing: the hub loads a match's change only if a connection
follows it (or takes every match, as `scores` and `status` do). A connection that falls behind is
closed with code 1013 (try again later) instead of slowing the others; so is one opened past the
connection limits (`api.live.limits`). With `?delay=SECONDS` (0 to 300) every message, the first values included, comes that long after
the commit it shows (`api.live.delay`). A frame bigger than `MAX_FRAME_BYTES` is refused by the
server's protocol layer (close 1009) from its header, before its payload is read.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError
from starlette.websockets import WebSocket, WebSocketDisconnect

from api.live.changes import LiveValue, current_value
from api.live.delay import first_due
from api.live.runtime import LiveRuntime
from api.live.subscriber import Subscriber, SubscriberDroppedError, cut_when_dropped
from api.live.tracking import VersionTracker
from scoreline.logging import get_logger
from scoreline.readmodel.ordering import BIGINT_MAX
from scoreline.readmodel.views import InningsView

log = get_logger(__name__)

MAX_CHANNELS = 100
"""Channels one connection may hold; more is a bug in the client, not a screen."""
MAX_MESSAGE = 8192
"""Characters in one client message."""
MAX_FRAME_BYTES = 4 * MAX_MESSAGE
"""The server's `ws_max_size`: a message of `MAX_MESSAGE` characters, each up to 4 bytes in UTF-8.
Bigger is refused by the protocol (close 1009) instead of buffered only to fail the check above."""
TRY_AGAIN_LATER = 1013
"""WebSocket close code: the client fell behind and was dropped, or the connection limits are full."""
SERVER_ERROR = 1011
_MATCH_CHANNEL = re.compile(r"^match:([1-9][0-9]{0,18})$")
"""Up to 19 digits, which is not yet bigint's range: `_is_channel` bounds the value too."""
_EVERY_MATCH = ("scores", "status")

_Score = tuple[tuple[int, int], InningsView | None]
"""What a `scores` message shows: home and away, and a cricket match's current innings."""


class Command(BaseModel):
    op: Literal["subscribe", "unsubscribe"]
    channels: list[str] = Field(min_length=1, max_length=MAX_CHANNELS)


class BadMessageError(ValueError):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def parse(text: str | None) -> Command:
    """A client message as a command.

    Raises:
        BadMessageError: not a JSON text frame of the protocol, or a channel that does not exist.
    """
    if text is None:
        raise BadMessageError("bad_message", "send JSON text frames")
    if len(text) > MAX_MESSAGE:
        raise BadMessageError("bad_message", f"message longer than {MAX_MESSAGE} characters")
    try:
        command = Command.model_validate_json(text)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "message"
        raise BadMessageError("bad_message", f"{where}: {first['msg']}") from None
    unknown = [channel for channel in command.channels if not _is_channel(channel)]
    if unknown:
        raise BadMessageError(
            "unknown_channel", f"unknown channel {unknown[0]!r}: use scores, status or match:<id>"
        )
    return command


def _is_channel(channel: str) -> bool:
    """`scores`, `status`, or a match whose id a fixture can have (Postgres bigint)."""
    if channel in _EVERY_MATCH:
        return True
    found = _MATCH_CHANNEL.match(channel)
    return found is not None and int(found[1]) <= BIGINT_MAX


class LiveSocket:
    """One WebSocket connection: its channels, what it sent, and the two loops that drive it."""

    def __init__(self, websocket: WebSocket, live: LiveRuntime, delay: float = 0.0) -> None:
        self._socket = websocket
        self._live = live
        self._subscriber: Subscriber = live.hub.subscriber("ws", delay=delay)
        self._tracker = VersionTracker(live.engine)
        self._channels: set[str] = set()
        self._scores: dict[int, tuple[int, _Score]] = {}
        self._states: dict[int, tuple[int, str]] = {}
        self._lock = asyncio.Lock()
        """Held while a change or a command is applied and sent, so the two loops never interleave."""

    async def run(self) -> None:
        """Serve the connection until it ends; one dropped as too slow but stuck in a send is cut."""
        await cut_when_dropped(self._subscriber, self._serve())

    async def _serve(self) -> None:
        await self._socket.accept()
        tasks = [
            asyncio.create_task(self._receive_forever(), name="ws-receive"),
            asyncio.create_task(self._push_forever(), name="ws-push"),
        ]
        try:
            done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
            for task in done:
                error = task.exception()
                if error is not None and not isinstance(error, WebSocketDisconnect):
                    raise error
        finally:
            for task in tasks:
                task.cancel()
            self._live.hub.leave(self._subscriber)

    # --- client → server ----------------------------------------------------------------------

    async def _receive_forever(self) -> None:
        while True:
            message = await self._socket.receive()
            if message["type"] == "websocket.disconnect":
                return
            try:
                command = parse(message.get("text"))
            except BadMessageError as error:
                await self._send({"type": "error", "code": error.code, "message": str(error)})
                continue
            async with self._lock:
                try:
                    if command.op == "subscribe":
                        await self._subscribe(command.channels)
                    else:
                        await self._unsubscribe(command.channels)
                except (DBAPIError, PoolTimeoutError, OSError) as error:
                    log.warning("live.subscribe_failed", error=f"{type(error).__name__}: {error}")
                    await self._error("unavailable", "could not read the current values; try again")

    async def _subscribe(self, channels: list[str]) -> None:
        wanted = [c for c in dict.fromkeys(channels) if c not in self._channels]
        if len(self._channels) + len(wanted) > MAX_CHANNELS:
            await self._error("too_many_channels", f"at most {MAX_CHANNELS} channels per connection")
            return
        hub = self._live.hub
        accepted: list[str] = []
        first: list[dict[str, Any] | str] = []
        for channel in wanted:
            if channel in _EVERY_MATCH:
                hub.follow_everything(self._subscriber, True)
                first += await self._every_match_now(channel)
            else:
                fixture_id = int(channel.split(":", 1)[1])
                hub.follow(self._subscriber, fixture_id)
                view = await self._live.current_view(fixture_id)
                if view is None:
                    hub.unfollow(self._subscriber, fixture_id)
                    await self._error("match_not_found", f"no match with fixture id {fixture_id}")
                    continue
                if self._subscriber.delay:
                    await self._hold([current_value(view)])
                else:
                    fitted = await self._tracker.fit(current_value(view))
                    if fitted is not None:
                        first.append(_value_message(channel, fitted))
            self._channels.add(channel)
            accepted.append(channel)
        await self._send({"type": "subscribed", "channels": accepted})
        for message in first:
            await self._send(message)

    async def _every_match_now(self, channel: str) -> list[dict[str, Any]]:
        """The channel's first messages; a delayed connection's come through its queue instead."""
        values = await self._live.live_values()
        if self._subscriber.delay:
            await self._hold(values)
            return []
        messages = []
        for value in values:
            message = self._score(value) if channel == "scores" else self._state(value)
            if message is not None:
                messages.append(message)
        return messages

    async def _hold(self, values: list[LiveValue]) -> None:
        """Queue first values, each due `delay` after its version's commit (`api.live.delay`)."""
        dues = await first_due(self._live.engine, values, self._subscriber.delay)
        for value, due in zip(values, dues, strict=True):
            self._subscriber.offer(value, due=due)

    async def _unsubscribe(self, channels: list[str]) -> None:
        hub = self._live.hub
        removed = [c for c in dict.fromkeys(channels) if c in self._channels]
        for channel in removed:
            self._channels.discard(channel)
            if channel == "scores":
                self._scores.clear()
            elif channel == "status":
                self._states.clear()
            else:
                fixture_id = int(channel.split(":", 1)[1])
                hub.unfollow(self._subscriber, fixture_id)
                self._tracker.forget(fixture_id)
        if not any(c in self._channels for c in _EVERY_MATCH):
            hub.follow_everything(self._subscriber, False)
        await self._send({"type": "unsubscribed", "channels": removed})

    # --- server → client ----------------------------------------------------------------------

    async def _push_forever(self) -> None:
        while True:
            try:
                value = await self._subscriber.next(self._live.keepalive)
            except SubscriberDroppedError:
                await self._socket.close(TRY_AGAIN_LATER, "too slow: reconnect")
                return
            if value is None:
                continue
            async with self._lock:
                try:
                    await self._push(value)
                except (DBAPIError, PoolTimeoutError, OSError) as error:
                    log.warning("live.socket_ended", error=f"{type(error).__name__}: {error}")
                    await self._socket.close(SERVER_ERROR, "could not read the change")
                    return

    async def _push(self, value: LiveValue) -> None:
        channel = f"match:{value.fixture_id}"
        if channel in self._channels:
            fitted = await self._tracker.fit(value)
            if fitted is not None:
                await self._send(_value_message(channel, fitted))
        if "scores" in self._channels and (message := self._score(value)) is not None:
            await self._send(message)
        if "status" in self._channels and (message := self._state(value)) is not None:
            await self._send(message)

    def _score(self, value: LiveValue) -> dict[str, Any] | None:
        """The score message if this value changes the score this connection showed."""
        match = value.match
        current = match.innings[-1] if match.innings else None
        score: _Score = ((match.score.home, match.score.away), current)
        shown = self._scores.get(value.fixture_id)
        if shown is not None and value.version <= shown[0]:
            return None
        self._scores[value.fixture_id] = (value.version, score)
        if shown is not None and shown[1] == score:
            return None
        message: dict[str, Any] = {
            "type": "score",
            "channel": "scores",
            "fixture_id": value.fixture_id,
            "version": value.version,
            "score": {"home": match.score.home, "away": match.score.away},
        }
        if current is not None:
            message["current_innings"] = current.model_dump(mode="json")
        return message

    def _state(self, value: LiveValue) -> dict[str, Any] | None:
        """The status message if this value changes the state this connection showed."""
        state = value.match.state.value
        shown = self._states.get(value.fixture_id)
        if shown is not None and value.version <= shown[0]:
            return None
        self._states[value.fixture_id] = (value.version, state)
        if shown is not None and shown[1] == state:
            return None
        return {
            "type": "status",
            "channel": "status",
            "fixture_id": value.fixture_id,
            "version": value.version,
            "state": state,
        }

    async def _error(self, code: str, message: str) -> None:
        await self._send({"type": "error", "code": code, "message": message})

    async def _send(self, message: dict[str, Any] | str) -> None:
        """Send a message; a string is JSON already."""
        if isinstance(message, str):
            await self._socket.send_text(message)
        else:
            await self._socket.send_json(message)


def _value_message(channel: str, value: LiveValue) -> str:
    """`{"type": "value", "channel": ..., ...value}` around the value's shared serialised form."""
    return f'{{"type":"value","channel":{json.dumps(channel)},{value.wire[1:]}'
