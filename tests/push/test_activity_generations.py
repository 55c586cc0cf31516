"""Generations of a follower's Live Activity for one fixture, in publishing and the device API.

Publishing and a drainer against the APNs simulator: a start of generation 2 gives every follower
with no activity of generation 2 (their first has ended) a new one; an update of generation 2
reaches only generation 2; an end of generation 2 ends it and anything older still open, never a
newer one. The device API over real HTTP: a report attaches to the generation it names, or the
newest; a report for an ended one is taken (it is owed its end) and never revives it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import httpx
import pytest_asyncio
from sqlalchemy.ext.asyncio import AsyncEngine

from activities.push.apns import ApnsClient
from activities.push.drain import DrainConfig
from api.app import create_app
from domain.pushes import LiveState, PushInput
from scoreline.devices.store import report_activity_token
from scoreline.settings import Settings
from tests.push import seed
from tests.push.drainer import published, running_drainer
from tests.push.simulator import PushSim
from tests.push.test_devices_api import follow, register
from tests.support.http import serve
from tests.support.waiting import eventually

NOW = 1_790_000_000


def push(kind: str, event_key: str, generation: int, version: int, **fields: Any) -> PushInput:
    return PushInput(
        fixture_id=seed.FIXTURE_ID,
        event_key=event_key,
        kind=kind,  # type: ignore[arg-type]
        priority=10,
        state=LiveState(home=1, away=0, state="live_second_half", version=version),
        timestamp=NOW + version,
        generation=generation,
        **fields,
    )


async def test_each_generation_is_started_updated_and_ended_on_its_own(
    engine: AsyncEngine,
    apns_client: ApnsClient,
    drain_config: DrainConfig,
    sim: PushSim,
    db: asyncpg.Connection,
) -> None:
    """Three followers whose first activity runs: generation 1's end reaches their three tokens; the
    start of generation 2 reaches their push-to-start tokens once (published again: nothing); its
    update reaches only the two that reported a token of generation 2; its end reaches those two,
    and leaves a generation 3 activity alone."""
    await seed.fixture(db)
    first = await seed.running_activities(db, 3)
    async with running_drainer(engine, apns_client, drain_config):
        await published(engine, push("end", "renew-1-end", 1, 1))
        await eventually(lambda: _sent(sim, "end", 3), within=20)
        await published(engine, push("start", "renew-2", 2, 2, alert=True))
        again = await published(engine, push("start", "renew-2", 2, 3, alert=True))
        await eventually(lambda: _sent(sim, "start", 3), within=20)
        renewed = {activity.device_id: seed.apns_token() for activity in first[:2]}
        for device_id, token in renewed.items():
            await report_activity_token(engine, device_id, seed.FIXTURE_ID, token, 2)
        await db.execute(
            "INSERT INTO live_activity (device_id, fixture_id, generation) VALUES ($1, $2, 3)",
            first[0].device_id,
            seed.FIXTURE_ID,
        )
        await published(engine, push("update", "v4", 2, 4))
        await eventually(lambda: _sent(sim, "update", 2, version=4), within=20)
        await published(engine, push("end", "full_time", 2, 5, alert=True))
        await eventually(lambda: _sent(sim, "end", 5), within=20)

    assert again.mailboxes == 0, "a follower with a generation 2 activity is started again"
    pushes = await sim.pushes()
    starts = [p for p in pushes if p["payload"]["aps"]["event"] == "start"]
    push_to_start = await db.fetch(
        "SELECT push_to_start_token FROM device WHERE id = ANY($1::uuid[])", [a.device_id for a in first]
    )
    assert sorted(p["token"] for p in starts) == sorted(r["push_to_start_token"] for r in push_to_start)
    assert [p["payload"]["aps"]["attributes"]["generation"] for p in starts] == [2, 2, 2]
    updated = [p["token"] for p in pushes if p["payload"]["aps"]["content-state"]["version"] == 4]
    assert sorted(updated) == sorted(renewed.values())
    ends = [p for p in pushes if p["payload"]["aps"]["event"] == "end"]
    assert sorted(p["token"] for p in ends) == sorted([*(a.push_token for a in first), *renewed.values()]), (
        "each generation's activities got their own end, once"
    )
    newest = await db.fetchrow("SELECT status, want_end FROM live_activity WHERE generation = 3")
    assert (newest["status"], newest["want_end"]) == ("pending", False), "an older end closed a newer one"


async def _sent(sim: PushSim, event: str, count: int, *, version: int | None = None) -> bool:
    """At least `count` pushes of `event` (of content-state `version`) were accepted."""
    found = [
        p
        for p in await sim.pushes()
        if p["status"] == 200
        and p["payload"]["aps"]["event"] == event
        and version in (None, p["payload"]["aps"]["content-state"]["version"])
    ]
    return len(found) >= count


@pytest_asyncio.fixture
async def api(database_url: str, redis_url: str) -> AsyncIterator[httpx.AsyncClient]:
    settings = Settings(database_url=database_url, redis_url=redis_url, log_format="json")
    async with serve(create_app(settings)) as url, httpx.AsyncClient(base_url=url) as client:
        yield client


async def test_a_report_attaches_to_its_generation_and_never_revives_an_ended_one(
    api: httpx.AsyncClient, db: asyncpg.Connection
) -> None:
    """Generation 1 ended, generation 2 pushed-started: a late report naming 1 is taken and leaves
    it ended (a token reported after the end gets the end); one naming 2 (or none) makes 2 active;
    one naming 3 is 404; the listing shows both."""
    await seed.fixture(db)
    device, auth = await register(api)
    await follow(api, device, auth)
    await db.execute(
        """INSERT INTO live_activity (device_id, fixture_id, generation, status, started_at, ended_at)
        VALUES ($1::uuid, $2, 1, 'ended', now(), now()), ($1::uuid, $2, 2, 'pending', now(), NULL)""",
        device,
        seed.FIXTURE_ID,
    )
    path = f"/v1/devices/{device}/live-activities/{seed.FIXTURE_ID}"

    late_token = seed.apns_token()
    late = await api.put(path, json={"push_token": late_token, "generation": 1}, headers=auth)
    assert late.status_code == 200, late.text
    assert (late.json()["generation"], late.json()["status"]) == (1, "ended")
    unknown = await api.put(path, json={"push_token": seed.apns_token(), "generation": 3}, headers=auth)
    assert (unknown.status_code, unknown.json()["error"]["code"]) == (404, "live_activity_not_found")
    zero = await api.put(path, json={"push_token": seed.apns_token(), "generation": 0}, headers=auth)
    assert zero.status_code == 422
    rows = await db.fetch("SELECT generation, status, push_token FROM live_activity ORDER BY generation")
    assert [(r["generation"], r["status"], r["push_token"]) for r in rows] == [
        (1, "ended", late_token),
        (2, "pending", None),
    ]

    token = seed.apns_token()
    named = await api.put(path, json={"push_token": token, "generation": 2}, headers=auth)
    assert named.status_code == 200, named.text
    assert (named.json()["generation"], named.json()["status"]) == (2, "active")
    rotated = seed.apns_token()
    newest = await api.put(path, json={"push_token": rotated}, headers=auth)
    assert (newest.json()["generation"], newest.json()["status"]) == (2, "active")
    rows = await db.fetch("SELECT generation, status, push_token FROM live_activity ORDER BY generation")
    assert [(r["generation"], r["status"], r["push_token"]) for r in rows] == [
        (1, "ended", late_token),
        (2, "active", rotated),
    ]
    listed = (await api.get(f"/v1/devices/{device}/live-activities", headers=auth)).json()["live_activities"]
    assert [(a["generation"], a["status"]) for a in listed] == [(2, "active"), (1, "ended")]


async def test_an_activity_the_app_started_itself_is_the_first_generation(
    api: httpx.AsyncClient, db: asyncpg.Connection
) -> None:
    """A follower with no row yet: a report without a generation creates generation 1; one naming a
    generation (2, or 1) claims a push-to-start Scoreline never sent it and is 404."""
    await seed.fixture(db)
    device, auth = await register(api)
    await follow(api, device, auth)
    path = f"/v1/devices/{device}/live-activities/{seed.FIXTURE_ID}"
    for generation in (2, 1):
        named = await api.put(
            path, json={"push_token": seed.apns_token(), "generation": generation}, headers=auth
        )
        assert (named.status_code, named.json()["error"]["code"]) == (404, "live_activity_not_found")
    own = await api.put(path, json={"push_token": seed.apns_token()}, headers=auth)
    assert own.status_code == 200
    assert (own.json()["generation"], own.json()["status"]) == (1, "active")
    assert await db.fetchval("SELECT count(*) FROM live_activity") == 1
