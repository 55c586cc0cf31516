"""The watch activity on a cricket match overnight (`ActivityEnvironment`, real Postgres, Redis and
the provider simulator over HTTP)."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from datetime import timedelta

from temporalio.testing import ActivityEnvironment

from activities.ingest.store import IngestStore
from activities.provider.cricket.normaliser import normalise_cricket_fixture
from activities.watch import PollingConfig, WatchActivities
from domain.match_run import WatchInput
from domain.snapshot import MatchState
from scoreline.settings import Settings
from tests.match.cricket import cricket_settings, recorded_lines
from tests.support.provider import running_provider
from workers.dependencies import worker_dependencies

NAME = "cricket-test-two-days"
HEARTBEAT_TIMEOUT = timedelta(milliseconds=600)


async def test_a_night_at_stumps_is_polled_slowly_and_the_watch_keeps_heartbeating(
    settings: Settings,
) -> None:
    """At stumps the watch polls every `CRICKET_STUMPS_INTERVAL`, far longer than its heartbeat
    timeout, and heartbeats while it waits. Before, it slept the whole interval in silence: Temporal
    declared it dead after the timeout and restarted it, and each restart fetched the fixture at once."""
    night = next(line for line in recorded_lines(NAME) if line["fixture"]["status"] == "Stump Day 1")
    async with running_provider([NAME], t=float(night["t"])) as provider:
        config = cricket_settings(settings, provider)
        async with worker_dependencies(config) as deps:
            store = IngestStore(deps.pools.ingest)
            known = await store.ingest(normalise_cricket_fixture(night["fixture"]), "live")
            assert known.state is MatchState.STUMPS
            polling = PollingConfig(
                live=timedelta(milliseconds=50),
                idle=timedelta(milliseconds=50),
                reconcile=None,
                stumps=timedelta(seconds=2),
            )
            watch = WatchActivities(
                deps.provider, store, deps.pools.ingest, deps.redis, polling, cricket=deps.cricket
            )
            env = ActivityEnvironment()
            env.info = dataclasses.replace(env.info, heartbeat_timeout=HEARTBEAT_TIMEOUT)
            beats: list[float] = []
            env.on_heartbeat = lambda *_: beats.append(time.monotonic())
            served = await provider.requests_served()
            started = time.monotonic()
            running = asyncio.create_task(
                env.run(watch.watch_match, WatchInput(fixture_id=known.fixture_id, progress=known.progress))
            )
            await asyncio.sleep(3.0)
            env.cancel()
            try:
                await running
            except asyncio.CancelledError:
                pass
            polls = await provider.requests_served() - served
    gaps = [later - earlier for earlier, later in zip([started, *beats], beats, strict=False)]
    assert beats and max(gaps) < HEARTBEAT_TIMEOUT.total_seconds(), f"silent for {max(gaps, default=0):.2f}s"
    # 3 s at a 2 s stumps interval: the first poll and at most one more (each up to two requests:
    # the board, and the fixture when the match is not on it), not one every 50 ms.
    assert 1 <= polls <= 4, polls


async def test_a_cricket_match_on_the_board_is_reconciled_from_it(settings: Settings) -> None:
    """`livescores` carries every ball, so the reconcile reads the board: no `fixtures/{id}` every
    reconcile interval per match (100 matches would spend Cricket v2's hourly 2,000 in half an hour)."""
    lines = recorded_lines("cricket-t20")
    in_play = next(
        line for line in lines if line["fixture"]["status"] == "1st Innings" and line["fixture"]["balls"]
    )
    async with running_provider(["cricket-t20"], t=float(in_play["t"])) as provider:
        config = cricket_settings(settings, provider)
        async with worker_dependencies(config) as deps:
            store = IngestStore(deps.pools.ingest)
            known = await store.ingest(normalise_cricket_fixture(in_play["fixture"]), "live")
            polling = PollingConfig(
                live=timedelta(milliseconds=100),
                idle=timedelta(milliseconds=100),
                reconcile=timedelta(milliseconds=300),
            )
            watch = WatchActivities(
                deps.provider, store, deps.pools.ingest, deps.redis, polling, cricket=deps.cricket
            )
            env = ActivityEnvironment()
            env.info = dataclasses.replace(env.info, heartbeat_timeout=timedelta(seconds=5))
            await (await provider.admin.post("/_sim/stats/reset")).aread()
            running = asyncio.create_task(
                env.run(watch.watch_match, WatchInput(fixture_id=known.fixture_id, progress=known.progress))
            )
            await asyncio.sleep(2.0)
            env.cancel()
            try:
                await running
            except asyncio.CancelledError:
                pass
            stats = (await provider.admin.get("/_sim/stats")).json()["requests"]
    assert stats.get("cricket/livescores", 0) >= 1
    assert stats.get("cricket/fixtures/{id}", 0) == 0, stats
