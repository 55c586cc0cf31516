"""A match that continues as new while its goals are still on their way to a slow APNs: the phone
ends up showing the last goal, with its alert, and never an alert twice or out of order.

A desk scores quickly while APNs answers slowly, on a Temporal server that suggests continue-as-new
after 40 events: the run hands over with the desk book (and whatever it had not published yet).
The next run publishes that first and the desks' commands carry on against the carried book. A
phone keeps the newest state, so a goal superseded before its request went out is shown by the
next one (latest wins). Both runs' histories are kept for the replay tests.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from domain.match_run import MatchInput
from scoreline.settings import Settings
from scoreline.temporal.match_runs import match_workflow_id
from tests.commands.harness import road_settings, running_api, spread_fixture_ids
from tests.push.phones import alerts, phones, summary
from tests.push.screen import screen
from tests.push.simulator import PushSim
from tests.push.test_match_lifecycle import GOAL, Desk
from tests.support.replay import replays_and_keep
from tests.support.waiting import eventually
from tests.support.worker import running_worker
from workflows.match import MatchWorkflow

pytestmark = pytest.mark.timeout(180)

SLOW_APNS_MS = 1500
QUICK_GOALS = 8
"""Enough commands to pass the 40 events the server allows before suggesting continue-as-new."""


async def test_alerts_queued_at_continue_as_new_reach_the_phone_from_the_next_run_in_order_once(
    push_settings: Settings, database_url: str, short_history_env: WorkflowEnvironment, sim: PushSim
) -> None:
    """Goals logged faster than APNs answers: the run continues as new with the book; the phone
    shows the last goal with its alert, every goal alert it showed once and in score order, and
    the goals after the hand-over are decided on the carried book (the score keeps counting up)."""
    client: Client = short_history_env.client
    await spread_fixture_ids(database_url)
    tuned = road_settings(
        push_settings,
        temporal_address=client.service_client.config.target_host,
        temporal_namespace=client.namespace,
        la_min_update_interval=timedelta(milliseconds=200),
    )
    async with running_worker(client, tuned), running_api(tuned, database_url) as road:
        fixture_id = await road.fixture()
        desk = Desk(road, fixture_id, await road.desk(fixture_id))
        (phone,) = await phones(road.http, sim, 1, prefix="handover")
        await phone.follow(fixture_id)
        phone.run_app(fixture_id)
        handle = client.get_workflow_handle_for(MatchWorkflow.run, match_workflow_id(fixture_id))
        try:
            await desk.send("football.period_start", {"period": "1H"})
            await asyncio.wait_for(phone.activity_running(), 30)
            first_run = (await handle.describe()).run_id
            await sim.fault(latency_ms=SLOW_APNS_MS, duration_s=120)
            goals = 0
            while goals < QUICK_GOALS:
                goals += 1
                await desk.send("football.goal", {**GOAL, "minute": 10 + goals})

            async def handed_over() -> bool:
                return (await handle.describe()).run_id != first_run

            await eventually(handed_over, within=30, every=0.2)
            goals += 1
            await desk.send("football.goal", {**GOAL, "minute": 10 + goals})
            (await sim.admin.delete("/_sim/faults")).raise_for_status()

            async def last_goal_shown() -> bool:
                return screen(await phone.received()).score == (goals, 0)

            await eventually(last_goal_shown, within=60, every=0.2)
            first = await client.get_workflow_handle(
                match_workflow_id(fixture_id), run_id=first_run
            ).fetch_history()
            second = await handle.fetch_history()
        finally:
            phone.cancel()
            await handle.terminate("test over")

    handed = first.events[-1].workflow_execution_continued_as_new_event_attributes
    carried = await client.data_converter.decode(handed.input.payloads, [MatchInput])
    assert carried[0].book is not None and carried[0].live_activities_started
    updates = await phone.updates()
    shown = [u.score for u in alerts(updates)]
    assert shown == sorted(set(shown)), f"an alert twice or out of order: {summary(updates)}"
    assert shown[-1] == (goals, 0), summary(updates)
    stamps = [u.aps["timestamp"] for u in updates]
    assert stamps == sorted(stamps), f"a lower timestamp went out: {stamps}"
    await replays_and_keep("match-continue-as-new-pushes", [MatchWorkflow], first, second)
