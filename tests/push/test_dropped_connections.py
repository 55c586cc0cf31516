"""APNs drops every connection mid-request for longer than every delay of the drainer, then heals.

A real worker (its match workflow and its drainer, with test-sized backoffs) against the APNs
simulator, whose `disconnect` fault closes the connection with no answer the moment a request
arrives; the followers' activities are seeded as running. What each phone shows is read from the
simulator's complete journal (`screen`).
"""

from __future__ import annotations

import time

import asyncpg
import pytest
from temporalio.client import Client

from scoreline.settings import Settings
from scoreline.temporal.match_runs import match_workflow_id
from tests.push import seed
from tests.push.screen import Screen, by_token, screen
from tests.push.simulator import PushSim
from tests.push.test_match_lifecycle import GOAL, Desk, _stop, desk_road
from tests.support.waiting import eventually

pytestmark = [pytest.mark.timeout(240), pytest.mark.usefixtures("fast_worker_drain")]

FOLLOWERS = 20
OUTAGE_S = 20.0
"""Several times the test drainer's backoff cap: every row is tried, and lost, again and again."""


async def test_a_goal_while_apns_drops_every_connection_reaches_every_phone_once_it_heals(
    push_settings: Settings, database_url: str, temporal_client: Client, sim: PushSim, db: asyncpg.Connection
) -> None:
    """Every request the drainer made while connections kept dropping counted as maybe delivered,
    so the goal's alert, tried on a failing path, was given up for every follower: the phones
    showed the score and never the goal."""
    async with desk_road(push_settings, database_url, temporal_client) as road:
        fixture_id = await road.fixture()
        desk = Desk(road, fixture_id, await road.desk(fixture_id))
        running = await seed.running_activities(db, FOLLOWERS, fixture_id)
        tokens = {activity.push_token for activity in running}
        handle = temporal_client.get_workflow_handle(match_workflow_id(fixture_id))
        try:
            await desk.send("football.period_start", {"period": "1H"})
            await eventually(lambda: _accepted_at_least(sim, FOLLOWERS), within=60, every=0.5)
            # Half time, which carries no alert, meets the dropped connections before the goal does.
            await sim.fault(action="disconnect", duration_s=OUTAGE_S)
            healed_at = time.monotonic() + OUTAGE_S
            seen = len(sim.journal())
            await desk.send("football.period_end", {"period": "1H"})
            await eventually(lambda: _dropped_since(sim, seen), within=30, every=0.2)
            await desk.send("football.period_start", {"period": "2H"})
            await desk.send("football.goal", {**GOAL, "minute": 50})

            async def every_phone_shows_the_goal() -> dict[str, Screen] | None:
                screens = {t: screen(r) for t, r in by_token(sim.journal()).items() if t in tokens}
                done = len(screens) == FOLLOWERS and all(s.score == (1, 0) for s in screens.values())
                return screens if done else None

            screens = await eventually(every_phone_shows_the_goal, within=OUTAGE_S + 60, every=0.5)
            assert time.monotonic() >= healed_at - 1, "the goal went through the outage"
        finally:
            await _stop(handle)

    for token, shown in screens.items():
        assert [alert.split(":")[0] for alert in shown.alerts] == ["GOAL! Riverside"], (token, shown.alerts)


async def _accepted_at_least(sim: PushSim, count: int) -> bool:
    return await sim.accepted() >= count


async def _dropped_since(sim: PushSim, seen: int) -> bool:
    """A request reached the simulator after `seen` journal lines and got no answer."""
    return any(line.get("status") is None for line in sim.journal()[seen:] if line.get("kind") == "push")


async def test_full_time_while_apns_drops_every_connection_ends_every_activity_with_its_alert(
    push_settings: Settings, database_url: str, temporal_client: Client, sim: PushSim, db: asyncpg.Connection
) -> None:
    """A drainer in doubt sent the end without its alert, which closed the activity: the full-time
    alert that followed was ignored, and no phone heard the result."""
    async with desk_road(push_settings, database_url, temporal_client) as road:
        fixture_id = await road.fixture()
        desk = Desk(road, fixture_id, await road.desk(fixture_id))
        running = await seed.running_activities(db, FOLLOWERS, fixture_id)
        tokens = {activity.push_token for activity in running}
        handle = temporal_client.get_workflow_handle(match_workflow_id(fixture_id))
        try:
            await desk.send("football.period_start", {"period": "1H"})
            await eventually(lambda: _accepted_at_least(sim, FOLLOWERS), within=60, every=0.5)
            await sim.fault(action="disconnect", duration_s=OUTAGE_S)
            seen = len(sim.journal())
            await desk.send("football.period_end", {"period": "1H"})
            await eventually(lambda: _dropped_since(sim, seen), within=30, every=0.2)
            await desk.send("football.period_start", {"period": "2H"})
            await desk.send("football.goal", {**GOAL, "minute": 88})
            await desk.send("football.period_end", {"period": "2H"})

            async def every_activity_ended() -> dict[str, Screen] | None:
                screens = {t: screen(r) for t, r in by_token(sim.journal()).items() if t in tokens}
                done = len(screens) == FOLLOWERS and all(s.ended for s in screens.values())
                return screens if done else None

            screens = await eventually(every_activity_ended, within=OUTAGE_S + 60, every=0.5)
        finally:
            await _stop(handle)

    for token, shown in screens.items():
        assert shown.score == (1, 0), (token, shown)
        assert shown.alerts[-1].startswith("Full time"), (token, shown.alerts)
