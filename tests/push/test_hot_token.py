"""One token that answers 429 and 500 all match long, among 10,000 followers of a desk-scored match.

A real worker (its match workflow and its drainer, with test-sized backoffs) against the APNs
simulator; the followers' activities are seeded as running (their phones reported a token), so
the test is about delivery, not registration. What each phone shows is read from the simulator's
complete journal (`screen`).
"""

from __future__ import annotations

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

pytestmark = [pytest.mark.timeout(300), pytest.mark.usefixtures("fast_worker_drain")]

FOLLOWERS = 10_000
THROTTLED = 3
"""The hot token's first answers are 429 `TooManyRequests`; every later one is 500."""
ALL_MATCH_S = 3600.0
"""Longer than the test: the hot token fails until the test clears its faults."""


async def test_a_hot_token_among_ten_thousand_followers_holds_no_one_back_and_gets_the_goal_later(
    push_settings: Settings, database_url: str, temporal_client: Client, sim: PushSim, db: asyncpg.Connection
) -> None:
    """Before, a token that kept failing stopped the fan-out at its batch, and the workflow dropped
    the push after 20 attempts: every follower behind it never got the goal, and nothing owed it."""
    async with desk_road(push_settings, database_url, temporal_client) as road:
        fixture_id = await road.fixture()
        desk = Desk(road, fixture_id, await road.desk(fixture_id))
        running = await seed.running_activities(db, FOLLOWERS, fixture_id)
        hot = running[FOLLOWERS // 4].push_token
        others = {activity.push_token for activity in running} - {hot}
        await sim.fault(status=429, token=hot, count=THROTTLED)
        await sim.fault(status=500, token=hot, duration_s=ALL_MATCH_S)
        handle = temporal_client.get_workflow_handle(match_workflow_id(fixture_id))
        try:
            await desk.send("football.period_start", {"period": "1H"})
            await eventually(lambda: _accepted_at_least(sim, len(others)), within=120, every=0.5)
            await desk.send("football.goal", GOAL)
            await eventually(lambda: _accepted_at_least(sim, 2 * len(others)), within=120, every=0.5)
            screens = _screens(sim)
            tries_meanwhile = _requests_to(sim, hot)
            await eventually(lambda: _more_requests(sim, hot, tries_meanwhile + 3), within=30, every=0.5)
            await sim.clear_faults()

            async def hot_shows_the_goal() -> Screen | None:
                shown = screen(by_token(sim.journal()).get(hot, []))
                return shown if shown.score == (1, 0) else None

            healed = await eventually(hot_shows_the_goal, within=30, every=0.5)
        finally:
            await _stop(handle)

    goal_alerts = {tuple(screens[token].alerts) for token in others}
    assert len(goal_alerts) == 1, f"followers saw different alerts: {list(goal_alerts)[:3]}"
    (alerts,) = goal_alerts
    assert len(alerts) == 1 and alerts[0].startswith("GOAL!"), alerts
    assert {screens[token].score for token in others} == {(1, 0)}
    assert hot not in screens or screens[hot].stamp is None, "the hot token was accepted while failing"
    assert healed.alerts == list(alerts), "the hot token's goal alert was dropped or doubled"


def _screens(sim: PushSim) -> dict[str, Screen]:
    return {token: screen(received) for token, received in by_token(sim.journal()).items()}


async def _accepted_at_least(sim: PushSim, count: int) -> bool:
    return await sim.accepted() >= count


def _requests_to(sim: PushSim, token: str) -> int:
    return len(by_token(sim.journal()).get(token, []))


async def _more_requests(sim: PushSim, token: str, count: int) -> bool:
    return _requests_to(sim, token) >= count
