"""The soak's simulated iPhones: they register, follow matches, report their Live Activities'
update tokens, and a few delete the app mid-run; `check` then judges every push they got.

Each phone does what the app does (as `scoreline.devstack.demo_phones`, at soak scale):

- `POST /v1/devices` with a push-to-start token, then follows a seeded 1 to 3 of the run's
  fixtures (`POST /v1/devices/{id}/follows`; a 404 means the fixture is not synced yet: asked again
  a few seconds later);
- when an accepted push-to-start for a match reaches its push-to-start token, it reports a new
  update token for that activity (`PUT /v1/devices/{id}/live-activities/{fixture}` with the
  generation the start's attributes carry), as ActivityKit hands one to the app;
- a seeded 1% delete the app a seeded while after their first activity was reported: the APNs
  simulator is told (`POST /_sim/unregister`) that every token the phone ever had is gone, as
  Apple answers 410 once an app is deleted, and the phone does nothing more.

Pushes are discovered by tailing the simulator's journal file (`SoakTargets.apns_journal`), one
reader for all phones: asking the admin API per phone would be 10,000 requests a second.

The stack is being broken all along (API processes killed, Postgres restarted, Redis flushed), so
every call is retried like the app would: on a connection error, a 5xx or a 429 (after its
`Retry-After`), with seeded, jittered exponential backoff, moving to the next API process when one
does not answer. A registration whose answer was lost comes back as 409 `install_registered`; the
phone then registers a new install id, as an app that lost its device token must. Every random
choice comes from the `rng` given (one seeded `random.Random` per phone, drawn in order at
construction), so a seed replays the same phones, tokens, follows and deletions.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import math
import random
import time
from collections.abc import Collection, Coroutine, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg
import httpx

from domain.snapshot import MatchState
from domain.states import BREAK_STATES, OVER_STATES, OVERNIGHT_STATES, PLAYING_STATES
from scoreline.db.urls import asyncpg_dsn
from scoreline.logging import get_logger
from scoreline.soak.device_check import (
    CHECK,
    ActivityReport,
    DeviceLedger,
    MatchFacts,
    PhoneRecord,
    Push,
    clock,
    parse_line,
)
from scoreline.soak.model import CheckResult, SoakFixtures, SoakTargets, Violation

log = get_logger("scoreline.soak.devices")

IN_FLIGHT = 50
"""Registration and follow calls at once, across all phones; as many token reports again, apart:
an app reports its token the moment its activity starts, whatever other phones are doing (sharing
one limit, 10,000 phones joining under faults held every report back for the whole of seed 5)."""
TOKEN_BYTES = 80
"""Live-Activity-length APNs tokens (160 hex digits), like the real ones."""
DELETING_SHARE = 0.01
DELETE_AFTER_S = (10.0, 120.0)
"""A deleting phone deletes the app this long (seeded) after its first activity was reported."""
POLL_S = 1.0
"""How often the journal file is read for new pushes."""
FOLLOW_AGAIN_S = 10.0
"""How long before phones still missing a registration or a follow try again: a fixture not synced
yet costs each phone at most 18 follow calls a minute, inside the API's 30 (`follow_rate_limit`)."""
BACKOFF_S = (0.2, 10.0)
"""First and longest wait between retries of one call."""
REQUEST_TIMEOUT_S = 10.0
READ_CHUNK = 8 * 1024 * 1024
"""Most bytes read from the journal file per poll."""
KICKED_OFF_STATES = PLAYING_STATES | BREAK_STATES | OVERNIGHT_STATES | {MatchState.FINISHED}
"""Fixture states that mean play began (not cancelled, abandoned or deleted before it did)."""
DATABASE_TIMEOUT_S = 60.0


@dataclass
class _Phone:
    """One simulated iPhone: its plan (drawn at construction) and what happened to it."""

    index: int
    rng: random.Random
    """Draws the phone's tokens, in the order its activities start."""
    jitter: random.Random
    """Draws its retry waits: apart from `rng`, so faults do not change which tokens a seed makes."""
    install_id: str
    push_to_start_token: str
    wanted: tuple[int, ...]
    delete_after: float | None
    device_id: str | None = None
    auth: dict[str, str] = field(default_factory=dict)
    registrations: int = 0
    follows: dict[int, float] = field(default_factory=dict)
    given_up: set[int] = field(default_factory=set)
    pending: set[tuple[int, int]] = field(default_factory=set)
    """(fixture, generation) starts seen, whether or not their report succeeded."""
    issued: list[str] = field(default_factory=list)
    """Every update token the phone made (reported or not): deleting the app kills them all."""
    activities: dict[tuple[int, int], ActivityReport] = field(default_factory=dict)
    deleted_at: float | None = None
    abandoned: bool = False
    """The API refused the registration for good (a bug of ours or of the API): the phone stops."""

    @property
    def needs_joining(self) -> bool:
        """Not registered yet, or a wanted follow neither confirmed nor given up."""
        if self.deleted_at is not None or self.abandoned:
            return False
        open_follows = set(self.wanted) - set(self.follows) - self.given_up
        return self.device_id is None or bool(open_follows)

    def new_token(self) -> str:
        return self.rng.randbytes(TOKEN_BYTES).hex()

    def record(self) -> PhoneRecord:
        return PhoneRecord(
            device=self.device_id or self.install_id,
            push_to_start_token=self.push_to_start_token,
            follows=dict(self.follows),
            asked=frozenset(self.wanted),
            activities=tuple(self.activities.values()),
            deleted_at=self.deleted_at,
        )


class _Api:
    """Calls to a set of equivalent servers, retried until a final answer or `stop`."""

    def __init__(self, client: httpx.AsyncClient, urls: Sequence[str], stop: asyncio.Event) -> None:
        self._client = client
        self._urls = tuple(url.rstrip("/") for url in urls)
        self._current = 0
        self._stop = stop

    async def call(
        self, rng: random.Random, method: str, path: str, *, body: Any, headers: dict[str, str] | None = None
    ) -> httpx.Response | None:
        """The first answer that is not a 5xx or a 429; None if `stop` came first."""
        delay = BACKOFF_S[0]
        while not self._stop.is_set():
            index = self._current
            response: httpx.Response | None = None
            try:
                response = await self._client.request(
                    method, self._urls[index] + path, json=body, headers=headers
                )
            except httpx.TransportError:
                pass
            if response is not None and response.status_code < 500 and response.status_code != 429:
                return response
            if response is None or response.status_code >= 500:
                self._current = (index + 1) % len(self._urls)  # that process may be down: try the next
            wait = _retry_after(response) or delay * (0.5 + rng.random())
            await _sleep_unless(self._stop, wait)
            delay = min(delay * 2, BACKOFF_S[1])
        return None


class DevicePart:
    """The 10,000 phones of the soak (see the module docstring); `check` is `device_check`'s rules."""

    name = "devices"

    def __init__(
        self,
        targets: SoakTargets,
        fixtures: SoakFixtures,
        rng: random.Random,
        devices: int,
        worker_kills: Sequence[float] = (),
    ) -> None:
        self._targets = targets
        self._worker_kills = worker_kills
        """The stack's record of its SIGKILLs of workers (read when checking)."""
        self._fixtures = fixtures.all
        deleting = set(rng.sample(range(devices), round(devices * DELETING_SHARE)))
        self._phones = [
            self._plan(n, random.Random(rng.getrandbits(64)), n in deleting) for n in range(devices)
        ]
        self._by_starter = {phone.push_to_start_token: phone for phone in self._phones}
        self._joining = asyncio.Semaphore(IN_FLIGHT)
        self._reporting = asyncio.Semaphore(IN_FLIGHT)
        self._tasks: set[asyncio.Task[None]] = set()
        self._refused_reports = 0
        self._joined_after: float | None = None
        """Seconds until every phone was registered with its follows made (None: not by the end)."""

    def _plan(self, index: int, rng: random.Random, deletes: bool) -> _Phone:
        wanted = tuple(rng.sample(self._fixtures, min(len(self._fixtures), rng.randint(1, 3))))
        return _Phone(
            index=index,
            rng=rng,
            jitter=random.Random(rng.getrandbits(64)),
            install_id=f"soak-{index}-{rng.getrandbits(48):012x}",
            push_to_start_token=rng.randbytes(TOKEN_BYTES).hex(),
            wanted=wanted,
            delete_after=rng.uniform(*DELETE_AFTER_S) if deletes else None,
        )

    async def run(self, stop: asyncio.Event) -> None:
        """Join the phones while following the journal, until `stop`; never raises for the stack's
        faults (every call is retried until it has an answer or the run stops)."""
        limits = httpx.Limits(max_connections=IN_FLIGHT * 3, max_keepalive_connections=IN_FLIGHT * 2)
        async with httpx.AsyncClient(timeout=REQUEST_TIMEOUT_S, limits=limits) as client:
            api = _Api(client, self._targets.api_urls, stop)
            admin = _Api(client, (self._targets.apns_admin_url,), stop)
            joining = asyncio.create_task(self._join_all(api, stop))
            try:
                await self._watch(api, admin, stop)
            finally:
                await _finish(joining)
                for task in list(self._tasks):
                    await _finish(task)

    async def check(self) -> CheckResult:
        """Judge the journal file against what the phones did (rules: `device_check`)."""
        horizon = time.time()
        phones = [phone.record() for phone in self._phones if phone.device_id is not None]
        try:
            facts, unjudged = await self._facts(), []
        except TimeoutError:
            # Judge what the journal alone shows, and say that Postgres' part was not judged.
            facts = MatchFacts()
            unjudged = [
                Violation(
                    CHECK,
                    "postgres",
                    f"unreachable for {DATABASE_TIMEOUT_S:g} s: judged on the journal alone",
                )
            ]
        ledger = await asyncio.to_thread(_read_ledger, self._targets.apns_journal, phones)
        violations = [*unjudged, *ledger.violations(facts, horizon)]
        figures = {
            "devices": len(phones),
            "follows": sum(len(phone.follows) for phone in phones),
            "reports": sum(len(phone.activities) for phone in phones),
            "reports_refused": self._refused_reports,
            "deleted": sum(phone.deleted_at is not None for phone in phones),
            **ledger.figures(),
        }
        if self._joined_after is not None:
            figures["joined_after_s"] = round(self._joined_after)
        return CheckResult(self.name, checked=len(phones), violations=tuple(violations), figures=figures)

    # --- joining -------------------------------------------------------------------------------

    async def _join_all(self, api: _Api, stop: asyncio.Event) -> None:
        """Register and follow, `IN_FLIGHT` at a time, again every few seconds for what is missing."""
        began = time.monotonic()
        while not stop.is_set():
            waiting = [phone for phone in self._phones if phone.needs_joining]
            if not waiting:
                self._joined_after = time.monotonic() - began
                return
            await asyncio.gather(*(self._join(api, phone) for phone in waiting))
            await _sleep_unless(stop, FOLLOW_AGAIN_S)

    async def _join(self, api: _Api, phone: _Phone) -> None:
        async with self._joining:
            if phone.device_id is None:
                await self._register(api, phone)
            if phone.device_id is None:
                return
            for fixture in phone.wanted:
                if fixture not in phone.follows and fixture not in phone.given_up:
                    await self._follow(api, phone, fixture)

    async def _register(self, api: _Api, phone: _Phone) -> None:
        install = (
            phone.install_id if phone.registrations == 0 else f"{phone.install_id}-{phone.registrations}"
        )
        phone.registrations += 1
        response = await api.call(
            phone.jitter,
            "POST",
            "/v1/devices",
            body={
                "install_id": install,
                "platform": "ios",
                "environment": "sandbox",
                "push_to_start_token": phone.push_to_start_token,
                "app_version": "soak",
            },
        )
        if response is None or response.status_code == 409:
            return  # stopped, or an earlier attempt registered it and its answer was lost: a new install
        if response.status_code not in (200, 201):
            log.warning("soak.device_not_registered", phone=phone.index, status=response.status_code)
            phone.abandoned = True
            return
        body = response.json()
        phone.device_id, phone.auth = str(body["id"]), {"Authorization": f"Bearer {body['token']}"}

    async def _follow(self, api: _Api, phone: _Phone, fixture: int) -> None:
        response = await api.call(
            phone.jitter,
            "POST",
            f"/v1/devices/{phone.device_id}/follows",
            body={"fixture_id": fixture},
            headers=phone.auth,
        )
        if response is None or response.status_code == 404:
            return  # stopped, or the fixture is not synced yet: next round
        if response.status_code in (200, 201):
            phone.follows[fixture] = time.time()
        else:
            log.warning(
                "soak.follow_refused", phone=phone.index, fixture=fixture, status=response.status_code
            )
            phone.given_up.add(fixture)

    # --- starts, reports, deletions -------------------------------------------------------------

    async def _watch(self, api: _Api, admin: _Api, stop: asyncio.Event) -> None:
        """Read new journal lines every `POLL_S`; report each start that reached one of our phones."""
        tail = _JournalTail(self._targets.apns_journal)
        while not stop.is_set():
            for start in await asyncio.to_thread(_new_starts, tail):
                phone = self._by_starter.get(start.token)
                if phone is not None:
                    self._started(api, admin, phone, start, stop)
            if not tail.behind:
                await _sleep_unless(stop, POLL_S)

    def _started(self, api: _Api, admin: _Api, phone: _Phone, start: Push, stop: asyncio.Event) -> None:
        assert start.fixture_id is not None, "_new_starts keeps starts with a fixture only"
        key = (start.fixture_id, start.generation)
        if phone.deleted_at is not None or phone.device_id is None or key in phone.pending:
            return
        phone.pending.add(key)
        self._spawn(self._report(api, admin, phone, key, stop))

    async def _report(
        self, api: _Api, admin: _Api, phone: _Phone, key: tuple[int, int], stop: asyncio.Event
    ) -> None:
        fixture, generation = key
        token = phone.new_token()
        phone.issued.append(token)
        async with self._reporting:
            response = await api.call(
                phone.jitter,
                "PUT",
                f"/v1/devices/{phone.device_id}/live-activities/{fixture}",
                body={"push_token": token, "generation": generation},
                headers=phone.auth,
            )
        if response is None or phone.deleted_at is not None:
            return
        if response.status_code != 200:
            self._refused_reports += 1  # e.g. 409: the match ended before the phone reported
            return
        first = not phone.activities
        phone.activities[key] = ActivityReport(token, fixture, generation, time.time())
        if first and phone.delete_after is not None:
            self._spawn(self._delete_app(admin, phone, phone.delete_after, stop))

    async def _delete_app(self, admin: _Api, phone: _Phone, after: float, stop: asyncio.Event) -> None:
        """After `after` seconds the app is deleted: every token it had is gone at APNs. The time
        is noted before APNs is told, so the check asks nothing of Scoreline for this phone from
        a moment it may not have known about yet."""
        await _sleep_unless(stop, after)
        if stop.is_set():
            return
        phone.deleted_at = time.time()
        for token in (phone.push_to_start_token, *phone.issued):
            await admin.call(phone.jitter, "POST", "/_sim/unregister", body={"token": token})

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task: asyncio.Task[None] = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # --- Postgres -------------------------------------------------------------------------------

    async def _facts(self) -> MatchFacts:
        """Which fixtures kicked off and ended, and the key moments Scoreline alerted (`effect_log`)."""
        async with asyncio.timeout(DATABASE_TIMEOUT_S):
            connection = await _connect(self._targets.database_url)
            try:
                # When each match became over: its first change to an over state (the board's own
                # stamp moves with every later edit, like a ball corrected after the result).
                states = await connection.fetch(
                    """SELECT f.id, f.state,
                              (SELECT extract(epoch FROM min(e.created_at))::float8 FROM domain_event e
                               WHERE e.fixture_id = f.id AND e.payload->>'state' = ANY($2::text[])) AS over_at
                       FROM fixture f WHERE f.id = ANY($1::bigint[])""",
                    list(self._fixtures),
                    [state.value for state in OVER_STATES],
                )
                alerts = await connection.fetch(
                    """SELECT fixture_id, event_key, min(target) AS target,
                              extract(epoch FROM min(created_at))::float8 AS at
                       FROM effect_log WHERE effect = 'la.alert' AND fixture_id = ANY($1::bigint[])
                       GROUP BY fixture_id, event_key""",
                    list(self._fixtures),
                )
                generations = await connection.fetch(
                    "SELECT id, generation FROM live_activity WHERE id = ANY($1::bigint[])",
                    [int(row["target"]) for row in alerts if str(row["target"]).isdigit()],
                )
                # Alerts whose claim was marked as being sent by an attempt that then died.
                in_doubt = await connection.fetch(
                    """SELECT la.push_token, e.event_key,
                              (e.outcome->'claim'->>'sending_at')::float8 AS marked_at
                       FROM effect_log e JOIN live_activity la ON la.id = CAST(e.target AS bigint)
                       WHERE e.effect = 'la.alert' AND e.fixture_id = ANY($1::bigint[])
                         AND e.outcome->>'state' = 'in_doubt' AND e.outcome->'claim' ? 'sending_at'
                         AND la.push_token IS NOT NULL""",
                    list(self._fixtures),
                )
                claims = await connection.fetch(
                    """SELECT la.push_token, e.event_key, e.outcome FROM effect_log e
                       JOIN live_activity la ON la.id = CAST(e.target AS bigint)
                       WHERE e.effect = 'la.alert' AND e.fixture_id = ANY($1::bigint[])
                         AND la.push_token IS NOT NULL""",
                    list(self._fixtures),
                )
                starts = await _starts_in_words(connection, list(self._fixtures))
            finally:
                await connection.close()
        facts = _match_facts(states, alerts, {int(row["id"]): int(row["generation"]) for row in generations})
        return dataclasses.replace(
            facts,
            in_doubt={
                (str(row["push_token"]).lower(), int(str(row["event_key"])[1:])): float(row["marked_at"])
                for row in in_doubt
                if str(row["event_key"])[1:].isdigit()
            },
            worker_kills=tuple(self._worker_kills),
            claims={
                (str(row["push_token"]).lower(), int(str(row["event_key"])[1:])): _claim_words(row["outcome"])
                for row in claims
                if str(row["event_key"])[1:].isdigit()
            },
            starts=starts,
        )


class _JournalTail:
    """Reads a growing JSON-lines file from where it left off, whole lines only."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._offset = 0
        self._partial = b""
        self.behind = False
        """The last read stopped at `READ_CHUNK`: there is more to read at once."""

    def read(self) -> list[str]:
        try:
            with self._path.open("rb") as file:
                file.seek(self._offset)
                data = file.read(READ_CHUNK)
        except FileNotFoundError:
            return []  # the simulator has not answered anything yet
        self._offset += len(data)
        self.behind = len(data) == READ_CHUNK
        *lines, self._partial = (self._partial + data).split(b"\n")
        return [line.decode() for line in lines if line]


def _new_starts(tail: _JournalTail) -> list[Push]:
    """The accepted push-to-starts among the lines written since the last call (read and parsed
    off the event loop; a cheap test first, as most lines are updates)."""
    entries = [parse_line(line) for line in tail.read() if '"start"' in line]
    return [
        entry
        for entry in entries
        if isinstance(entry, Push)
        and entry.accepted
        and entry.event == "start"
        and entry.fixture_id is not None
    ]


def _read_ledger(path: Path, phones: Collection[PhoneRecord]) -> DeviceLedger:
    ledger = DeviceLedger(phones)
    with contextlib.suppress(FileNotFoundError), path.open(encoding="utf-8") as file:
        for line in file:
            entry = parse_line(line)
            if entry is not None:
                ledger.add(entry)
    return ledger


def _match_facts(
    states: Sequence[asyncpg.Record], alerts: Sequence[asyncpg.Record], generations: dict[int, int]
) -> MatchFacts:
    moments: dict[tuple[int, int], dict[int, float]] = {}
    for row in alerts:
        key, target = str(row["event_key"]), str(row["target"])
        if key.startswith("v") and key[1:].isdigit() and target.isdigit():
            generation = generations.get(int(target), 1)
            moments.setdefault((int(row["fixture_id"]), generation), {})[int(key[1:])] = float(row["at"])
    return MatchFacts(
        kicked_off=frozenset(int(row["id"]) for row in states if row["state"] in KICKED_OFF_STATES),
        over=frozenset(int(row["id"]) for row in states if row["state"] in OVER_STATES),
        over_at={
            int(row["id"]): float(row["over_at"])
            for row in states
            if row["state"] in OVER_STATES and row["over_at"] is not None
        },
        alerts=moments,
    )


def _claim_words(outcome: str) -> str:
    """An `effect_log` outcome (JSON) in a few words: its state, who claimed it, when it was
    marked as being sent (UTC); for one in doubt, those of the claim it was found in."""
    document = json.loads(outcome)
    claim = document.get("claim") if isinstance(document.get("claim"), dict) else document
    words = [str(document.get("state"))]
    if claim.get("by"):
        words.append(f"by {claim['by']}")
    if isinstance(claim.get("sending_at"), int | float):
        words.append(f"marked {clock(claim['sending_at'])}")
    return " ".join(words)


async def _starts_in_words(connection: asyncpg.Connection, fixtures: list[int]) -> dict[tuple[str, int], str]:
    """(device id, fixture) → each follow's start as Postgres shows it, in a few words: when the
    follow was stored, whether the push-to-start token is still active, each activity row (its
    generation, status, when it was made) with its `la.start` claims (`_claim_words`, and when
    each was made), and the match's followers-waiting mark if one stands."""
    follows = await connection.fetch(
        """SELECT f.device_id::text AS device, f.fixture_id,
                  extract(epoch FROM f.created_at)::float8 AS at, d.push_to_start_active AS active
           FROM follow f JOIN device d ON d.id = f.device_id WHERE f.fixture_id = ANY($1::bigint[])""",
        fixtures,
    )
    activities = await connection.fetch(
        """SELECT la.device_id::text AS device, la.fixture_id, la.generation, la.status,
                  extract(epoch FROM la.created_at)::float8 AS made, la.started_at IS NOT NULL AS started,
                  e.event_key, e.outcome, extract(epoch FROM e.created_at)::float8 AS claimed
           FROM live_activity la LEFT JOIN effect_log e
             ON e.fixture_id = la.fixture_id AND e.effect = 'la.start' AND e.target = la.id::text
           WHERE la.fixture_id = ANY($1::bigint[])
           ORDER BY la.generation, e.created_at""",
        fixtures,
    )
    marks = await connection.fetch(
        """SELECT fixture_id, extract(epoch FROM since)::float8 AS since
           FROM followers_waiting WHERE fixture_id = ANY($1::bigint[])""",
        fixtures,
    )
    waiting = {int(row["fixture_id"]): float(row["since"]) for row in marks}
    shown: dict[tuple[str, int], dict[int, list[str]]] = {}
    for row in activities:
        rows = shown.setdefault((str(row["device"]), int(row["fixture_id"])), {})
        generation = int(row["generation"])
        if generation not in rows:
            started = " started" if row["started"] else ""
            rows[generation] = [f"activity g{generation} {row['status']}{started} made {clock(row['made'])}"]
        if row["outcome"] is not None:
            rows[generation].append(
                f"start {row['event_key']} {_claim_words(row['outcome'])} at {clock(row['claimed'])}"
            )
    found: dict[tuple[str, int], str] = {}
    for row in follows:
        device, fixture = str(row["device"]), int(row["fixture_id"])
        words = [f"follow stored {clock(row['at'])}"]
        if not row["active"]:
            words.append("push-to-start token inactive")
        rows = shown.get((device, fixture), {})
        words += [", ".join(parts) for parts in rows.values()] or ["no activity"]
        if fixture in waiting:
            since = waiting[fixture]
            words.append(
                f"followers waiting since {clock(since)}"
                if math.isfinite(since)
                else "followers waiting, unsignalled"
            )
        found[(device, fixture)] = "; ".join(words)
    return found


async def _connect(database_url: str) -> asyncpg.Connection:
    """Connect, waiting out a Postgres that is still restarting (the caller bounds the wait)."""
    while True:
        try:
            return await asyncpg.connect(asyncpg_dsn(database_url))
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError):
            await asyncio.sleep(1)


def _retry_after(response: httpx.Response | None) -> float | None:
    value = None if response is None else response.headers.get("retry-after")
    return float(value) if value is not None and value.isdigit() else None


async def _sleep_unless(stop: asyncio.Event, seconds: float) -> None:
    """Sleep `seconds`, or less if `stop` is set meanwhile."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(seconds):
            await stop.wait()


async def _finish(task: asyncio.Task[None]) -> None:
    """Cancel `task` and wait for it to end."""
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
