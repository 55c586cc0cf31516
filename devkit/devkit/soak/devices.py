"""The soak's simulated iPhones: they register, follow matches, report their Live Activities'
update tokens, rotate a few, report a few late, and a few delete the app mid-run; `check` then
judges what each phone would show (`devkit.soak.device_check`).

Each phone does what the app does (as `devkit.devstack.demo_phones`, at soak scale):

- `POST /v1/devices` with a push-to-start token, then follows a seeded 1 to 3 of the run's
  fixtures (`POST /v1/devices/{id}/follows`; a 404 means the fixture is not synced yet: asked again
  a few seconds later);
- when an accepted push-to-start for a match reaches its push-to-start token, it reports a new
  update token for that activity (`PUT /v1/devices/{id}/live-activities/{fixture}` with the
  generation the start's attributes carry), as ActivityKit hands one to the app;
- a seeded `ROTATING_SHARE` rotate each running activity's update token a seeded while after
  reporting it, as ActivityKit does: the old token answers 410 from then on (`POST /_sim/unregister`)
  and the phone reports the new one;
- a seeded `LATE_SHARE` report their activity's token only once the match's end has reached
  some phone (the end must still reach them);
- a seeded 1% delete the app a seeded while after their first activity was reported: the APNs
  simulator is told that every token the phone ever had is gone, as Apple answers 410 once an app
  is deleted, and the phone does nothing more.

Pushes are discovered by tailing the simulator's journal file (`SoakTargets.apns_journal`), one
reader for all phones: asking the admin API per phone would be 10,000 requests a second.

The stack is being broken all along (API processes killed, Postgres stopped, Redis flushed), so
every call is retried like the app would: on a connection error, a 5xx or a 429 (after its
`Retry-After`), with seeded, jittered exponential backoff, moving to the next API process when one
does not answer. A registration whose answer was lost comes back as 409 `install_registered`; the
phone then registers a new install id, as an app that lost its device token must. Every random
choice comes from the `rng` given (one seeded `random.Random` per phone, drawn in order at
construction), so a seed replays the same phones, tokens, follows, rotations and deletions.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import time
from collections.abc import Collection, Coroutine, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg
import httpx

from devkit.soak.device_check import (
    CHECK,
    ActivityReport,
    DeviceLedger,
    MatchFacts,
    PhoneRecord,
    Published,
    Push,
    Span,
    alert_of,
    clock,
    parse_line,
)
from devkit.soak.faults import SENDING_OUTAGES, WORKER_INTERRUPTIONS, InjectedFault
from devkit.soak.model import CheckResult, SoakFixtures, SoakTargets, Violation
from devkit.soak.schedule import APNS_DISCONNECT
from scoreline.db.urls import asyncpg_dsn
from scoreline.logging import get_logger

log = get_logger("devkit.soak.devices")

IN_FLIGHT = 50
"""Registration and follow calls at once, across all phones; as many token reports again, apart:
an app reports its token the moment its activity starts, whatever other phones are doing (sharing
one limit, 10,000 phones joining under faults held every report back for the whole of seed 5)."""
TOKEN_BYTES = 80
"""Live-Activity-length APNs tokens (160 hex digits), like the real ones."""
DELETING_SHARE = 0.01
DELETE_AFTER_S = (10.0, 120.0)
"""A deleting phone deletes the app this long (seeded) after its first activity was reported."""
ROTATING_SHARE = 0.03
ROTATE_AFTER_S = (15.0, 90.0)
"""A rotating phone rotates each activity's token this long (seeded) after reporting it, if the
activity has not ended by then: mid-match, as ActivityKit does."""
LATE_SHARE = 0.03
"""Phones that report their activities' tokens only after the match's end reached some phone."""
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
DATABASE_TIMEOUT_S = 60.0

Key = tuple[int, int]
"""(fixture, generation): one of a phone's activities."""


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
    rotate_after: float | None = None
    reports_late: bool = False
    device_id: str | None = None
    auth: dict[str, str] = field(default_factory=dict)
    registrations: int = 0
    follows: dict[int, float] = field(default_factory=dict)
    given_up: set[int] = field(default_factory=set)
    pending: set[Key] = field(default_factory=set)
    """(fixture, generation) starts seen, whether or not their report succeeded."""
    issued: list[str] = field(default_factory=list)
    """Every update token the phone made (reported or not): deleting the app kills them all."""
    reports: list[ActivityReport] = field(default_factory=list)
    """Every report the API answered (confirmed or refused), in order."""
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

    @property
    def ordinary(self) -> bool:
        """Neither deletes the app, nor rotates, nor reports late: a phone to hold a hot token."""
        return self.delete_after is None and self.rotate_after is None and not self.reports_late

    def new_token(self) -> str:
        return self.rng.randbytes(TOKEN_BYTES).hex()

    def record(self) -> PhoneRecord:
        return PhoneRecord(
            device=self.device_id or self.install_id,
            push_to_start_token=self.push_to_start_token,
            follows=dict(self.follows),
            asked=frozenset(self.wanted),
            activities=tuple(self.reports),
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
        faults: Sequence[InjectedFault] = (),
    ) -> None:
        self._targets = targets
        self._faults = faults
        """The soak's fault records (read when checking): workers' interruptions, outages."""
        self._fixtures = fixtures.all
        everyone = range(devices)
        deleting = set(rng.sample(everyone, round(devices * DELETING_SHARE)))
        others = [n for n in everyone if n not in deleting]
        rotating = set(rng.sample(others, round(devices * ROTATING_SHARE)))
        late = set(rng.sample([n for n in others if n not in rotating], round(devices * LATE_SHARE)))
        self._phones = [
            self._plan(n, random.Random(rng.getrandbits(64)), n in deleting, n in rotating, n in late)
            for n in everyone
        ]
        self._hot_rng = random.Random(rng.getrandbits(64))
        self._by_starter = {phone.push_to_start_token: phone for phone in self._phones}
        self._by_update: dict[str, tuple[_Phone, Key]] = {}
        self._ended: set[Key] = set()
        """Activities an accepted end reached (on any phone), as the journal shows them."""
        self._joining = asyncio.Semaphore(IN_FLIGHT)
        self._reporting = asyncio.Semaphore(IN_FLIGHT)
        self._tasks: set[asyncio.Task[None]] = set()
        self._rotated = 0
        self._joined_after: float | None = None
        """Seconds until every phone was registered with its follows made (None: not by the end)."""

    def _plan(self, index: int, rng: random.Random, deletes: bool, rotates: bool, late: bool) -> _Phone:
        wanted = tuple(rng.sample(self._fixtures, min(len(self._fixtures), rng.randint(1, 3))))
        return _Phone(
            index=index,
            rng=rng,
            jitter=random.Random(rng.getrandbits(64)),
            install_id=f"soak-{index}-{rng.getrandbits(48):012x}",
            push_to_start_token=rng.randbytes(TOKEN_BYTES).hex(),
            wanted=wanted,
            delete_after=rng.uniform(*DELETE_AFTER_S) if deletes else None,
            rotate_after=rng.uniform(*ROTATE_AFTER_S) if rotates else None,
            reports_late=late,
        )

    def hot_token(self) -> tuple[str, str] | None:
        """A running activity's update token on an ordinary phone, seeded among those reported so
        far (the hot-token fault makes it fail for the rest of its match), with words naming it;
        None while there is none."""
        running = sorted(
            (report.token, f"fixture {report.fixture_id} device {phone.device_id}")
            for phone in self._phones
            if phone.ordinary
            for report in phone.reports
            if report.refused is None and (report.fixture_id, report.generation) not in self._ended
        )
        return self._hot_rng.choice(running) if running else None

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
            "reports": sum(report.refused is None for phone in phones for report in phone.activities),
            "reports_refused": sum(
                report.refused is not None for phone in phones for report in phone.activities
            ),
            "rotated": self._rotated,
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

    # --- starts, ends, reports, rotations, deletions --------------------------------------------

    async def _watch(self, api: _Api, admin: _Api, stop: asyncio.Event) -> None:
        """Read new journal lines every `POLL_S`: report each start that reached one of our phones,
        and note each end that reached one of their activities."""
        tail = _JournalTail(self._targets.apns_journal)
        while not stop.is_set():
            for push in await asyncio.to_thread(_new_starts_and_ends, tail):
                if push.event == "end":
                    self._end_seen(push)
                    continue
                phone = self._by_starter.get(push.token)
                if phone is not None:
                    self._started(api, admin, phone, push, stop)
            if not tail.behind:
                await _sleep_unless(stop, POLL_S)

    def _end_seen(self, end: Push) -> None:
        reached = self._by_update.get(end.token)
        if reached is not None:
            self._ended.add(reached[1])

    def _started(self, api: _Api, admin: _Api, phone: _Phone, start: Push, stop: asyncio.Event) -> None:
        assert start.fixture_id is not None, "_new_starts_and_ends keeps starts with a fixture only"
        key = (start.fixture_id, start.generation)
        if phone.deleted_at is not None or phone.device_id is None or key in phone.pending:
            return
        phone.pending.add(key)
        self._spawn(self._report(api, admin, phone, key, stop))

    async def _report(self, api: _Api, admin: _Api, phone: _Phone, key: Key, stop: asyncio.Event) -> None:
        """Report the new activity's token (a late phone once the match's end reached a phone);
        then, as planned, delete the app or rotate the token."""
        token = phone.new_token()
        phone.issued.append(token)
        self._by_update[token] = (phone, key)
        first = not any(report.refused is None for report in phone.reports)
        if phone.reports_late:
            while not self._has_ended(key) and not stop.is_set():
                await _sleep_unless(stop, POLL_S)
        report = await self._put_token(api, phone, key, token)
        if report is None or report.refused is not None:
            return
        if first and phone.delete_after is not None:
            self._spawn(self._delete_app(admin, phone, phone.delete_after, stop))
        if phone.rotate_after is not None:
            self._spawn(self._rotate(api, admin, phone, key, token, stop))

    def _has_ended(self, key: Key) -> bool:
        """An end of this generation or a newer one of the fixture reached some phone."""
        fixture, generation = key
        return any(f == fixture and g >= generation for f, g in self._ended)

    async def _put_token(self, api: _Api, phone: _Phone, key: Key, token: str) -> ActivityReport | None:
        """Report `token` for the activity; the report as the API answered it (None: stopped, or
        the app was deleted meanwhile)."""
        fixture, generation = key
        async with self._reporting:
            response = await api.call(
                phone.jitter,
                "PUT",
                f"/v1/devices/{phone.device_id}/live-activities/{fixture}",
                body={"push_token": token, "generation": generation},
                headers=phone.auth,
            )
        if response is None or phone.deleted_at is not None:
            return None
        refused = None if response.status_code == 200 else response.status_code
        if refused is not None:
            log.warning("soak.report_refused", phone=phone.index, fixture=fixture, status=refused)
        report = ActivityReport(token, fixture, generation, time.time(), refused)
        phone.reports.append(report)
        return report

    async def _rotate(
        self, api: _Api, admin: _Api, phone: _Phone, key: Key, old: str, stop: asyncio.Event
    ) -> None:
        """After the phone's `rotate_after`, unless the activity ended: the old token dies at APNs
        and the phone reports a new one."""
        assert phone.rotate_after is not None
        await _sleep_unless(stop, phone.rotate_after)
        if stop.is_set() or phone.deleted_at is not None or key in self._ended:
            return
        token = phone.new_token()
        phone.issued.append(token)
        self._by_update[token] = (phone, key)
        await admin.call(phone.jitter, "POST", "/_sim/unregister", body={"token": old})
        self._rotated += 1
        await self._put_token(api, phone, key, token)

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

    # --- facts ----------------------------------------------------------------------------------

    async def _facts(self) -> MatchFacts:
        """What the matches published (`la_push`) and how each follow stands in Postgres; the
        workers' interruptions and the outages, from the fault records."""
        fixtures = list(self._fixtures)
        async with asyncio.timeout(DATABASE_TIMEOUT_S):
            connection = await _connect(self._targets.database_url)
            try:
                published = await _published_pushes(connection, fixtures)
                words = await _follows_in_words(connection, fixtures)
            finally:
                await connection.close()
        return MatchFacts(
            published=published,
            interruptions=_spans(self._faults, WORKER_INTERRUPTIONS) + _connection_drops(self._faults),
            outages=_spans(self._faults, SENDING_OUTAGES),
            words=words,
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


def _new_starts_and_ends(tail: _JournalTail) -> list[Push]:
    """The accepted starts and ends among the lines written since the last call (read and parsed
    off the event loop; a cheap test first, as most lines are updates)."""
    entries = [parse_line(line) for line in tail.read() if '"start"' in line or '"end"' in line]
    return [
        entry
        for entry in entries
        if isinstance(entry, Push)
        and entry.accepted
        and (entry.event == "end" or (entry.event == "start" and entry.fixture_id is not None))
    ]


def _read_ledger(path: Path, phones: Collection[PhoneRecord]) -> DeviceLedger:
    ledger = DeviceLedger(phones)
    with contextlib.suppress(FileNotFoundError), path.open(encoding="utf-8") as file:
        for line in file:
            entry = parse_line(line)
            if entry is not None:
                ledger.add(entry)
    return ledger


async def _published_pushes(connection: asyncpg.Connection, fixtures: list[int]) -> tuple[Published, ...]:
    """Every push the fixtures published (`la_push`), as the check holds them."""
    rows = await connection.fetch(
        """SELECT fixture_id, stamp, event, generation, (content_state->>'version')::bigint AS version,
                  alert::text AS alert, stale_date, extract(epoch FROM created_at)::float8 AS at
           FROM la_push WHERE fixture_id = ANY($1::bigint[])""",
        fixtures,
    )
    return tuple(_published(row) for row in rows)


def _published(row: asyncpg.Record) -> Published:
    return Published(
        fixture_id=int(row["fixture_id"]),
        stamp=float(row["stamp"]),
        event=str(row["event"]),
        generation=int(row["generation"]),
        version=None if row["version"] is None else int(row["version"]),
        alert=None if row["alert"] is None else alert_of(json.loads(row["alert"])),
        stale_date=float(row["stale_date"]),
        at=float(row["at"]),
    )


def _connection_drops(faults: Sequence[InjectedFault]) -> tuple[Span, ...]:
    """When APNs dropped every connection mid-request (`disconnect`): a request on its way when
    that began is lost with its connection, and no record of APNs' shows it."""
    return tuple(
        Span(fault.began_at, fault.ended_at)
        for fault in faults
        if fault.survived and fault.planned.target == APNS_DISCONNECT
    )


def _spans(faults: Sequence[InjectedFault], kinds: Collection[object]) -> tuple[Span, ...]:
    """When the faults of `kinds` that were injected held (epoch seconds)."""
    return tuple(
        Span(fault.began_at, fault.ended_at)
        for fault in faults
        if fault.survived and fault.planned.kind in kinds
    )


async def _follows_in_words(
    connection: asyncpg.Connection, fixtures: list[int]
) -> dict[tuple[str, int], str]:
    """(device id, fixture) → each follow as Postgres shows it, in a few words: when it was stored,
    whether the push-to-start token is still active, and each activity's mailbox (its generation,
    status, token, the stamp it wants and the one APNs took, an alert owed and its mark, its next
    try)."""
    follows = await connection.fetch(
        """SELECT f.device_id::text AS device, f.fixture_id,
                  extract(epoch FROM f.created_at)::float8 AS at, d.push_to_start_active AS active
           FROM follow f JOIN device d ON d.id = f.device_id WHERE f.fixture_id = ANY($1::bigint[])""",
        fixtures,
    )
    mailboxes = await connection.fetch(
        """SELECT device_id::text AS device, fixture_id, generation, status, push_token_active,
                  started_at IS NOT NULL AS started, want_stamp, want_end, sent_stamp, alert_stamp,
                  extract(epoch FROM alert_marked_at)::float8 AS marked,
                  extract(epoch FROM next_try_at)::float8 AS next_try, tries
           FROM live_activity WHERE fixture_id = ANY($1::bigint[]) ORDER BY generation""",
        fixtures,
    )
    shown: dict[tuple[str, int], list[str]] = {}
    for row in mailboxes:
        shown.setdefault((str(row["device"]), int(row["fixture_id"])), []).append(_mailbox_words(row))
    found: dict[tuple[str, int], str] = {}
    for row in follows:
        device, fixture = str(row["device"]), int(row["fixture_id"])
        words = [f"follow stored {clock(row['at'])}"]
        if not row["active"]:
            words.append("push-to-start token inactive")
        words += shown.get((device, fixture), ["no activity"])
        found[(device, fixture)] = "; ".join(words)
    return found


def _mailbox_words(row: asyncpg.Record) -> str:
    """One `live_activity` row in a few words."""
    words = [f"g{row['generation']} {row['status']}" + (" started" if row["started"] else "")]
    if not row["push_token_active"]:
        words.append("token off")
    wanted = f"wants {row['want_stamp']}" + (" (end)" if row["want_end"] else "")
    words.append(f"{wanted}, sent {row['sent_stamp']}")
    if row["alert_stamp"] is not None:
        words.append(f"alert {row['alert_stamp']} owed")
    if row["marked"] is not None:
        words.append(f"marked {clock(row['marked'])}")
    if row["next_try"] is not None:
        words.append(f"next try {clock(row['next_try'])} after {row['tries']} tries")
    return ", ".join(words)


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
