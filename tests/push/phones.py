"""Phones for the Live Activity lifecycle tests: the app's side of the device API, and what reached it.

A `Phone` registers through `POST /v1/devices` with its push-to-start token, follows fixtures, and,
like the app does once ActivityKit started the activity remotely, reports the new activity's update
token (`PUT /v1/devices/{id}/live-activities/{fixture_id}`) as soon as the push-to-start shows up in
the simulator's journal. What it received is read back from the simulator (headers + payloads).
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

import asyncpg
import httpx

from tests.push import seed
from tests.push.simulator import PushSim
from tests.support.provider import recording
from tests.support.waiting import eventually

GOAL_KINDS = frozenset({"goal", "own_goal", "penalty_goal"})


@dataclass
class Delivery:
    """One push the simulator accepted for one of the phone's tokens."""

    seq: int
    token: str
    headers: dict[str, str]
    aps: dict[str, Any]
    status: int | None
    dropped_by_device: str | None

    @property
    def event(self) -> str:
        return str(self.aps["event"])

    @property
    def state(self) -> dict[str, Any]:
        return dict(self.aps["content-state"])

    @property
    def score(self) -> tuple[int, int]:
        return self.state["homeScore"], self.state["awayScore"]

    @property
    def priority(self) -> int:
        return int(self.headers["apns-priority"])

    @property
    def alerting(self) -> bool:
        return "alert" in self.aps

    @property
    def moment(self) -> str | None:
        last = self.state.get("lastMoment")
        return None if last is None else str(last["kind"])


@dataclass
class Phone:
    """One install of the app."""

    api: httpx.AsyncClient
    sim: PushSim
    name: str
    push_to_start_token: str = field(default_factory=seed.apns_token)
    update_token: str = field(default_factory=seed.apns_token)
    device_id: str | None = None
    auth: dict[str, str] = field(default_factory=dict)
    reported: asyncio.Event = field(default_factory=asyncio.Event)
    _app: asyncio.Task[None] | None = None

    async def register(self) -> Phone:
        response = await self.api.post(
            "/v1/devices",
            json={
                "install_id": f"install-{self.name}-{uuid.uuid4().hex[:12]}",
                "platform": "ios",
                "environment": "sandbox",
                "push_to_start_token": self.push_to_start_token,
                "app_version": "3.0.0",
                "locale": "en-GB",
            },
        )
        assert response.status_code == 201, response.text
        body = response.json()
        self.device_id, self.auth = body["id"], {"authorization": f"Bearer {body['token']}"}
        return self

    async def follow(self, fixture_id: int) -> None:
        response = await self.api.post(
            f"/v1/devices/{self.device_id}/follows", json={"fixture_id": fixture_id}, headers=self.auth
        )
        assert response.status_code == 201, response.text

    def run_app(self, fixture_id: int, *, within: float = 30.0) -> None:
        """In the background: wait for the push-to-start, then report the activity's update token."""

        async def app() -> None:
            await eventually(lambda: self._start_arrived(), within=within, every=0.02)
            response = await self.api.put(
                f"/v1/devices/{self.device_id}/live-activities/{fixture_id}",
                json={"push_token": self.update_token},
                headers=self.auth,
            )
            assert response.status_code == 200, response.text
            assert response.json()["status"] == "active"
            self.reported.set()

        self._app = asyncio.create_task(app(), name=f"app-{self.name}")

    async def activity_running(self) -> None:
        """The app saw its push-to-start and reported the update token (or its failure is raised)."""
        assert self._app is not None, "run_app first"
        await self._app

    async def _start_arrived(self) -> bool:
        return bool(await self.sim.pushes(token=self.push_to_start_token))

    async def starts(self) -> list[Delivery]:
        return await deliveries(self.sim, self.push_to_start_token)

    async def updates(self) -> list[Delivery]:
        """Everything sent to the activity's update token, in the order the simulator got it."""
        return await deliveries(self.sim, self.update_token)

    async def received(self) -> list[Delivery]:
        """Both tokens' deliveries, in arrival order."""
        both = await asyncio.gather(self.starts(), self.updates())
        return sorted([*both[0], *both[1]], key=lambda d: d.seq)

    def cancel(self) -> None:
        if self._app is not None and not self._app.done():
            self._app.cancel()


async def deliveries(sim: PushSim, token: str) -> list[Delivery]:
    return [
        Delivery(
            seq=record["seq"],
            token=record["token"],
            headers=record["headers"],
            aps=record["payload"]["aps"],
            status=record["status"],
            dropped_by_device=record["dropped_by_device"],
        )
        for record in sorted(await sim.pushes(token=token), key=lambda r: r["seq"])
    ]


async def phones(api: httpx.AsyncClient, sim: PushSim, count: int, prefix: str) -> list[Phone]:
    return list(await asyncio.gather(*(Phone(api, sim, f"{prefix}{n}").register() for n in range(count))))


async def insert_provider_fixture(db: asyncpg.Connection, fixture_id: int) -> None:
    """The fixture row the sync would have written before kickoff, so the app can follow it; the
    ingest refreshes it from the provider."""
    await db.execute(
        """INSERT INTO fixture (id, name, state, home_team, away_team, competition)
        VALUES ($1, $2, 'scheduled', $3::jsonb, $4::jsonb, $5::jsonb)""",
        fixture_id,
        f"{seed.HOME} vs {seed.AWAY}",
        json.dumps({"id": 9001, "name": seed.HOME}),
        json.dumps({"id": 9002, "name": seed.AWAY}),
        json.dumps({"id": 501, "name": "Premier League"}),
    )


def assert_well_formed(delivery: Delivery, topic: str) -> None:
    """Accepted by the simulator (JWT, headers, size), and a phone would act on it."""
    assert delivery.status == 200, delivery
    assert delivery.dropped_by_device is None, delivery
    assert delivery.headers["apns-push-type"] == "liveactivity"
    assert delivery.headers["apns-topic"] == f"{topic}.push-type.liveactivity"


def fresh(starts: Sequence[Delivery], updates: Sequence[Delivery]) -> list[Delivery]:
    """`updates` without those that only repeat the state on screen (its `aps.timestamp`, no alert):
    a token reported anew gets the current state at once, which the phone shows no differently."""
    shown = max((int(s.aps["timestamp"]) for s in starts), default=None)
    kept: list[Delivery] = []
    for update in updates:
        stamp = int(update.aps["timestamp"])
        if update.event == "update" and not update.alerting and stamp == shown:
            continue
        kept.append(update)
        shown = stamp if shown is None else max(shown, stamp)
    return kept


def assert_lifecycle(
    starts: Sequence[Delivery], updates: Sequence[Delivery], topic: str, *, strict_timestamps: bool = True
) -> None:
    """One push-to-start; then updates in order (`aps.timestamp` strictly increasing unless told
    otherwise, versions never down), and exactly one `end`, last, with a dismissal date. Repeats
    of the state on screen are left out (`fresh`)."""
    updates = fresh(starts, updates)
    assert [s.event for s in starts] == ["start"], [s.aps for s in starts]
    (start,) = starts
    assert_well_formed(start, topic)
    assert start.priority == 10 and start.alerting
    assert start.aps["attributes-type"] == "MatchActivityAttributes"
    assert start.aps["input-push-token"] == 1
    assert updates, "no update or end reached the activity"
    for delivery in updates:
        assert_well_formed(delivery, topic)
    events = [u.event for u in updates]
    assert events.count("end") == 1 and events[-1] == "end", events
    assert set(events[:-1]) <= {"update"}, events
    end = updates[-1]
    assert end.aps["dismissal-date"] >= end.aps["timestamp"]
    assert "stale-date" not in end.aps
    chain = [start, *updates]
    stamps = [d.aps["timestamp"] for d in chain]
    versions = [d.state["version"] for d in chain]
    assert stamps == sorted(stamps), f"aps.timestamp went back: {stamps}"
    assert versions == sorted(versions), f"content-state version went back: {versions}"
    updates_only = [d.aps["timestamp"] for d in updates]
    assert not strict_timestamps or all(a < b for a, b in pairwise(updates_only)), (
        f"aps.timestamp not strictly increasing: {summary(updates)}"
    )


def alerts(updates: Sequence[Delivery]) -> list[Delivery]:
    return [u for u in updates if u.event == "update" and u.alerting]


def summary(updates: Sequence[Delivery]) -> list[tuple[Any, ...]]:
    """A readable line per push, for failure messages."""
    return [
        (u.event, u.priority, u.aps["timestamp"], u.state["version"], u.score, u.state["state"], u.moment,
         u.alerting)
        for u in updates
    ]  # fmt: skip


class Pacer:
    """Lets one material change at a time happen, each in a later wall-clock second than the last push.

    `aps.timestamp` has whole seconds of the workflow's clock at the change: a replay that squeezes
    90 minutes into seconds, or a desk sending two commands in one second, gives two pushes the same
    timestamp. Real matches are paced by the 2.5 s polling and by people; so is this: before a
    change, wait until the clock is past the last push's second; after it, wait until `witness`
    received the pushes it causes (one, unless `settled` wants more).
    """

    def __init__(
        self,
        witness: Phone,
        settled: Callable[[Delivery], Awaitable[bool]] | None = None,
        *,
        within: float = 20.0,
    ) -> None:
        self.witness = witness
        self.settled = settled
        self.within = within
        self.last_timestamp: int | None = None

    async def change(self, action: Callable[[], Awaitable[object]]) -> Delivery:
        received = await self.witness.received()
        stamps = [int(d.aps["timestamp"]) for d in received]
        if self.last_timestamp is not None:
            stamps.append(self.last_timestamp)
        if stamps:
            await asyncio.sleep(max(0.0, max(stamps) + 1.02 - time.time()))
        before = len(received)
        await action()

        async def arrived() -> Delivery | None:
            received = await self.witness.received()
            if len(received) <= before:
                return None
            newest = received[-1]
            return newest if self.settled is None or await self.settled(newest) else None

        newest = await eventually(arrived, within=self.within, every=0.02)
        self.last_timestamp = int(newest.aps["timestamp"])
        return newest


KEY_ITEM_TYPES = frozenset({14, 15, 16, 20, 21})
"""SportMonks goal, own goal, penalty goal, red card, second yellow: the key moments."""


@dataclass(frozen=True)
class Step:
    """A recording line that shows something new (lines that only tick the clock are left out)."""

    t: float
    material: bool
    """The watch reports it (state, score, or a key moment appears or disappears): a push (two
    when a goal disappears: the score drops at once, the retraction follows)."""


def steps(name: str) -> list[Step]:
    lines = [json.loads(line) for line in recording(name).read_text().splitlines()[1:]]
    found: list[Step] = []
    previous: dict[str, Any] | None = None
    for line in lines:
        fixture = line["fixture"]
        if previous is None:
            found.append(Step(float(line["t"]), material=False))
        elif any(fixture.get(key) != value for key, value in previous.items() if key != "periods"):
            material = (
                fixture["state_id"] != previous["state_id"]
                or _score(fixture) != _score(previous)
                or _key_items(fixture) != _key_items(previous)
            )
            found.append(Step(float(line["t"]), material))
        previous = fixture
    return found


def _score(fixture: dict[str, Any]) -> dict[str, int]:
    return {
        s["score"]["participant"]: s["score"]["goals"]
        for s in fixture.get("scores") or []
        if s["description"] == "CURRENT"
    }


def _key_items(fixture: dict[str, Any]) -> set[int]:
    """Key moments on show; a rescinded one stays listed (the ingest does not push a rescission)."""
    items = [*(fixture.get("events") or []), *(fixture.get("timeline") or [])]
    return {item["id"] for item in items if item.get("type_id") in KEY_ITEM_TYPES}
