"""The watch activity on its own (`ActivityEnvironment`), against real Postgres and Redis.

A retried watch attempt starts where the workflow's knowledge ends: if the log already holds a
change the dead attempt committed, the new attempt returns it at once — with the key moments of
its entries — before it polls anyone.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from datetime import timedelta

import pytest
from pydantic import SecretStr
from temporalio.testing import ActivityEnvironment

from activities.ingest.store import IngestStore
from activities.provider.client import SportMonksClient
from activities.provider.normaliser import normalise_fixture
from activities.watch import PollingConfig, WatchActivities
from devkit.devstack.ports import free_port
from domain.match_run import WatchInput
from domain.moments import KeyMoment
from domain.snapshot import Snapshot
from scoreline.settings import Settings
from tests.support.provider import TOKEN, recording, running_provider
from workers.dependencies import worker_dependencies

FIXTURE_ID = 81000001
KICKOFF, FIRST_GOAL = 120.0, 830.0
TRACE = "5c0e" * 8


def line(t: float) -> Snapshot:
    for text in recording("football-basic").read_text().splitlines()[1:]:
        record = json.loads(text)
        if record["t"] == t and record["fixture"]["id"] == FIXTURE_ID:
            return normalise_fixture(record["fixture"])
    raise AssertionError(f"no line at {t}")


async def test_a_retried_watch_returns_what_the_dead_attempt_committed_before_polling(
    settings: Settings,
) -> None:
    """The log holds the kick-off (known to the workflow) and the goal (committed by an attempt that
    died): the second attempt, resumed from its heartbeat, reports the goal with its key moment at
    once, and never reaches the provider (there is none listening at its address)."""
    offline = settings.model_copy(
        update={"provider_url": f"http://127.0.0.1:{free_port()}", "provider_token": SecretStr("unused")}
    )
    async with worker_dependencies(offline) as deps:
        store = IngestStore(deps.pools.ingest)
        known = await store.ingest(line(KICKOFF), "live")
        committed = await store.ingest(line(FIRST_GOAL), "live", TRACE)
        assert committed.version > known.version
        watch = WatchActivities(
            deps.provider,
            store,
            deps.pools.ingest,
            deps.redis,
            PollingConfig(live=timedelta(seconds=1), idle=timedelta(seconds=1), reconcile=None),
        )
        env = ActivityEnvironment()
        env.info = dataclasses.replace(
            env.info, attempt=2, heartbeat_details=[known.version], heartbeat_timeout=timedelta(seconds=10)
        )
        heartbeats: list[object] = []
        env.on_heartbeat = lambda *details: heartbeats.extend(details)
        result = await asyncio.wait_for(
            env.run(watch.watch_match, WatchInput(fixture_id=FIXTURE_ID, progress=known.progress)), 10
        )
    assert result.reason == "changed" and result.summary is not None
    assert (result.progress.version, result.progress.home, result.progress.away) == (committed.version, 1, 0)
    assert result.summary.key_moments == (KeyMoment(kind="goal", side="home"),)
    assert result.summary.trace_id == TRACE, "the change's own trace id is carried on"
    assert heartbeats == [], "it polled (and heartbeat) before reporting"


@pytest.mark.parametrize("attempt", [1, 3])
async def test_a_watch_whose_workflow_knows_the_log_polls_as_usual(settings: Settings, attempt: int) -> None:
    """Nothing beyond what the workflow knows: the watch goes on to poll (here: an unreachable
    provider, so it heartbeats and keeps trying until cancelled)."""
    offline = settings.model_copy(
        update={"provider_url": f"http://127.0.0.1:{free_port()}", "provider_token": SecretStr("unused")}
    )
    async with worker_dependencies(offline) as deps:
        store = IngestStore(deps.pools.ingest)
        known = await store.ingest(line(KICKOFF), "live")
        watch = WatchActivities(
            deps.provider,
            store,
            deps.pools.ingest,
            deps.redis,
            PollingConfig(live=timedelta(milliseconds=50), idle=timedelta(milliseconds=50), reconcile=None),
        )
        env = ActivityEnvironment()
        env.info = dataclasses.replace(env.info, attempt=attempt, heartbeat_timeout=timedelta(seconds=1))
        heartbeats: list[object] = []
        env.on_heartbeat = lambda *details: heartbeats.extend(details)
        running = asyncio.create_task(
            env.run(watch.watch_match, WatchInput(fixture_id=FIXTURE_ID, progress=known.progress))
        )
        while not heartbeats:
            await asyncio.sleep(0.05)
            assert not running.done(), running
        env.cancel()
        with pytest.raises(asyncio.CancelledError):
            await running
    assert set(heartbeats) == {known.version}


async def test_a_snapshot_another_attempt_already_stored_is_reported_from_the_log(settings: Settings) -> None:
    """While this watch waits between polls, another attempt (one Temporal gave up on that still
    runs) stores the goal and its digest. This watch's next poll fetches that very snapshot: the
    digest says "stored", yet its workflow never heard of it, so the goal is reported from the log.
    Before, the digest alone decided and the goal was not reported until something else changed."""
    async with running_provider(["football-basic"], t=KICKOFF) as provider:
        config = settings.model_copy(
            update={"provider_url": provider.url, "provider_token": SecretStr(TOKEN)}
        )
        async with worker_dependencies(config) as deps:
            store = IngestStore(deps.pools.ingest)
            polling = PollingConfig(live=timedelta(seconds=3), idle=timedelta(seconds=3), reconcile=None)
            watch = WatchActivities(deps.provider, store, deps.pools.ingest, deps.redis, polling)
            known = await watch.ingest(line(KICKOFF), "live")
            assert known is not None
            env = ActivityEnvironment()
            env.info = dataclasses.replace(env.info, heartbeat_timeout=timedelta(seconds=30))
            served = await provider.requests_served()
            running = asyncio.create_task(
                env.run(watch.watch_match, WatchInput(fixture_id=FIXTURE_ID, progress=known.progress))
            )
            while await provider.requests_served() == served:
                await asyncio.sleep(0.01)
            await provider.set_clock(FIRST_GOAL)
            async with (
                worker_dependencies(config) as elsewhere,  # the other attempt's own worker
                # Its own look at the board now: the deployment's shared board still holds the
                # answer this watch's first poll got a moment ago, before the goal.
                SportMonksClient.from_settings(config) as own_board,
            ):
                snapshot = await own_board.live_snapshot(FIXTURE_ID)
                assert snapshot is not None
                other = await WatchActivities(
                    elsewhere.provider,
                    IngestStore(elsewhere.pools.ingest),
                    elsewhere.pools.ingest,
                    elsewhere.redis,
                    polling,
                ).ingest(snapshot, "live")
            assert other is not None and other.entries > 0, "the other attempt stored the goal"
            result = await asyncio.wait_for(running, 15)
    assert result.reason == "changed" and result.summary is not None
    assert result.summary.key_moments == (KeyMoment(kind="goal", side="home"),)
    assert result.progress.version == other.version
