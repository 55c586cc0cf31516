"""An APNs outage across full time, longer than every patience the drainer has, ends every activity.

A desk scores the match on a real worker whose drainer has test-sized delays (lease, start grace,
backoff); APNs answers 503 from just after the first goal until well after full time, for several
times the longest of those delays. What each phone shows is read from the simulator (`screen`).
"""

from __future__ import annotations

import asyncio
import time
from datetime import timedelta

import pytest
from temporalio.client import Client

from activities.push.drain import DrainConfig
from scoreline.settings import Settings
from scoreline.temporal.match_runs import match_workflow_id
from tests.push.conftest import fast_drain
from tests.push.phones import Pacer, phones
from tests.push.screen import screen
from tests.push.simulator import PushSim
from tests.push.test_match_lifecycle import GOAL, Desk, _stop, desk_road
from tests.support.waiting import eventually
from workflows.match import MatchWorkflow

pytestmark = [pytest.mark.timeout(240), pytest.mark.usefixtures("fast_worker_drain")]

FOLLOWERS = 3
REQUEST_TIMEOUT = timedelta(seconds=2)
"""Short, so the test-sized lease (1 s + this + the 2 s margin) is short and the outage outlasts it."""
OUTLASTS = 4
"""The outage lasts this many times the longest of the drainer's lease, start grace and backoff."""


async def test_every_follower_shows_the_end_and_the_final_score_after_an_outage_across_full_time(
    push_settings: Settings, database_url: str, temporal_client: Client, sim: PushSim
) -> None:
    """Before, a push was dropped after 20 attempts (about 8 minutes) and nothing recorded it as
    owed: an outage longer than that across full time left every activity on screen for hours."""
    settings = push_settings.model_copy(update={"apns_request_timeout": REQUEST_TIMEOUT})
    drain = fast_drain(DrainConfig.from_settings(settings))
    outage = OUTLASTS * max(drain.lease_s, drain.start_grace_s, drain.backoff_cap_s)
    async with desk_road(settings, database_url, temporal_client) as road:
        fixture_id = await road.fixture()
        desk = Desk(road, fixture_id, await road.desk(fixture_id))
        followers = await phones(road.http, sim, FOLLOWERS, prefix="outage")
        for phone in followers:
            await phone.follow(fixture_id)
            phone.run_app(fixture_id)
        handle = temporal_client.get_workflow_handle_for(MatchWorkflow.run, match_workflow_id(fixture_id))
        try:
            pacer = Pacer(followers[0])
            await pacer.change(lambda: desk.send("football.period_start", {"period": "1H"}))
            await asyncio.wait_for(asyncio.gather(*(p.activity_running() for p in followers)), 30)
            await pacer.change(lambda: desk.send("football.goal", GOAL))
            await sim.fault(status=503, duration_s=outage)
            down_until = time.monotonic() + outage
            await desk.send("football.period_end", {"period": "1H"})
            await desk.send("football.period_start", {"period": "2H"})
            await desk.send("football.goal", {**GOAL, "player_id": 110, "minute": 80})
            await desk.send("football.period_end", {"period": "2H"})
            outcome = await asyncio.wait_for(handle.result(), 60)
            assert time.monotonic() < down_until, "the match did not end during the outage"

            async def every_activity_ended() -> bool:
                return all([screen(await phone.received()).ended for phone in followers])

            await eventually(every_activity_ended, within=outage + 60, every=0.5)
            assert time.monotonic() >= down_until - 1, "an end went through the outage"
        finally:
            for phone in followers:
                phone.cancel()
            await _stop(handle)

    assert (outcome.home, outcome.away) == (2, 0)
    for phone in followers:
        shown = screen(await phone.received())
        assert (shown.score, shown.state["state"]) == ((2, 0), "finished"), phone.name
        assert shown.alerts[-1].startswith("Full time"), shown.alerts
        assert shown.after_end == 0, "an activity heard something after its end"
