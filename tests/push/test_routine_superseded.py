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

import json
from itertools import pairwise
from pathlib import Path

import asyncpg
import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHistory

from scoreline.settings import Settings
from tests.push.phones import summary
from tests.push.simulator import PushSim
from tests.push.test_routine_behind_loud import (
    GOAL_A,
    kept,
    play_through_an_apns_outage,
    recorded_lines,
)
from tests.support.replay import replays_and_keep
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
    played = await play_through_an_apns_outage(
        push_settings, temporal_client, sim, db, goal_routine_goal(tmp_path), [GOAL_A, ROUTINE_AT, GOAL_B_AT]
    )
    updates, history = played.updates, played.history
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
