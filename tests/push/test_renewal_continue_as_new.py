"""The generation of the followers' Live Activities, and when it began, survive continue-as-new.

A desk scores a match on a Temporal server that suggests continue-as-new after 40 events, with
`LA_RENEW_AFTER` a few seconds: the first activity is renewed, then the run hands over. The next
run goes on with the same generation and counts its age from when it really began: it neither
starts that generation again nor renews it early, and a goal after the hand-over alerts the
activity that runs.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from itertools import pairwise

import pytest
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from domain.match_run import MatchInput
from scoreline.settings import Settings
from scoreline.temporal.match_runs import match_workflow_id
from tests.commands.harness import road_settings, running_api, spread_fixture_ids
from tests.push.generations import RenewingPhone, generation_of
from tests.push.phones import alerts
from tests.push.simulator import PushSim
from tests.push.test_match_lifecycle import GOAL, Desk
from tests.support.replay import replays_and_keep
from tests.support.waiting import eventually
from tests.support.worker import running_worker
from workflows.match import MatchWorkflow

pytestmark = pytest.mark.timeout(180)

RENEW_AFTER = timedelta(seconds=4)
MORE_GOALS = 12
"""At most this many goals to pass the 40 events the server allows before suggesting continue-as-new."""


async def test_the_running_generation_and_its_age_are_carried_to_the_next_run(
    push_settings: Settings, database_url: str, short_history_env: WorkflowEnvironment, sim: PushSim
) -> None:
    client: Client = short_history_env.client
    await spread_fixture_ids(database_url)
    tuned = road_settings(
        push_settings,
        temporal_address=client.service_client.config.target_host,
        temporal_namespace=client.namespace,
        la_min_update_interval=timedelta(milliseconds=200),
        la_renew_after=RENEW_AFTER,
    )
    async with running_worker(client, tuned), running_api(tuned, database_url) as road:
        fixture_id = await road.fixture()
        desk = Desk(road, fixture_id, await road.desk(fixture_id))
        phone = RenewingPhone(road.http, sim, "handover-renewal")
        await phone.register()
        await phone.follow(fixture_id)
        phone.run_app_for_each_activity(fixture_id)
        handle = client.get_workflow_handle_for(MatchWorkflow.run, match_workflow_id(fixture_id))
        try:
            await desk.send("football.period_start", {"period": "1H"})
            await eventually(lambda: phone.running(2), within=30, every=0.05)
            first_run = (await handle.describe()).run_id

            async def handed_over() -> bool:
                return (await handle.describe()).run_id != first_run

            goals = 0
            while not await handed_over():
                assert goals < MORE_GOALS, "the run never continued as new"
                goals += 1
                await desk.send("football.goal", {**GOAL, "minute": 10 + goals})
                await asyncio.sleep(0.3)
            goals += 1
            await desk.send("football.goal", {**GOAL, "minute": 10 + goals})
            running = max(phone.tokens)

            async def alerted() -> bool:
                received = [d for ds in (await phone.activities()).values() for d in ds]
                return any(d.score == (goals, 0) for d in alerts(received))

            await eventually(alerted, within=30, every=0.1)
            await asyncio.sleep(RENEW_AFTER.total_seconds() + 1)  # one more renewal, on time
            first = await client.get_workflow_handle(
                match_workflow_id(fixture_id), run_id=first_run
            ).fetch_history()
            second = await handle.fetch_history()
        finally:
            phone.cancel()
            await handle.terminate("test over")

    handed = first.events[-1].workflow_execution_continued_as_new_event_attributes
    [carried] = await client.data_converter.decode(handed.input.payloads, [MatchInput])
    assert carried.live_activity_generation >= 2
    assert carried.live_activity_since is not None and not carried.live_activities_overnight
    starts = await phone.starts()
    generations = [generation_of(s) for s in starts]
    assert generations == list(range(1, len(starts) + 1)), "a generation was started twice"
    assert len(starts) > running, "the carried generation was never renewed"
    gaps = [b.aps["timestamp"] - a.aps["timestamp"] for a, b in pairwise(starts)]
    assert min(gaps) >= RENEW_AFTER.total_seconds() - 1, f"renewed early after the hand-over: {gaps}"
    await replays_and_keep("match-renewal-continue-as-new", [MatchWorkflow], first, second)
