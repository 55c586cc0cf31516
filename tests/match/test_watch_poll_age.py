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
from scoreline.settings import Settings
from tests.match.test_watch_activity import FIXTURE_ID, KICKOFF, line
from tests.support.provider import TOKEN, running_provider
from workers.dependencies import worker_dependencies
from workflows.match_types import WatchInput


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
