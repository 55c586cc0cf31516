"""A routine update never overtakes a key moment still waiting to go out (found by the soak).

The soak of 2026-12-02 (seed 1) lost goal alerts: APNs failed for a few seconds, the loud lane was
still retrying one goal's push with a second goal queued behind it, and the routine lane sent the
newest state meanwhile. The second goal's push then found every activity already showing a newer
state, was settled `stale`, and its alert never reached a phone.

The recording: football-basic's first two lines (before kick-off, kick-off), then goal A (1-0),
goal B (2-0) and a routine change (3-0 with no new event), while APNs answers 500 to everything.
"""

from __future__ import annotations

import asyncio
import copy
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from temporalio.client import Client, WorkflowHistory

from scoreline.settings import Settings
from tests.match.harness import end_leftover_run, fast_settings, start_match
from tests.push.phones import Delivery, Pacer, insert_provider_fixture, phones, summary
from tests.push.simulator import PushSim
from tests.push.test_match_lifecycle import device_api
from tests.support.provider import recording, running_provider
from tests.support.replay import replays_and_keep
from tests.support.waiting import eventually
from tests.support.worker import running_worker
from workflows.match import MatchWorkflow

pytestmark = pytest.mark.timeout(150)

FIXTURE_ID = 81000001
KICKOFF, GOAL_A, GOAL_B, ROUTINE = 120.0, 180.0, 240.0, 300.0
GOAL_TYPE = 14
APNS_DOWN_SECONDS = 5.0


def _line(kickoff: dict[str, Any], t: float, home_goals: int, events: list[dict[str, Any]]) -> dict[str, Any]:
    line = copy.deepcopy(kickoff)
    line["t"] = t
    for score in line["fixture"]["scores"]:
        if score["description"] in ("CURRENT", "1ST_HALF") and score["score"]["participant"] == "home":
            score["score"]["goals"] = home_goals
    line["fixture"]["events"] = events
    return line


def recorded_lines(steps: list[tuple[float, int, int]]) -> str:
    """football-basic's header, its line before kick-off and its kick-off, then one line per
    (t, home goals, goal events so far): a step whose goal events do not grow is a routine change."""
    header, *lines = recording("football-basic").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    before, kickoff = records[0], next(r for r in records if r["t"] == KICKOFF)
    goals = [
        event
        for record in records
        for event in record["fixture"].get("events") or []
        if event["type_id"] == GOAL_TYPE
    ]
    first, second = {**goals[0], "minute": 3}, {**goals[1], "id": goals[0]["id"] + 7_000, "minute": 4}
    events = [first, second]
    body = [before, kickoff, *(_line(kickoff, t, home, events[:count]) for t, home, count in steps)]
    return "\n".join([header, *(json.dumps(record) for record in body)]) + "\n"


def two_goals_then_routine(directory: Path) -> Path:
    path = directory / "football-two-goals-then-routine.jsonl"
    path.write_text(recorded_lines([(GOAL_A, 1, 1), (GOAL_B, 2, 2), (ROUTINE, 3, 2)]))
    return path


async def test_both_goal_alerts_reach_the_phone_although_a_routine_update_came_while_they_waited(
    push_settings: Settings, temporal_client: Client, sim: PushSim, db: asyncpg.Connection, tmp_path: Path
) -> None:
    """Goals A and B are both alerted, in order, and the routine 3-0 follows them. Before the fix
    the routine lane sent 3-0 while A was being retried; B was then dropped as stale."""
    played = await play_through_an_apns_outage(
        push_settings, temporal_client, sim, db, two_goals_then_routine(tmp_path), [GOAL_A, GOAL_B, ROUTINE]
    )
    await replays_and_keep("match-routine-behind-loud", [MatchWorkflow], played.history)
    updates = played.updates
    alerts = [u.score for u in updates if u.alerting and kept(u)]
    assert alerts == [(1, 0), (2, 0)], summary(updates)
    assert played.last.seq == max(u.seq for u in updates if kept(u)), summary(updates)


@dataclass(frozen=True)
class Played:
    updates: list[Delivery]
    """Every push the phone's tokens were sent."""
    last: Delivery
    """The first push the phone kept showing the last step's score."""
    history: WorkflowHistory


async def play_through_an_apns_outage(
    push_settings: Settings,
    temporal_client: Client,
    sim: PushSim,
    db: asyncpg.Connection,
    path: Path,
    steps: list[float],
) -> Played:
    """Play `path` to kick-off with one phone following, then `steps` (each a goal or a routine
    change, the last to 3-0) while APNs answers 500 to everything for `APNS_DOWN_SECONDS`."""
    await insert_provider_fixture(db, FIXTURE_ID)
    await end_leftover_run(temporal_client, FIXTURE_ID)
    async with running_provider([path]) as provider:
        config = fast_settings(push_settings, provider.url)
        async with device_api(config) as api:
            (phone,) = await phones(api, sim, 1, prefix=path.stem)
            await phone.follow(FIXTURE_ID)
            phone.run_app(FIXTURE_ID)
            pacer = Pacer(phone)
            async with running_worker(temporal_client, config):
                handle = await start_match(temporal_client, config, FIXTURE_ID)
                try:
                    await pacer.change(lambda: provider.step_through([KICKOFF], polls_per_step=6))
                    await asyncio.wait_for(phone.activity_running(), 30)
                    await sim.fault(action="respond", status=500, duration_s=APNS_DOWN_SECONDS)
                    await provider.step_through(steps, polls_per_step=6)
                    last = await eventually(lambda: showing(phone, (3, 0)), within=90)
                    await asyncio.sleep(1.0)  # a push still in flight would arrive now
                    return Played(await phone.updates(), last, await handle.fetch_history())
                finally:
                    phone.cancel()
                    await handle.terminate("test over")


async def showing(phone: Any, score: tuple[int, int]) -> Delivery | None:
    return next((u for u in await phone.updates() if u.score == score and kept(u)), None)


def kept(delivery: Delivery) -> bool:
    """APNs took it (the fault answered 500 to the others) and the phone kept it."""
    return delivery.status == 200 and delivery.dropped_by_device is None
