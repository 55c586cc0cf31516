"""A routine update still waiting when a newer loud push is queued is never sent (found by the soak).

The soak of 2026-12-02 (seed 6): the loud lane was sending one push while a routine update waited
behind it (`routine-behind-loud`); a newer loud push was queued meanwhile. Once the first went,
both lanes started at once, the older routine state beside the newer loud one, and on ten phones
the older reached APNs 29 ms after the newer (the phone dropped it: `StaleTimestamp`). The loud
push carries the newer state, so the routine update is dropped when it is queued.

The recording: football-basic's first two lines, then goal A (1-0), a routine change (2-0, no new
event) and goal B (3-0), while APNs answers 500 to everything for a few seconds.
"""

from __future__ import annotations

import asyncio
import json
from itertools import pairwise
from pathlib import Path

import asyncpg
import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHistory

from scoreline.settings import Settings
from tests.match.harness import end_leftover_run, fast_settings, start_match
from tests.push.phones import Pacer, insert_provider_fixture, phones, summary
from tests.push.simulator import PushSim
from tests.push.test_match_lifecycle import device_api
from tests.push.test_routine_behind_loud import (
    APNS_DOWN_SECONDS,
    FIXTURE_ID,
    GOAL_A,
    KICKOFF,
    kept,
    recorded_lines,
    showing,
)
from tests.support.provider import running_provider
from tests.support.replay import replays_and_keep
from tests.support.waiting import eventually
from tests.support.worker import running_worker
from workflows.match import MatchWorkflow

pytestmark = pytest.mark.timeout(150)

ROUTINE_AT, GOAL_B_AT = 240.0, 300.0


def goal_routine_goal(directory: Path) -> Path:
    path = directory / "football-goal-routine-goal.jsonl"
    path.write_text(recorded_lines([(GOAL_A, 1, 1), (ROUTINE_AT, 2, 1), (GOAL_B_AT, 3, 2)]))
    return path


async def test_a_routine_update_waiting_when_a_newer_goal_is_queued_is_never_sent(
    push_settings: Settings, temporal_client: Client, sim: PushSim, db: asyncpg.Connection, tmp_path: Path
) -> None:
    """Both goals are alerted in order and the routine 2-0 never goes out; before the fix it was
    sent beside goal B and could reach the phone after it."""
    path = goal_routine_goal(tmp_path)
    await insert_provider_fixture(db, FIXTURE_ID)
    await end_leftover_run(temporal_client, FIXTURE_ID)
    async with running_provider([path]) as provider:
        config = fast_settings(push_settings, provider.url)
        async with device_api(config) as api:
            (phone,) = await phones(api, sim, 1, prefix="superseded")
            await phone.follow(FIXTURE_ID)
            phone.run_app(FIXTURE_ID)
            pacer = Pacer(phone)
            async with running_worker(temporal_client, config):
                handle = await start_match(temporal_client, config, FIXTURE_ID)
                try:
                    await pacer.change(lambda: provider.step_through([KICKOFF], polls_per_step=6))
                    await asyncio.wait_for(phone.activity_running(), 30)
                    await sim.fault(action="respond", status=500, duration_s=APNS_DOWN_SECONDS)
                    await provider.step_through([GOAL_A, ROUTINE_AT, GOAL_B_AT], polls_per_step=6)
                    await eventually(lambda: showing(phone, (3, 0)), within=90)
                    await asyncio.sleep(1.0)  # a push still in flight would arrive now
                    updates = await phone.updates()
                    history = await handle.fetch_history()
                finally:
                    phone.cancel()
                    await handle.terminate("test over")
    await replays_and_keep("match-routine-superseded", [MatchWorkflow], history)
    assert _pushed_versions(history) == [1, 2, 4], "kick-off, goal A, goal B: the routine 2-0 never"
    taken = [u for u in updates if u.status == 200]
    assert [u.score for u in taken if u.alerting and kept(u)] == [(1, 0), (3, 0)], summary(updates)
    assert (2, 0) not in {u.score for u in taken}, summary(updates)
    assert all(a.aps["timestamp"] <= b.aps["timestamp"] for a, b in pairwise(taken)), summary(updates)


def _pushed_versions(history: WorkflowHistory) -> list[int]:
    """The scoreboard version of every push activity the run scheduled, in order. (Whether the
    routine push reached the phone is a race between two lanes; whether it was scheduled is not.)"""
    versions = []
    for event in history.events:
        if event.event_type != EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            continue
        scheduled = event.activity_task_scheduled_event_attributes
        if scheduled.activity_type.name == "push_live_activities":
            versions.append(int(json.loads(scheduled.input.payloads[0].data)["state"]["version"]))
    return versions
