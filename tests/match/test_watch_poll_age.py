"""The poll age behind the "live match not polled for 30 s" alert counts every answered poll."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from datetime import timedelta

from pydantic import SecretStr
from temporalio.testing import ActivityEnvironment

from activities.ingest.store import IngestStore
from activities.watch import PollingConfig, WatchActivities
from domain.match_run import WatchInput
from scoreline.settings import Settings
from tests.match.test_watch_activity import FIXTURE_ID, KICKOFF, line
from tests.support.provider import TOKEN, running_provider
from workers.dependencies import worker_dependencies


async def test_an_unchanged_poll_still_counts_as_polled(settings: Settings) -> None:
    """The provider answers the same board poll after poll: the match was polled each time. Before,
    only a poll that changed something counted (an unchanged one is skipped by the ingest's digest),
    so a real-time football match aged up to a minute between two match minutes and the alert could
    fire on a healthy watch."""
    async with running_provider(["football-basic"], t=KICKOFF + 5) as provider:
        config = settings.model_copy(
            update={"provider_url": provider.url, "provider_token": SecretStr(TOKEN)}
        )
        async with worker_dependencies(config) as deps:
            store = IngestStore(deps.pools.ingest)
            polling = PollingConfig(
                live=timedelta(milliseconds=100), idle=timedelta(milliseconds=100), reconcile=None
            )
            watch = WatchActivities(deps.provider, store, deps.pools.ingest, deps.redis, polling)
            known = await watch.ingest(line(KICKOFF), "live")
            assert known is not None
            env = ActivityEnvironment()
            env.info = dataclasses.replace(env.info, heartbeat_timeout=timedelta(seconds=5))
            running = asyncio.create_task(
                env.run(watch.watch_match, WatchInput(fixture_id=FIXTURE_ID, progress=known.progress))
            )
            await asyncio.sleep(2.0)
            age = watch.watched.oldest_age(time.monotonic())
            env.cancel()
            try:
                await running
            except asyncio.CancelledError:
                pass
    assert 0 < age < 1.0, f"the match looks unpolled for {age:.2f}s"


async def test_polls_start_one_interval_apart_however_long_each_takes(settings: Settings) -> None:
    """A board that takes 0.6 s to answer, polled every 1 s: five polls in five seconds. Before, the
    watch slept a whole interval after each answer, so it polled every 1.6 s (a 100-match cricket
    board, slow to fetch and normalise, was polled every 4.9 s instead of 2.5 s)."""
    async with running_provider(["football-basic"], t=KICKOFF + 5) as provider:
        config = settings.model_copy(
            update={
                "provider_url": provider.url,
                "provider_token": SecretStr(TOKEN),
                "poll_interval_live": timedelta(seconds=1),  # the shared board lives one interval
            }
        )
        async with worker_dependencies(config) as deps:
            store = IngestStore(deps.pools.ingest)
            polling = PollingConfig(live=timedelta(seconds=1), idle=timedelta(seconds=1), reconcile=None)
            watch = WatchActivities(deps.provider, store, deps.pools.ingest, deps.redis, polling)
            known = await watch.ingest(line(KICKOFF), "live")
            assert known is not None
            await provider.fault(kind="latency", seconds=0.6, duration=3600)
            env = ActivityEnvironment()
            env.info = dataclasses.replace(env.info, heartbeat_timeout=timedelta(seconds=5))
            served = await provider.requests_served()
            running = asyncio.create_task(
                env.run(watch.watch_match, WatchInput(fixture_id=FIXTURE_ID, progress=known.progress))
            )
            await asyncio.sleep(5.3)
            polls = await provider.requests_served() - served
            env.cancel()
            try:
                await running
            except asyncio.CancelledError:
                pass
    assert polls >= 5, f"{polls} polls in 5.3 s at a 1 s interval"
