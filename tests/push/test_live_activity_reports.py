"""Pushes only where a follow asked for them: a Live Activity token is taken only from a follower, and
only for an activity Scoreline push-started (or the app's own, which names no generation).

Over real HTTP and Postgres and, for what is pushed, a worker and the APNs simulator. Issue 33,
item 4: a device reported a token for a match it did not follow, and every change was pushed to it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import asyncpg
import httpx
import pytest_asyncio
from temporalio.client import Client

from api.app import create_app
from scoreline.settings import Settings
from scoreline.temporal.match_runs import match_workflow_id
from tests.push import seed
from tests.push.phones import phones
from tests.push.simulator import PushSim
from tests.push.test_devices_api import follow, register
from tests.push.test_match_lifecycle import GOAL, Desk, _stop, desk_road
from tests.support.http import serve
from tests.support.waiting import eventually


@pytest_asyncio.fixture
async def api(database_url: str, redis_url: str) -> AsyncIterator[httpx.AsyncClient]:
    settings = Settings(database_url=database_url, redis_url=redis_url, log_format="json")
    async with serve(create_app(settings)) as url, httpx.AsyncClient(base_url=url) as client:
        yield client


async def test_a_token_for_a_match_the_device_does_not_follow_is_refused_and_never_pushed_to(
    push_settings: Settings, database_url: str, temporal_client: Client, sim: PushSim
) -> None:
    """A live match with a follower: a device that does not follow it reports a token for it and gets
    409 `not_following`; the goal then reaches the follower and nothing reaches that token. Before
    the fix the report was 200 and the goal was pushed to the stranger's token."""
    async with desk_road(push_settings, database_url, temporal_client) as road:
        fixture_id = await road.fixture()
        desk = Desk(road, fixture_id, await road.desk(fixture_id))
        follower, stranger = await phones(road.http, sim, 2, prefix="report")
        await follower.follow(fixture_id)
        follower.run_app(fixture_id)
        handle = temporal_client.get_workflow_handle(match_workflow_id(fixture_id))
        try:
            await desk.send("football.period_start", {"period": "1H"})
            await follower.activity_running()
            refused = await road.http.put(
                f"/v1/devices/{stranger.device_id}/live-activities/{fixture_id}",
                json={"push_token": stranger.update_token},
                headers=stranger.auth,
            )
            assert (refused.status_code, refused.json()["error"]["code"]) == (409, "not_following")

            await desk.send("football.goal", GOAL)

            async def goal_reached_the_follower() -> bool:
                return any(u.moment == "goal" for u in await follower.updates())

            await eventually(goal_reached_the_follower, within=30)
        finally:
            await _stop(handle)
        stored = await road.rows(
            "SELECT count(*) AS n FROM live_activity WHERE device_id = $1::uuid", stranger.device_id
        )
    assert stored[0]["n"] == 0
    assert await stranger.updates() == [], "pushed to a token of a match the device does not follow"
    assert await stranger.starts() == []


async def test_an_activity_scoreline_started_is_refused_once_the_device_unfollowed(
    api: httpx.AsyncClient, db: asyncpg.Connection
) -> None:
    """Scoreline push-started the device's activity, then the device unfollowed: a token reported
    for it is 409 `not_following` and not stored. Before the fix it was 200 and the activity became
    `active`, so every later change was pushed to it."""
    await seed.fixture(db)
    device, auth = await register(api)
    await db.execute(
        "INSERT INTO live_activity (device_id, fixture_id, started_at) VALUES ($1::uuid, $2, now())",
        device,
        seed.FIXTURE_ID,
    )
    response = await api.put(
        f"/v1/devices/{device}/live-activities/{seed.FIXTURE_ID}",
        json={"push_token": seed.apns_token(), "generation": 1},
        headers=auth,
    )
    assert (response.status_code, response.json()["error"]["code"]) == (409, "not_following")
    row = await db.fetchrow("SELECT status, push_token FROM live_activity")
    assert (row["status"], row["push_token"]) == ("pending", None)


async def test_a_token_for_a_generation_scoreline_never_started_is_refused(
    api: httpx.AsyncClient, db: asyncpg.Connection
) -> None:
    """A follower with no activity reports a token naming generation 1 (the generation of a
    push-to-start's attributes): Scoreline never push-started it, so it is 404
    `live_activity_not_found` and nothing is stored. Before the fix it was 200 and a generation 1
    activity was made out of the report."""
    await seed.fixture(db)
    device, auth = await register(api)
    await follow(api, device, auth)
    response = await api.put(
        f"/v1/devices/{device}/live-activities/{seed.FIXTURE_ID}",
        json={"push_token": seed.apns_token(), "generation": 1},
        headers=auth,
    )
    assert (response.status_code, response.json()["error"]["code"]) == (404, "live_activity_not_found")
    assert await db.fetchval("SELECT count(*) FROM live_activity") == 0


async def test_a_followers_started_activity_and_its_own_app_started_one_are_still_accepted(
    api: httpx.AsyncClient, db: asyncpg.Connection
) -> None:
    """What the refusals must not take away (passes before and after the fix): a follower's report
    for the activity Scoreline push-started, by its generation, makes it `active`; another
    follower's report naming no generation, with no activity stored, is the app's own activity:
    generation 1, `active`."""
    await seed.fixture(db)
    started, started_auth = await register(api)
    own, own_auth = await register(api, install_id="install-own-activity")
    for device, auth in ((started, started_auth), (own, own_auth)):
        await follow(api, device, auth)
    await db.execute(
        "INSERT INTO live_activity (device_id, fixture_id, started_at) VALUES ($1::uuid, $2, now())",
        started,
        seed.FIXTURE_ID,
    )
    token = seed.apns_token()
    reported = await api.put(
        f"/v1/devices/{started}/live-activities/{seed.FIXTURE_ID}",
        json={"push_token": token, "generation": 1},
        headers=started_auth,
    )
    assert reported.status_code == 200, reported.text
    assert (reported.json()["generation"], reported.json()["status"]) == (1, "active")
    apps = await api.put(
        f"/v1/devices/{own}/live-activities/{seed.FIXTURE_ID}",
        json={"push_token": seed.apns_token()},
        headers=own_auth,
    )
    assert apps.status_code == 200, apps.text
    assert (apps.json()["generation"], apps.json()["status"]) == (1, "active")
    rows = await db.fetch(
        "SELECT device_id::text AS device, push_token FROM live_activity WHERE status = 'active'"
    )
    assert {row["device"] for row in rows} == {started, own}
    assert token in {row["push_token"] for row in rows}
