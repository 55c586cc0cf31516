"""An activity's update token changes while the match runs (ActivityKit rotated it, or the app
reported it late): the activity goes on on the new token, up to and including the end.

A desk scores the match on a real worker (with its drainer); the phone's app goes through the real
device API; APNs is the simulator, which makes the old token answer 410 `Unregistered`.
"""

from __future__ import annotations

import asyncio

import pytest
from temporalio.client import Client

from scoreline.settings import Settings
from scoreline.temporal.match_runs import match_workflow_id
from tests.push import seed
from tests.push.phones import Pacer, Phone, deliveries, phones
from tests.push.screen import screen
from tests.push.simulator import PushSim
from tests.push.test_match_lifecycle import GOAL, Desk, _stop, desk_road
from tests.support.waiting import eventually
from workflows.match import MatchWorkflow

pytestmark = [pytest.mark.timeout(120), pytest.mark.usefixtures("fast_worker_drain")]

SECOND_GOAL = {**GOAL, "player_id": 110, "minute": 70}
"""Riverside's again: a draw at the end of the second half would go to extra time."""


async def report(phone: Phone, fixture_id: int, token: str) -> None:
    """The app reports `token` for its activity of `fixture_id`, as it does after a rotation."""
    response = await phone.api.put(
        f"/v1/devices/{phone.device_id}/live-activities/{fixture_id}",
        json={"push_token": token},
        headers=phone.auth,
    )
    assert response.status_code == 200, response.text


async def test_a_rotated_token_gets_the_rest_of_the_match_and_the_end(
    push_settings: Settings, database_url: str, temporal_client: Client, sim: PushSim
) -> None:
    """Before, the 410 of the old token ended the activity for good and the report of the new one
    got 409 `live_activity_ended`: no update and no end reached the phone for the rest of the match."""
    async with desk_road(push_settings, database_url, temporal_client) as road:
        fixture_id = await road.fixture()
        desk = Desk(road, fixture_id, await road.desk(fixture_id))
        (phone,) = await phones(road.http, sim, 1, prefix="rotation")
        await phone.follow(fixture_id)
        phone.run_app(fixture_id)
        old = phone.update_token
        handle = temporal_client.get_workflow_handle_for(MatchWorkflow.run, match_workflow_id(fixture_id))
        try:
            pacer = Pacer(phone)
            await pacer.change(lambda: desk.send("football.period_start", {"period": "1H"}))
            await asyncio.wait_for(phone.activity_running(), 30)
            await pacer.change(lambda: desk.send("football.goal", GOAL))
            await sim.unregister(old)
            await desk.send("football.period_end", {"period": "1H"})

            async def refused() -> bool:
                return any(d.status == 410 for d in await deliveries(sim, old))

            await eventually(refused, within=20)
            phone.update_token = seed.apns_token()
            await report(phone, fixture_id, phone.update_token)
            await desk.send("football.period_start", {"period": "2H"})
            await desk.send("football.goal", SECOND_GOAL)
            await desk.send("football.period_end", {"period": "2H"})
            await asyncio.wait_for(handle.result(), 60)

            async def ended() -> bool:
                return screen(await phone.received() + await deliveries(sim, old)).ended

            await eventually(ended, within=30)
        finally:
            phone.cancel()
            await _stop(handle)

    shown = screen(await phone.received() + await deliveries(sim, old))
    assert (shown.score, shown.state["state"]) == ((2, 0), "finished")
    assert [a.split(":")[0] for a in shown.alerts] == [
        "Riverside v Harbour",
        "GOAL! Riverside",
        "GOAL! Riverside",
        "Full time",
    ], shown.alerts
    assert await phone.updates(), "nothing reached the new token"


async def test_a_token_reported_after_the_end_gets_the_end(
    push_settings: Settings, database_url: str, temporal_client: Client, sim: PushSim
) -> None:
    """Before, a report that came after the end had been sent (to a token the phone no longer
    used) got 409 `live_activity_ended`, and the activity stayed on the lock screen for hours."""
    async with desk_road(push_settings, database_url, temporal_client) as road:
        fixture_id = await road.fixture()
        desk = Desk(road, fixture_id, await road.desk(fixture_id))
        on_time, late = await phones(road.http, sim, 2, prefix="late-report")
        for phone in (on_time, late):
            await phone.follow(fixture_id)
        on_time.run_app(fixture_id)
        handle = temporal_client.get_workflow_handle_for(MatchWorkflow.run, match_workflow_id(fixture_id))
        try:
            await Pacer(on_time).change(lambda: desk.send("football.period_start", {"period": "1H"}))
            await asyncio.wait_for(on_time.activity_running(), 30)
            await eventually(late.starts, within=20)
            await desk.send("football.goal", GOAL)
            await desk.send("football.period_end", {"period": "1H"})
            await desk.send("football.period_start", {"period": "2H"})
            await desk.send("football.period_end", {"period": "2H"})
            await asyncio.wait_for(handle.result(), 60)

            async def on_time_ended() -> bool:
                return screen(await on_time.received()).ended

            await eventually(on_time_ended, within=30)
            assert not await late.updates()
            await report(late, fixture_id, late.update_token)

            async def late_ended() -> bool:
                return screen(await late.received()).ended

            await eventually(late_ended, within=30)
        finally:
            on_time.cancel()
            await _stop(handle)

    for phone in (on_time, late):
        shown = screen(await phone.received())
        assert (shown.score, shown.state["state"]) == ((1, 0), "finished"), phone.name
    assert [d.event for d in await late.updates()] == ["end"], "the late token got more than the end"
