"""A goal committed by a watch that died before returning is still pushed as a goal (trust issue, hole 1).

The watch commits an ingest, then refreshes the read copies and returns. A worker that dies in
between has logged the goal, but the workflow never heard of it: the retried watch finds nothing new
to insert. What the devices are told must come from the log, not from what one attempt inserted.
"""

from __future__ import annotations

import asyncio
import json
from functools import partial
from typing import Any

import asyncpg
import pytest
from temporalio.client import Client

from activities.ingest.store import IngestStore
from activities.watch import PollingConfig, WatchActivities
from scoreline.settings import Settings
from tests.match.harness import fast_settings, start_match
from tests.push.phones import (
    GOAL_KINDS,
    Pacer,
    alerts,
    assert_lifecycle,
    insert_provider_fixture,
    phones,
    steps,
    summary,
)
from tests.push.simulator import PushSim
from tests.push.test_match_lifecycle import END_OF_RECORDING, device_api, show
from tests.support.provider import recording, running_provider
from tests.support.worker import running_worker, worker_dependencies

pytestmark = pytest.mark.timeout(120)

NAME, FIXTURE_ID = "football-basic", 81000001


def first_goal_time() -> float:
    """The replay time of the recording's first goal (the score goes 0-0 → 1-0)."""
    for line in recording(NAME).read_text().splitlines()[1:]:
        fixture: dict[str, Any] = json.loads(line)["fixture"]
        current = [s for s in fixture.get("scores") or [] if s["description"] == "CURRENT"]
        if sum(s["score"]["goals"] for s in current) == 1:
            return float(json.loads(line)["t"])
    raise AssertionError("no goal in the recording")


async def commit_like_a_dying_watch(settings: Settings) -> None:
    """What a watch attempt does up to the moment the worker dies: fetch the live board and commit
    the ingest (the Redis digest and read copies included), then never return to the workflow."""
    async with worker_dependencies(settings) as deps:
        polling = PollingConfig(live=None, idle=None, reconcile=None)
        watch = WatchActivities(
            deps.provider, IngestStore(deps.pools.ingest), deps.pools.ingest, deps.redis, polling
        )
        snapshot = await deps.provider.live_snapshot(FIXTURE_ID)
        assert snapshot is not None, "the match is not on the live board"
        summary = await watch.ingest(snapshot, "live")
        assert summary is not None and (summary.home, summary.away) == (1, 0)


async def test_a_goal_committed_just_before_the_worker_died_alerts_every_follower_once(
    push_settings: Settings, temporal_client: Client, sim: PushSim, db: asyncpg.Connection
) -> None:
    """The worker stops with the match at 0-0; the goal is committed exactly as the dying watch
    would have; a new worker resumes the watch. Each follower gets exactly one alerting `goal`
    push at 1-0 and the rest of the match as usual. On the main of 2026-12-01 this failed: the
    retried watch found nothing new (`key_moments` empty) and the goal went out as a silent update."""
    goal_at = first_goal_time()
    await insert_provider_fixture(db, FIXTURE_ID)
    async with running_provider([NAME]) as provider:
        config = fast_settings(push_settings, provider.url)
        async with device_api(config) as api:
            followers = await phones(api, sim, 2, prefix="crash")
            for phone in followers:
                await phone.follow(FIXTURE_ID)
                phone.run_app(FIXTURE_ID)
            pacer = Pacer(followers[0])
            try:
                all_steps = steps(NAME)
                before = [step for step in all_steps if step.t < goal_at]
                after = [step for step in all_steps if step.t > goal_at]
                async with running_worker(temporal_client, config):
                    handle = await start_match(temporal_client, config, FIXTURE_ID)
                    for step in before:
                        if step.material:
                            await pacer.change(partial(show, provider, step))
                        else:
                            await provider.step_through([step.t])
                    await asyncio.wait_for(asyncio.gather(*(p.activity_running() for p in followers)), 30)
                await provider.set_clock(goal_at)
                await commit_like_a_dying_watch(config)

                async def resume() -> None:
                    await provider.step_through([goal_at], polls_per_step=6)

                async with running_worker(temporal_client, config):
                    await pacer.change(resume)
                    for step in after:
                        if step.material:
                            await pacer.change(partial(show, provider, step))
                        else:
                            await provider.step_through([step.t])
                    await provider.step_through([END_OF_RECORDING])
                    outcome = await asyncio.wait_for(handle.result(), 60)
                assert (outcome.state.value, outcome.home, outcome.away) == ("finished", 3, 1)
            finally:
                for phone in followers:
                    phone.cancel()

    for phone in followers:
        starts, updates = await phone.starts(), await phone.updates()
        assert_lifecycle(starts, updates, push_settings.apns_topic)
        goal_alerts = [(u.moment, u.score) for u in alerts(updates) if u.moment in GOAL_KINDS]
        assert goal_alerts == [
            ("goal", (1, 0)),
            ("penalty_goal", (1, 1)),
            ("goal", (2, 1)),
            ("own_goal", (3, 1)),
        ], summary(updates)
        at_one_nil = [u for u in updates if u.score == (1, 0)]
        assert at_one_nil[0].alerting and at_one_nil[0].priority == 10, summary(updates)
