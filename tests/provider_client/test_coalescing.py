"""One upstream `livescores/inplay` request per poll interval, however many watchers ask."""

from __future__ import annotations

import asyncio
import math
import random
import time

import pytest

from activities.provider import ProviderUnavailable
from activities.provider.coalescing import Coalescer
from tests.provider_client.conftest import (
    SYNTHETIC_BASE_ID,
    MakeClient,
    ManualClock,
    StartSim,
    Synthetic,
)

LIVE = "livescores/inplay"


async def test_concurrent_callers_share_one_request(start_sim: StartSim, make_client: MakeClient) -> None:
    """500 callers at once get the same board from one request."""
    sim = await start_sim()
    client = make_client(sim, clock=ManualClock())
    boards = await asyncio.gather(*(client.live() for _ in range(500)))
    assert len({id(board) for board in boards}) == 1
    assert await sim.requests() == {LIVE: 1}
    stats = client.stats.live
    assert (stats.started, stats.joined + stats.cached) == (1, 499)


async def test_the_board_is_reused_for_one_interval_only(
    start_sim: StartSim, make_client: MakeClient
) -> None:
    """Within the TTL (the poll interval) the cached board is served; after it, a new request."""
    sim = await start_sim()
    clock = ManualClock()
    client = make_client(sim, clock=clock, live_ttl=2.5)
    first = await client.live()
    clock.advance(2.4)
    assert await client.live() is first
    assert await sim.requests() == {LIVE: 1}
    clock.advance(0.1)
    assert await client.live() is not first
    assert await sim.requests() == {LIVE: 2}


async def test_a_cancelled_watcher_does_not_cancel_the_shared_request(
    start_sim: StartSim, make_client: MakeClient
) -> None:
    """The request goes on for the others when the caller that started it is cancelled."""
    sim = await start_sim()
    client = make_client(sim, clock=ManualClock())
    await sim.fault(kind="latency", seconds=0.2, count=1)
    starter = asyncio.create_task(client.live())
    await asyncio.sleep(0.05)
    follower = asyncio.create_task(client.live())
    await asyncio.sleep(0.05)
    starter.cancel()
    board = await follower
    assert len(board.fixtures) == 3
    with pytest.raises(asyncio.CancelledError):
        await starter
    assert await sim.requests() == {LIVE: 1}


async def test_an_outage_costs_one_request_series_per_interval(
    start_sim: StartSim, make_client: MakeClient
) -> None:
    """While the provider fails, 200 watchers share one retried call and its error."""
    sim = await start_sim()
    client = make_client(sim, clock=ManualClock())
    await sim.fault(kind="status", status=503)
    results = await asyncio.gather(*(client.live() for _ in range(200)), return_exceptions=True)
    assert {type(result) for result in results} == {ProviderUnavailable}
    assert await sim.requests() == {LIVE: 3}  # one call, three attempts
    with pytest.raises(ProviderUnavailable):
        await client.live()  # within the interval: the remembered failure
    assert await sim.requests() == {LIVE: 3}


async def test_500_watchers_over_10_intervals_make_at_most_one_request_per_interval(
    start_sim: StartSim, make_client: MakeClient, synthetic: Synthetic
) -> None:
    """500 watchers, each of its own live fixture, polling every 0.2 s at random phases for ten
    intervals: every poll finds its fixture, and upstream sees at most one request per interval."""
    watchers, intervals, interval = 500, 10, 0.2
    sim = await start_sim([synthetic(watchers)], t=0)
    client = make_client(sim, live_ttl=interval)
    missed: list[tuple[int, int]] = []
    loop = asyncio.get_running_loop()
    started = loop.time()

    async def watch(fixture_id: int) -> None:
        phase = random.uniform(0, interval)
        for poll in range(intervals):
            await asyncio.sleep(max(0.0, started + poll * interval + phase - loop.time()))
            snapshot = await client.live_snapshot(fixture_id)
            if snapshot is None or snapshot.fixture_id != fixture_id:
                missed.append((fixture_id, poll))

    wall = time.monotonic()
    await asyncio.gather(*(watch(SYNTHETIC_BASE_ID + index) for index in range(watchers)))
    elapsed = time.monotonic() - wall

    assert missed == []
    requests = (await sim.requests())[LIVE]
    assert requests <= math.ceil(elapsed / interval), (requests, elapsed)
    assert requests >= intervals // 2, "the board must be refreshed every interval, not cached forever"
    stats = client.stats.live
    assert stats.started == requests
    assert stats.started + stats.joined + stats.cached == watchers * intervals


async def test_a_slow_board_is_refreshed_every_interval_and_never_back_to_back() -> None:
    """The window runs from the fetch's start: a board that takes 0.5 s of a 1 s interval is fetched
    again one interval after the last one started (before, one interval after it finished: every
    1.5 s). One slower than the interval is not fetched again the moment it answered."""
    clock = ManualClock(start=0.0)
    coalescer = Coalescer[int](ttl=1.0, clock=clock)
    took = 0.5
    calls = 0

    async def fetch() -> int:
        nonlocal calls
        calls += 1
        clock.advance(took)
        return calls

    assert await coalescer.get("board", fetch) == 1  # 0.0 → 0.5
    clock.advance(0.25)
    assert await coalescer.get("board", fetch) == 1  # 0.75: the same interval
    clock.advance(0.25)
    assert await coalescer.get("board", fetch) == 2  # 1.0: the next one, 1.0 → 1.5
    took = 1.5
    clock.advance(0.5)
    assert await coalescer.get("board", fetch) == 3  # 2.0 → 3.5, longer than the interval
    assert await coalescer.get("board", fetch) == 3  # 3.5: it just answered
    clock.advance(0.125)
    assert await coalescer.get("board", fetch) == 4  # over a tenth of the interval later
