"""The soak's live screens: SSE and WebSocket clients that follow matches through every fault.

Each client follows a seeded choice of matches the way a screen does: an SSE client opens one
`/v1/matches/{id}/stream` per match (and maybe `/v1/stream` too), a WebSocket client one `/v1/ws`
subscribed to `match:<id>` channels (and maybe `scores` and `status`). When a connection drops (an
API process killed, a client dropped as too slow) it reconnects to the next API process, an SSE
match stream with `Last-Event-ID`. Everything a client is sent is recorded in arrival order; the
rules it is checked by, per road, are in `devkit.soak.stream_check`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx
from sqlalchemy import select
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import WebSocketException

from devkit.soak.model import CheckResult, SoakFixtures, SoakTargets, Violation
from devkit.soak.stream_check import (
    CHECK,
    Latest,
    MatchTruth,
    Road,
    Seen,
    Trail,
    check_latest,
    check_trail,
)
from scoreline.db.engine import create_engine
from scoreline.db.fixture_scoreboard import select_fixture_with_scoreboard
from scoreline.db.tables import fixture, scoreboard, timeline_item

CONNECT_TIMEOUT = 3.0
"""Seconds to open a connection; a dead API process refuses at once, a stalled one waits this long."""
READ_TIMEOUT = 45.0
"""Seconds of silence before a stream counts as dead: three of the API's 15 s keep-alives."""
RETRY_DELAY = (0.2, 1.0)
"""Seconds (drawn from the seeded rng) before the next attempt after a failure."""
SETTLE_TIMEOUT = 15.0
"""Seconds the check's last resume of a client may take."""
MATCHES_PER_CLIENT = 3
SETTLE_CONCURRENCY = 50
"""Clients resuming at once in the check: enough to be quick, few enough for two API processes."""
_NETWORK_ERRORS = (httpx.HTTPError, OSError, WebSocketException, TimeoutError)


class Endpoints:
    """The API processes, starting at a seeded one; `advance` moves to the next after a failure."""

    def __init__(self, urls: Sequence[str], start: int) -> None:
        self._urls = tuple(urls)
        self._index = start % len(self._urls)

    @property
    def current(self) -> str:
        return self._urls[self._index]

    def advance(self) -> None:
        self._index = (self._index + 1) % len(self._urls)


@dataclass
class Counts:
    """One client's share of the part's figures: messages it was sent, and its reconnects."""

    messages: int = 0
    reconnects: int = 0


def seen_of(body: dict[str, Any], connection: int) -> Seen:
    """A `LiveValue` (SSE data or WebSocket `value` message) as the check records it."""
    return Seen(
        connection=connection,
        version=int(body["version"]),
        previous=None if body["previous"] is None else int(body["previous"]),
        seqs=tuple(int(entry["seq"]) for entry in body["entries"]),
    )


def score_of(body: dict[str, Any]) -> str:
    """A `scores` message's headline: `home-away` (a cricket innings move keeps it)."""
    score = body["score"]
    return f"{score['home']}-{score['away']}"


class SseEvents:
    """Parses `text/event-stream` lines into `(event, id, data)` as they arrive (comments skipped)."""

    def __init__(self) -> None:
        self._fields: dict[str, str] = {}
        self._data: list[str] = []

    def feed(self, line: str) -> tuple[str | None, str | None, str] | None:
        """The event this line completes, if it is the blank line that ends one."""
        if line.startswith(":"):
            return None
        if line:
            name, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if name == "data":
                self._data.append(value)
            else:
                self._fields[name] = value
            return None
        event = (
            (self._fields.get("event"), self._fields.get("id"), "\n".join(self._data)) if self._data else None
        )
        self._fields, self._data = {}, []
        return event


async def sse_values(response: httpx.Response) -> AsyncIterator[dict[str, Any]]:
    """The `event: value` bodies of an open stream, until it ends."""
    parser = SseEvents()
    async for line in response.aiter_lines():
        event = parser.feed(line)
        if event is not None and event[0] == "value":
            body: dict[str, Any] = json.loads(event[2])
            yield body


def _http_client() -> httpx.AsyncClient:
    return httpx.AsyncClient(timeout=httpx.Timeout(CONNECT_TIMEOUT, read=READ_TIMEOUT))


class MatchStream:
    """One SSE client's stream of one match: resumed with `Last-Event-ID` after every drop."""

    def __init__(self, name: str, fixture_id: int, endpoints: Endpoints, rng: random.Random) -> None:
        self.name = name
        self.trail = Trail(name, fixture_id, Road.MATCH_SSE)
        self.counts = Counts()
        self._endpoints = endpoints
        self._rng = rng
        self._connections = 0

    async def run(self) -> None:
        """Follow until cancelled; every failure moves to the next API process and resumes."""
        async with _http_client() as client:
            while True:
                try:
                    await self._follow(client, stop_after_first=False)
                except _NETWORK_ERRORS:
                    pass
                self._endpoints.advance()
                await asyncio.sleep(self._rng.uniform(*RETRY_DELAY))

    async def settle(self, endpoints: Sequence[str]) -> None:
        """One last resume, as after a drop: the check then sees the client up to now."""
        async with _http_client() as client:
            for _ in endpoints:
                with contextlib.suppress(*_NETWORK_ERRORS):
                    async with asyncio.timeout(SETTLE_TIMEOUT):
                        if await self._follow(client, stop_after_first=True):
                            return
                self._endpoints.advance()

    async def _follow(self, client: httpx.AsyncClient, *, stop_after_first: bool) -> bool:
        """One connection; True once it delivered a value."""
        held = self.trail.held
        headers = {} if held is None else {"Last-Event-ID": str(held)}
        url = f"{self._endpoints.current}/v1/matches/{self.trail.fixture_id}/stream"
        async with client.stream("GET", url, headers=headers) as response:
            if response.status_code != 200:
                return False  # not created yet (404) or the API cannot answer: try again
            connection = self._opened(held)
            async for body in sse_values(response):
                self.trail.seen.append(seen_of(body, connection))
                self.counts.messages += 1
                if stop_after_first:
                    return True
        return False

    def _opened(self, held: int | None) -> int:
        connection = self._connections
        self._connections += 1
        if connection:
            self.counts.reconnects += 1
        if held is not None:
            self.trail.resumes[connection] = held
        return connection


class LiveStream:
    """One SSE client's `/v1/stream?matches=live`: no id, so a reconnect starts from current values."""

    def __init__(self, name: str, endpoints: Endpoints, rng: random.Random) -> None:
        self.name = name
        self.trails: dict[int, Trail] = {}
        self.counts = Counts()
        self._endpoints = endpoints
        self._rng = rng
        self._connections = 0

    async def run(self) -> None:
        async with _http_client() as client:
            while True:
                with contextlib.suppress(*_NETWORK_ERRORS):
                    await self._follow(client)
                self._endpoints.advance()
                await asyncio.sleep(self._rng.uniform(*RETRY_DELAY))

    async def _follow(self, client: httpx.AsyncClient) -> None:
        url = f"{self._endpoints.current}/v1/stream"
        async with client.stream("GET", url, params={"matches": "live"}) as response:
            if response.status_code != 200:
                return
            connection = self._connections
            self._connections += 1
            self.counts.reconnects += 1 if connection else 0
            async for body in sse_values(response):
                fixture_id = int(body["fixture_id"])
                trail = self.trails.setdefault(fixture_id, Trail(self.name, fixture_id, Road.LIVE_SSE))
                trail.seen.append(seen_of(body, connection))
                self.counts.messages += 1


@dataclass
class SocketRecord:
    """Everything one WebSocket client was sent, by channel, in arrival order."""

    name: str
    trails: dict[int, Trail]
    scores: list[Latest] = field(default_factory=list)
    states: list[Latest] = field(default_factory=list)
    value_scores: dict[tuple[int, int], str] = field(default_factory=dict)
    """The score each `match:<id>` value showed, by (fixture, version): what `scores` must agree with."""
    value_states: dict[tuple[int, int], str] = field(default_factory=dict)
    problems: list[Violation] = field(default_factory=list)
    """Protocol errors the server sent that a correct client never causes."""


class ReconnectError(Exception):
    """The server asked the client to start over (`unavailable`): a fresh connection does."""


class SocketClient:
    """One WebSocket screen: subscribes its channels, again each second for a match that does not
    exist yet, and after a drop reconnects and subscribes again (the protocol has no resume: a
    subscribe starts from the current value)."""

    def __init__(
        self,
        name: str,
        fixtures: Sequence[int],
        every_match: Sequence[str],
        endpoints: Endpoints,
        rng: random.Random,
    ) -> None:
        self.name = name
        self.record = SocketRecord(name, {f: Trail(name, f, Road.MATCH_WS) for f in fixtures})
        self.counts = Counts()
        self._every_match = tuple(every_match)
        self._endpoints = endpoints
        self._rng = rng
        self._connections = 0

    async def run(self) -> None:
        """Follow until cancelled."""
        while True:
            with contextlib.suppress(*_NETWORK_ERRORS, ReconnectError):
                await self._connect(self._channels(), until_values=False)
            self._endpoints.advance()
            await asyncio.sleep(self._rng.uniform(*RETRY_DELAY))

    async def settle(self, endpoints: Sequence[str]) -> None:
        """A last fresh connection to its match channels, so the check sees each at its version now."""
        channels = [f"match:{fixture_id}" for fixture_id in self.record.trails]
        for _ in endpoints:
            with contextlib.suppress(*_NETWORK_ERRORS, ReconnectError):
                async with asyncio.timeout(SETTLE_TIMEOUT):
                    await self._connect(channels, until_values=True)
                    return
            self._endpoints.advance()

    def _channels(self) -> list[str]:
        return [*(f"match:{fixture_id}" for fixture_id in self.record.trails), *self._every_match]

    async def _connect(self, channels: list[str], *, until_values: bool) -> None:
        """One connection; with `until_values`, it ends once every match channel sent its value."""
        url = self._endpoints.current.replace("http://", "ws://", 1) + "/v1/ws"
        async with connect(url, open_timeout=CONNECT_TIMEOUT) as socket:
            connection = self._connections
            self._connections += 1
            self.counts.reconnects += 1 if connection else 0
            unacknowledged = set(channels)
            waiting = {channel for channel in channels if channel.startswith("match:")}
            subscriber = asyncio.create_task(self._subscribe(socket, unacknowledged))
            try:
                async for raw in socket:
                    message: dict[str, Any] = json.loads(raw)
                    if message.get("type") == "subscribed":
                        unacknowledged.difference_update(message["channels"])
                    waiting.discard(self._on_message(message, connection) or "")
                    if until_values and not waiting:
                        return
            finally:
                subscriber.cancel()

    async def _subscribe(self, socket: ClientConnection, unacknowledged: set[str]) -> None:
        """Subscribe what is not acknowledged yet, every second: a match the server did not know
        (`match_not_found`) is picked up once its fixture exists. A closed socket ends it (the
        receiving loop sees the close and reconnects)."""
        with contextlib.suppress(*_NETWORK_ERRORS):
            while unacknowledged:
                await socket.send(json.dumps({"op": "subscribe", "channels": sorted(unacknowledged)}))
                await asyncio.sleep(1.0)

    def _on_message(self, message: dict[str, Any], connection: int) -> str | None:
        """Record one message; the channel of a value message (what `settle` waits for)."""
        kind = message.get("type")
        if kind == "value":
            return self._on_value(message, connection)
        if kind in ("score", "status"):
            self._on_latest(message, connection)
        elif kind == "error":
            self._on_error(message)
        return None

    def _on_value(self, message: dict[str, Any], connection: int) -> str:
        fixture_id = int(message["fixture_id"])
        trail = self.record.trails.get(fixture_id)
        if trail is not None:
            seen = seen_of(message, connection)
            trail.seen.append(seen)
            self.counts.messages += 1
            match = message["match"]
            self.record.value_scores[fixture_id, seen.version] = score_of(match)
            self.record.value_states[fixture_id, seen.version] = str(match["state"])
        return str(message["channel"])

    def _on_latest(self, message: dict[str, Any], connection: int) -> None:
        score = message["type"] == "score"
        shown = {key: message.get(key) for key in ("score", "current_innings", "state")}
        latest = Latest(
            connection=connection,
            fixture_id=int(message["fixture_id"]),
            version=int(message["version"]),
            shown=json.dumps(shown, sort_keys=True),
            headline=score_of(message) if score else str(message["state"]),
        )
        (self.record.scores if score else self.record.states).append(latest)
        self.counts.messages += 1

    def _on_error(self, message: dict[str, Any]) -> None:
        code = message.get("code")
        if code == "unavailable":
            raise ReconnectError
        if code != "match_not_found":
            self.record.problems.append(Violation(CHECK, f"{self.record.name} ws", f"server sent {message}"))

    def violations(self) -> list[Violation]:
        record = self.record
        return [
            *record.problems,
            *check_latest(record.name, "scores", record.scores, record.value_scores),
            *check_latest(record.name, "status", record.states, record.value_states),
        ]


class ScreenPart:
    """`sse_clients` SSE screens and `ws_clients` WebSocket screens on seeded matches.

    An SSE client follows one to three matches, one stream each, and half of them also watch
    `/v1/stream`; a WebSocket client subscribes one to three `match:<id>` channels and, each with
    even odds, `scores` and `status`. Every client (and stream) draws its own rng from `rng`, so
    its choices and retry timings do not depend on how the event loop interleaves the others.
    """

    name = "screens"

    def __init__(
        self,
        targets: SoakTargets,
        fixtures: SoakFixtures,
        rng: random.Random,
        sse_clients: int,
        ws_clients: int,
    ) -> None:
        self._targets = targets
        self._sse_clients = sse_clients
        self._ws_clients = ws_clients
        self._streams: list[MatchStream] = []
        self._lives: list[LiveStream] = []
        self._sockets: list[SocketClient] = []
        self._crashes: list[Violation] = []
        matches = fixtures.all
        for number in range(sse_clients if matches else 0):
            self._add_sse(f"sse-{number}", matches, random.Random(rng.getrandbits(64)))
        for number in range(ws_clients if matches else 0):
            self._add_ws(f"ws-{number}", matches, random.Random(rng.getrandbits(64)))

    def _endpoints(self, rng: random.Random) -> Endpoints:
        return Endpoints(self._targets.api_urls, rng.randrange(len(self._targets.api_urls)))

    def _add_sse(self, name: str, matches: Sequence[int], rng: random.Random) -> None:
        for fixture_id in _choose(matches, rng):
            self._streams.append(MatchStream(name, fixture_id, self._endpoints(rng), _child(rng)))
        if rng.random() < 0.5:
            self._lives.append(LiveStream(name, self._endpoints(rng), _child(rng)))

    def _add_ws(self, name: str, matches: Sequence[int], rng: random.Random) -> None:
        chosen = _choose(matches, rng)
        every_match = [channel for channel in ("scores", "status") if rng.random() < 0.5]
        self._sockets.append(SocketClient(name, chosen, every_match, self._endpoints(rng), _child(rng)))

    async def run(self, stop: asyncio.Event) -> None:
        """Every client follows until `stop`; a client that fails for a reason other than the
        stack's (a bug, or a message that breaks the protocol) is reported by `check`."""
        runners = self._runners()
        tasks = [asyncio.create_task(runner.run()) for runner in runners]
        try:
            await stop.wait()
        finally:
            for task in tasks:
                task.cancel()
            outcomes = await asyncio.gather(*tasks, return_exceptions=True)
        for runner, outcome in zip(runners, outcomes, strict=True):
            if isinstance(outcome, Exception):
                detail = f"the client stopped: {type(outcome).__name__}: {outcome}"
                self._crashes.append(Violation(CHECK, runner.name, detail))

    async def check(self) -> CheckResult:
        """Resume every match client once more, then hold all they saw against Postgres.

        The last resume is what a screen does after any drop (SSE: `Last-Event-ID`; WebSocket: a
        fresh subscribe), so a client's record then runs up to the version Postgres holds now,
        which is the final one once the lead has let the run settle. `reconnects` counts the
        run's own, not this last one.
        """
        runners = self._runners()
        reconnects = sum(runner.counts.reconnects for runner in runners)
        await self._settle()
        trails = self._trails()
        truths = await load_truths(self._targets.database_url, {trail.fixture_id for trail in trails})
        violations = [*self._crashes]
        for trail in trails:
            violations += check_trail(trail, truths.get(trail.fixture_id))
        for socket in self._sockets:
            violations += socket.violations()
        return CheckResult(
            self.name,
            checked=self._sse_clients + self._ws_clients,
            violations=tuple(violations),
            figures={
                "sse_clients": self._sse_clients,
                "ws_clients": self._ws_clients,
                "messages": sum(runner.counts.messages for runner in runners),
                "reconnects": reconnects,
            },
        )

    async def _settle(self) -> None:
        urls = self._targets.api_urls
        gate = asyncio.Semaphore(SETTLE_CONCURRENCY)

        async def settle(client: MatchStream | SocketClient) -> None:
            async with gate:
                await client.settle(urls)

        clients: list[MatchStream | SocketClient] = [*self._streams, *self._sockets]
        await asyncio.gather(*(settle(client) for client in clients))

    def _runners(self) -> list[MatchStream | LiveStream | SocketClient]:
        return [*self._streams, *self._lives, *self._sockets]

    def _trails(self) -> list[Trail]:
        return [
            *(stream.trail for stream in self._streams),
            *(trail for live in self._lives for trail in live.trails.values()),
            *(trail for socket in self._sockets for trail in socket.record.trails.values()),
        ]


def _choose(matches: Sequence[int], rng: random.Random) -> list[int]:
    return rng.sample(list(matches), rng.randint(1, min(MATCHES_PER_CLIENT, len(matches))))


def _child(rng: random.Random) -> random.Random:
    return random.Random(rng.getrandbits(64))


async def load_truths(database_url: str, fixture_ids: set[int]) -> dict[int, MatchTruth]:
    """Each existing fixture's scoreboard version (0 before its first entry) and log seqs, read in
    one snapshot so the two agree."""
    if not fixture_ids:
        return {}
    engine = create_engine(database_url, pool_size=1)
    try:
        async with engine.connect() as conn:
            snapshot = await conn.execution_options(isolation_level="REPEATABLE READ")
            async with snapshot.begin():
                boards = await snapshot.execute(
                    select_fixture_with_scoreboard(fixture.c.id, scoreboard.c.version).where(
                        fixture.c.id.in_(sorted(fixture_ids))
                    )
                )
                versions = {int(row.id): int(row.version or 0) for row in boards}
                logged = await snapshot.execute(
                    select(timeline_item.c.fixture_id, timeline_item.c.seq)
                    .where(timeline_item.c.fixture_id.in_(sorted(fixture_ids)))
                    .order_by(timeline_item.c.fixture_id, timeline_item.c.seq)
                )
                seqs: dict[int, list[int]] = {}
                for row in logged:
                    seqs.setdefault(int(row.fixture_id), []).append(int(row.seq))
    finally:
        await engine.dispose()
    return {
        fixture_id: MatchTruth(version, tuple(seqs.get(fixture_id, ())))
        for fixture_id, version in versions.items()
    }
