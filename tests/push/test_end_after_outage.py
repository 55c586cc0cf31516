"""A provider outage across full time does not fail the match (trust issue, hole 4).

The post-match backfill gives up after about 15 minutes of provider errors. Its `ActivityError`
used to fail the whole execution: no `end` push, Live Activities left on lock screens. Now the
failed fetch is logged and the match ends with what is known.

The outage lasts 30 minutes of workflow time: the test runs on the time-skipping server, so the
backfill's retries (seconds to a minute apart) pass in moments.
"""

from __future__ import annotations

import asyncio
from functools import partial

import asyncpg
import pytest
from temporalio.testing import WorkflowEnvironment

from scoreline.settings import Settings
from tests.match.harness import fast_settings, start_match
from tests.push.phones import Pacer, assert_lifecycle, insert_provider_fixture, phones, steps, summary
from tests.push.screen import every_activity_ended
from tests.push.simulator import PushSim
from tests.push.test_match_lifecycle import device_api, show
from tests.support.provider import running_provider
from tests.support.waiting import eventually
from tests.support.worker import running_worker

pytestmark = pytest.mark.timeout(240)

NAME, FIXTURE_ID = "football-basic", 81000001
OUTAGE_SECONDS = 30 * 60


async def test_the_provider_down_for_30_minutes_across_full_time_still_ends_every_live_activity(
    push_settings: Settings, time_skipping_env: WorkflowEnvironment, sim: PushSim, db: asyncpg.Connection
) -> None:
    """The match plays to full time; the provider then answers 503 for 30 minutes, through the
    settle period and every backfill attempt: the run completes `finished` 3-1 and each follower's
    activity gets its `end`. On the main of 2026-12-01 the backfill's failure failed the run and no
    `end` was sent."""
    client = time_skipping_env.client
    await insert_provider_fixture(db, FIXTURE_ID)
    async with running_provider([NAME]) as provider:
        config = fast_settings(push_settings, provider.url).model_copy(
            update={"temporal_address": client.service_client.config.target_host}
        )
        async with device_api(config) as api:
            followers = await phones(api, sim, 2, prefix="outage")
            for phone in followers:
                await phone.follow(FIXTURE_ID)
                phone.run_app(FIXTURE_ID)
            pacer = Pacer(followers[0])
            try:
                async with running_worker(client, config):
                    handle = await start_match(client, config, FIXTURE_ID)
                    started = False
                    for step in steps(NAME):
                        if not step.material:
                            await provider.step_through([step.t])
                            continue
                        await pacer.change(partial(show, provider, step))
                        if not started:
                            await asyncio.wait_for(
                                asyncio.gather(*(p.activity_running() for p in followers)), 30
                            )
                            started = True
                    await provider.fault(kind="status", status=503, duration=OUTAGE_SECONDS)
                    outcome = await asyncio.wait_for(handle.result(), 120)
                    await eventually(lambda: every_activity_ended(followers), within=30)
            finally:
                for phone in followers:
                    phone.cancel()
    assert (outcome.state.value, outcome.home, outcome.away) == ("finished", 3, 1)
    for phone in followers:
        starts, updates = await phone.starts(), await phone.updates()
        assert_lifecycle(starts, updates, push_settings.apns_topic)
        end = updates[-1]
        assert (end.event, end.score, end.state["state"]) == ("end", (3, 1), "finished"), summary(updates)
