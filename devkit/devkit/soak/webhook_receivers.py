"""The soak's webhook receivers: three partner endpoints that misbehave as real ones do.

Each is a small HTTP/1.1 server on 127.0.0.1 (an OS-chosen port; bounded headers and bodies) that
journals every request it answers, in arrival order, with what it answered:
- `flaky` answers a seeded share of requests (`FLAKY_SHARE`) 500, or 503 with `Retry-After`;
- `slow` answers 2xx after a delay below the stack's `WEBHOOK_TIMEOUT`, and a seeded share
  (`LATE_SHARE`) only after it, so the sender times out and retries;
- `down` is unreachable for a seeded window of minutes (`DOWN_MINUTES`, starting in `DOWN_START`
  of the load window): it either resets every connection at once (the sender gets no answer, as
  from a host that refuses) or answers 503, then recovers and answers 2xx.
`WebhookPart` registers the three as endpoints of one soak partner granted every competition of
the run's fixtures (`scoreline.webhooks.endpoints`, as `scoreline partners webhooks add` does; a
loopback `http://` URL is allowed outside production), and after the run judges their journals
with `devkit.soak.webhook_check`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

import asyncpg
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine

from devkit.soak.model import CheckResult, SoakFixtures, SoakTargets, Violation
from devkit.soak.partners import fixture_views
from devkit.soak.webhook_check import (
    CHECK,
    Endpoint,
    LogEntry,
    Received,
    check_receiver,
    complete,
    not_owed,
)
from scoreline.db.engine import create_engine
from scoreline.db.urls import asyncpg_dsn
from scoreline.feeds.models import competition_of
from scoreline.feeds.partners import PartnerError, create_partner
from scoreline.webhooks.endpoints import EndpointError, create_endpoint, list_endpoints, rotate_secret
from scoreline.webhooks.urls import UrlPolicy

FLAKY_SHARE = (0.2, 0.35)
"""The share of the flaky receiver's requests answered 500 or 503, drawn from the seed."""
FLAKY_RETRY_AFTER = 1
"""Seconds its 503s ask the sender to wait (`Retry-After`)."""
SLOW_DELAY = (0.05, 0.4)
"""The slow receiver's delay before a 2xx, as shares of the stack's `WEBHOOK_TIMEOUT`."""
LATE_SHARE = (0.01, 0.03)
LATE_BY = 1.0
"""A late answer comes this many seconds after the sender's timeout."""
DOWN_START = (0.15, 0.35)
"""When the down receiver goes, as shares of the load window, drawn from the seed."""
DOWN_MINUTES = (2.0, 4.0)
DOWN_SHARE_MAX = 0.3
"""A down window is at most this share of the load window (a short soak still recovers in it)."""
MAX_HEAD_BYTES = 16 * 1024
MAX_BODY_BYTES = 1024 * 1024
WAIT_FOR_FIXTURES = 1.0
CATCH_UP_POLL = 2.0
_DATABASE_ERRORS = (SQLAlchemyError, OSError, asyncpg.PostgresError)


@dataclass(frozen=True)
class WebhookConfig:
    """The stack's webhook configuration for the soak (the values `run.tuning` hands the feeds
    process): the receivers' delays and the catch-up wait are derived from it."""

    timeout: float
    backoff_cap: float


@dataclass(frozen=True)
class Reply:
    status: int = 204
    delay: float = 0.0
    headers: tuple[tuple[str, str], ...] = ()
    reset: bool = False
    """Answer nothing: the connection is dropped at once (the request is not journaled)."""


class Behaviour(Protocol):
    def reply(self, now: float) -> Reply: ...


@dataclass
class Flaky:
    share: float
    rng: random.Random

    def reply(self, now: float) -> Reply:
        if self.rng.random() >= self.share:
            return Reply()
        if self.rng.random() < 0.5:
            return Reply(500)
        return Reply(503, headers=(("Retry-After", str(FLAKY_RETRY_AFTER)),))


@dataclass
class Slow:
    timeout: float
    late_share: float
    rng: random.Random

    def reply(self, now: float) -> Reply:
        if self.rng.random() < self.late_share:
            return Reply(200, delay=self.timeout + LATE_BY)
        return Reply(200, delay=self.timeout * self.rng.uniform(*SLOW_DELAY))


@dataclass
class Down:
    starts: float
    ends: float
    """Monotonic seconds: the window it is down in."""
    resets: bool
    """Down means connections reset at once; otherwise 503 without `Retry-After`."""

    def down(self, now: float) -> bool:
        return self.starts <= now < self.ends

    def reply(self, now: float) -> Reply:
        if not self.down(now):
            return Reply()
        return Reply(reset=True) if self.resets else Reply(503)


_REASONS = {200: "OK", 204: "No Content", 500: "Internal Server Error", 503: "Service Unavailable"}


class Receiver:
    """One HTTP receiver; `start()` gives its URL, `close()` stops it; `journal` is what it answered."""

    def __init__(self, name: str, behaviour: Behaviour) -> None:
        self.name = name
        self.behaviour = behaviour
        self.journal: list[Received] = []
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()

    async def start(self) -> str:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, limit=MAX_HEAD_BYTES)
        port = self._server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}/{self.name}"

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            for task in list(self._connections):
                task.cancel()
            await asyncio.gather(*self._connections, return_exceptions=True)
            with contextlib.suppress(Exception):
                async with asyncio.timeout(5):
                    await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._connections.add(task)
        try:
            while await self._one(reader, writer):
                pass
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            pass
        finally:
            if task is not None:
                self._connections.discard(task)
            writer.transport.abort()

    async def _one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """One request and its answer; False when the connection is to be dropped."""
        down = self.behaviour
        if isinstance(down, Down) and down.resets and down.down(time.monotonic()):
            return False
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        headers = {
            key.strip().lower(): value.strip()
            for key, _, value in (line.partition(":") for line in lines[1:] if line)
        }
        length = int(headers.get("content-length", "0"))
        if not 0 <= length <= MAX_BODY_BYTES:
            return False
        body = await reader.readexactly(length)
        reply = self.behaviour.reply(time.monotonic())
        if reply.reset:
            return False
        self.journal.append(
            Received(
                headers.get("webhook-id"),
                headers.get("webhook-timestamp"),
                headers.get("webhook-signature"),
                body,
                reply.status,
            )
        )
        if reply.delay:
            await asyncio.sleep(reply.delay)
        lines = [f"HTTP/1.1 {reply.status} {_REASONS.get(reply.status, 'Status')}", "Content-Length: 0"]
        lines += [f"{key}: {value}" for key, value in reply.headers]
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        await writer.drain()
        return headers.get("connection", "").lower() != "close"


@dataclass
class _Registered:
    receiver: Receiver
    url: str
    endpoint: Endpoint | None = None


@dataclass
class _Progress:
    accepted: int = 0
    since: float = field(default_factory=time.monotonic)


class WebhookPart:
    """Three receivers of one soak partner's webhooks; see the module docstring."""

    name = "webhooks"

    def __init__(
        self,
        targets: SoakTargets,
        fixtures: SoakFixtures,
        rng: random.Random,
        window: float,
        config: WebhookConfig,
    ) -> None:
        self._targets = targets
        self._fixtures = tuple(fixtures.all)
        self._rng = rng
        self._window = window
        self._config = config
        self.flaky_share = rng.uniform(*FLAKY_SHARE)
        self.down_start = window * rng.uniform(*DOWN_START)
        self.down_length = min(60 * rng.uniform(*DOWN_MINUTES), window * DOWN_SHARE_MAX)
        self.down_resets = rng.random() < 0.5
        self._registered: list[_Registered] = []
        self._competitions_granted: tuple[int, ...] = ()
        self._problems: list[Violation] = []
        self._catch_up = 0.0

    @property
    def receivers(self) -> list[Receiver]:
        return [registered.receiver for registered in self._registered]

    def _build(self, zero: float) -> list[Receiver]:
        rng = self._rng
        return [
            Receiver("flaky", Flaky(self.flaky_share, random.Random(rng.getrandbits(64)))),
            Receiver(
                "slow",
                Slow(self._config.timeout, rng.uniform(*LATE_SHARE), random.Random(rng.getrandbits(64))),
            ),
            Receiver(
                "down",
                Down(zero + self.down_start, zero + self.down_start + self.down_length, self.down_resets),
            ),
        ]

    async def run(self, stop: asyncio.Event) -> None:
        """Start the receivers, register them once the fixtures exist; they answer until `check`."""
        for receiver in self._build(time.monotonic()):
            self._registered.append(_Registered(receiver, await receiver.start()))
        registering = asyncio.create_task(self._register())
        try:
            await stop.wait()
        finally:
            if not registering.done():
                registering.cancel()
            outcome = (await asyncio.gather(registering, return_exceptions=True))[0]
        if isinstance(outcome, BaseException):
            detail = f"the webhook endpoints were not registered: {type(outcome).__name__}: {outcome}"
            self._problems.append(Violation(CHECK, "webhooks", detail))

    async def _register(self) -> None:
        engine = create_engine(self._targets.database_url, pool_size=1)
        try:
            grants = await self._competitions(engine)
            if not grants:
                self._problems.append(Violation(CHECK, "webhooks", "no fixture has a competition to grant"))
                return
            self._competitions_granted = tuple(sorted(grants))
            partner = await self._partner(engine, sorted(grants))
            for registered in self._registered:
                registered.endpoint = await self._endpoint(engine, partner, registered)
        finally:
            await engine.dispose()

    async def _competitions(self, engine: AsyncEngine) -> dict[int, list[int]]:
        """Every fixture of the run by competition, once all exist (the sync and the desks make them)."""
        grants: dict[int, list[int]] = {}
        for view in await fixture_views(engine, self._fixtures):
            competition = competition_of(view.fixture)
            if competition is not None:
                grants.setdefault(competition, []).append(view.fixture.id)
        return grants

    async def _partner(self, engine: AsyncEngine, competitions: list[int]) -> str:
        while True:
            name = f"soak-webhooks-{self._rng.getrandbits(32):08x}"
            try:
                await create_partner(engine, name, competitions)
            except (*_DATABASE_ERRORS, PartnerError):
                await asyncio.sleep(WAIT_FOR_FIXTURES)
                continue
            return name

    async def _endpoint(self, engine: AsyncEngine, partner: str, registered: _Registered) -> Endpoint:
        """Create the endpoint; when an attempt's answer was lost (it exists, its secret unseen),
        rotate to a secret this part knows."""
        policy = UrlPolicy(development=True)
        while True:
            try:
                created, secret = await create_endpoint(engine, partner, registered.url, policy)
                return Endpoint(registered.receiver.name, created.id, secret, created.created_at)
            except EndpointError:
                with contextlib.suppress(*_DATABASE_ERRORS):
                    existing = [e for e in await list_endpoints(engine, partner) if e.url == registered.url]
                    if existing:
                        secret = await rotate_secret(engine, existing[0].id)
                        return Endpoint(
                            registered.receiver.name, existing[0].id, secret, existing[0].created_at
                        )
            except _DATABASE_ERRORS:
                pass
            await asyncio.sleep(WAIT_FOR_FIXTURES)

    # -- the check ---------------------------------------------------------------------------------

    def catch_up_stall(self) -> float:
        """How long the receivers may go without a newly accepted seq before the wait gives up: two
        of the slowest retry rounds the stack is configured for (a backoff at its cap, then a send
        that times out), plus the flaky receiver's `Retry-After`."""
        return 2 * (self._config.backoff_cap + self._config.timeout) + FLAKY_RETRY_AFTER

    async def check(self) -> CheckResult:
        """Wait until every receiver accepted all it is owed (or nothing new arrives for
        `catch_up_stall`, at most the load window), then judge the journals against Postgres' logs."""
        endpoints = [r.endpoint for r in self._registered if r.endpoint is not None]
        try:
            if endpoints and len(endpoints) == len(self._registered):
                await self._wait_for_catch_up(endpoints)
            logs = await self._logs() if endpoints else {}
        finally:
            for receiver in self.receivers:
                await receiver.close()
        violations = [*self._problems]
        if self._fixtures and len(endpoints) < len(self._registered) and not self._problems:
            violations.append(
                Violation(CHECK, "webhooks", "the run stopped before the endpoints were registered")
            )
        journals = {r.receiver.name: r.receiver.journal for r in self._registered}
        for endpoint in endpoints:
            violations += check_receiver(endpoint, journals[endpoint.receiver], logs)
        requests = sum(len(journal) for journal in journals.values())
        return CheckResult(
            self.name,
            checked=sum(len(log) for log in logs.values()) * len(endpoints),
            violations=tuple(violations),
            figures={
                "receivers": len(endpoints),
                "matches": len(logs),
                "requests": requests,
                "not_2xx": sum(1 for j in journals.values() for r in j if not r.accepted),
                "not_owed": sum(not_owed(endpoint, logs) for endpoint in endpoints),
                "catch_up_s": round(self._catch_up),
                "down_s": round(self.down_length),
            },
        )

    async def _wait_for_catch_up(self, endpoints: Sequence[Endpoint]) -> None:
        began = time.monotonic()
        progress = _Progress()
        journals = {r.receiver.name: r.receiver.journal for r in self._registered}
        while time.monotonic() - began < self._window:
            try:
                logs = await self._logs(bodies=False)
            except _DATABASE_ERRORS:
                logs = None
            if logs is not None and all(complete(e, journals[e.receiver], logs) for e in endpoints):
                break
            accepted = sum(1 for journal in journals.values() for received in journal if received.accepted)
            if accepted != progress.accepted:
                progress = _Progress(accepted)
            elif time.monotonic() - progress.since > self.catch_up_stall():
                break
            await asyncio.sleep(CATCH_UP_POLL)
        self._catch_up = time.monotonic() - began

    async def _logs(self, *, bodies: bool = True) -> dict[int, list[LogEntry]]:
        """The log of every match of the partner's competitions (the run's, and any other fixture
        of them the sync made), as Postgres holds it: what the filler owes is judged by the same
        competition rule (`scoreline.webhooks.filling`)."""
        connection = await asyncpg.connect(asyncpg_dsn(self._targets.database_url), timeout=10)
        try:
            matches = await connection.fetch(
                """SELECT id FROM fixture
                   WHERE COALESCE((competition->>'id')::bigint, league_id) = ANY($1::bigint[])""",
                list(self._competitions_granted),
            )
            rows = await connection.fetch(
                f"""SELECT fixture_id, seq, kind, target_seq, {"body" if bodies else "NULL AS body"},
                           created_at
                    FROM timeline_item WHERE fixture_id = ANY($1::bigint[]) ORDER BY fixture_id, seq""",
                [row["id"] for row in matches],
            )
        finally:
            with contextlib.suppress(*_DATABASE_ERRORS):
                await connection.close()
        logs: dict[int, list[LogEntry]] = {row["id"]: [] for row in matches}
        for row in rows:
            body = json.loads(row["body"]) if isinstance(row["body"], str) else row["body"]
            logs[row["fixture_id"]].append(
                LogEntry(row["seq"], row["kind"], row["target_seq"], body, row["created_at"])
            )
        return logs
