"""A worker process SIGKILLed while its drainer has a goal's requests on the wire: no phone shows the
goal's alert twice, and every phone ends up showing the goal.

Real `scoreline worker` processes (workflows and drainer, the drainer's real delays) against the APNs
simulator, which answers slowly so that requests are in flight at the kill; the followers'
activities are seeded as running. What each phone shows is read from the simulator's journal.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import asyncpg
import pytest
from temporalio.client import Client

from scoreline.settings import Settings
from scoreline.temporal.match_runs import match_workflow_id
from tests.commands.harness import road_settings, running_api, spread_fixture_ids
from tests.push import seed
from tests.push.screen import Screen, by_token, screen
from tests.push.simulator import PushSim
from tests.push.test_match_lifecycle import GOAL, Desk, _stop
from tests.support.waiting import eventually
from tests.support.worker import worker_processes

pytestmark = pytest.mark.timeout(300)

FOLLOWERS = 2_000
"""More than the drainer takes at once: some rows are on the wire at the kill, some not yet taken."""
SLOW_ANSWER_MS = 1_500


async def test_a_worker_killed_mid_drain_shows_no_alert_twice_and_every_phone_the_goal(
    push_settings: Settings, database_url: str, temporal_client: Client, sim: PushSim,
    db: asyncpg.Connection, tmp_path: Path,
) -> None:  # fmt: skip
    """Before, the goal's claims of the killed attempt were taken over by a retry that could not
    tell a request on its way from one never sent: alerts went twice, or were dropped for good."""
    await spread_fixture_ids(database_url)
    for run in ("first", "second"):
        (tmp_path / run).mkdir()
    settings = road_settings(push_settings, full_time_settle=timedelta(seconds=1))
    async with running_api(settings, database_url) as road:
        fixture_id = await road.fixture()
        desk = Desk(road, fixture_id, await road.desk(fixture_id))
        tokens = [
            activity.push_token for activity in await seed.running_activities(db, FOLLOWERS, fixture_id)
        ]
        handle = temporal_client.get_workflow_handle(match_workflow_id(fixture_id))
        try:
            async with worker_processes(settings, tmp_path / "first", 1) as [first]:
                await desk.send("football.period_start", {"period": "1H"})
                await eventually(lambda: _accepted_at_least(sim, FOLLOWERS), within=60, every=0.2)
                await sim.fault(latency_ms=SLOW_ANSWER_MS)
                await desk.send("football.goal", GOAL)
                await eventually(lambda: _accepted_at_least(sim, FOLLOWERS + 1), within=30, every=0.02)
                await first.kill()
            at_the_kill = _screens(sim, tokens)
            await sim.clear_faults()
            async with worker_processes(settings, tmp_path / "second", 1):

                async def everyone_shows_the_goal() -> bool:
                    return all(s.score == (1, 0) for s in _screens(sim, tokens).values())

                await eventually(everyone_shows_the_goal, within=120, every=1.0)
        finally:
            await _stop(handle)

    shown = _screens(sim, tokens)
    alerted_before = {token for token, s in at_the_kill.items() if _goal_alerts(s)}
    assert alerted_before, "no goal request was on the wire at the kill"
    assert len(alerted_before) < FOLLOWERS, "the whole drain was over before the kill"
    for token, phone in shown.items():
        goal_alerts = _goal_alerts(phone)
        assert len(goal_alerts) <= 1, f"{token[:8]} was alerted {len(goal_alerts)} times"
        if token in alerted_before:
            assert len(goal_alerts) == 1
    never = [token for token, phone in shown.items() if not _goal_alerts(phone)]
    assert len(never) < FOLLOWERS // 2, "rows never taken by the killed drainer lost their alert too"


def _screens(sim: PushSim, tokens: list[str]) -> dict[str, Screen]:
    received = by_token(sim.journal())
    return {token: screen(received.get(token, [])) for token in tokens}


def _goal_alerts(shown: Screen) -> list[str]:
    return [alert for alert in shown.alerts if alert.startswith("GOAL!")]


async def _accepted_at_least(sim: PushSim, count: int) -> bool:
    return await sim.accepted() >= count
