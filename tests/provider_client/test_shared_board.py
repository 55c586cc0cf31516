"""One live-board request per poll interval for the whole deployment (`shared_board`).

Two `SportMonksClient`s built by `from_settings` on one Redis, each with its own transport, as
two worker processes would be, against one simulator whose replay clock moves on every interval:
over six intervals both read a fresh board every interval, the simulator sees exactly one
`livescores/inplay` request per interval between them, and in each interval both hold the same
board (the same fixtures, the same arrival time). Whichever worker asks first fetches, whether
they ask at the same moment or one after the other. An unchanged fixture keeps its snapshot
object, for the follower too. When the board request fails (a lasting 503) both workers raise a
`ProviderError` for that interval, the follower without a request of its own, whether it asked
while the fetch was out or just after it failed. A board slower than half an interval still
reaches the worker that waited for it. With Redis unreachable each worker fetches its own board.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
import redis.asyncio as aioredis

from activities.provider import BreakerPolicy, ProviderClientConfig, ProviderError, SportMonksClient
from activities.provider.client import LiveBoard
from devkit.devstack.ports import free_port
from scoreline.settings import Settings
from tests.provider_client.conftest import THREE_IDS, Sim, StartSim, client_config

LIVE = "livescores/inplay"
INTERVAL = 0.3
PERIOD = 0.4
"""Seconds between the intervals the tests poll in: a little over `INTERVAL`, so each poll of a
worker finds its own last board expired."""
LAG = 0.05
"""How long after the first worker the second asks, in the intervals where they do not race."""


def _config(**overrides: Any) -> ProviderClientConfig:
    return client_config(live_ttl=INTERVAL, **overrides)


@pytest.fixture
async def redis_base(redis_server_url: str) -> AsyncIterator[str]:
    """The test Redis, kept apart by name rather than by a flushed database: every key of this
    test is under its own upstream name (`provider:*:<upstream>:*`), deleted afterwards, so
    other test sessions sharing the server neither see nor flush it."""
    yield redis_server_url


Workers = Callable[..., tuple[SportMonksClient, SportMonksClient]]


@pytest.fixture
async def workers(redis_base: str) -> AsyncIterator[Workers]:
    """`workers(sim, url=..., **config)`: two clients as two worker processes build them (each
    its own Redis client and transport), on buckets and a board named for this test alone."""
    upstream = f"test-{uuid.uuid4().hex[:12]}"
    made: list[SportMonksClient] = []
    redises: list[aioredis.Redis] = []

    def make(
        sim: Sim, *, url: str = redis_base, **overrides: Any
    ) -> tuple[SportMonksClient, SportMonksClient]:
        settings = Settings(provider_url=sim.base_url, redis_url=url, provider_hourly_budget=100_000)
        pair = []
        for _ in range(2):
            redis = aioredis.Redis.from_url(url)
            redises.append(redis)
            client = SportMonksClient.from_settings(
                settings, _config(upstream=upstream, **overrides), redis=redis
            )
            made.append(client)
            pair.append(client)
        return pair[0], pair[1]

    yield make
    for client in made:
        await client.aclose()
    for redis in redises:
        await redis.aclose()
    cleaner = aioredis.Redis.from_url(redis_base)
    keys = [key async for key in cleaner.scan_iter(match=f"provider:*:{upstream}:*")]
    if keys:
        await cleaner.delete(*keys)
    await cleaner.aclose()


async def _both(first: SportMonksClient, second: SportMonksClient, lag: float) -> list[Any]:
    """Both workers' boards (or errors) of one interval, the second asking `lag` s after the first."""

    async def later() -> LiveBoard:
        await asyncio.sleep(lag)
        return await second.live()

    return list(await asyncio.gather(first.live(), later(), return_exceptions=True))


async def _intervals(
    sim: Sim, first: SportMonksClient, second: SportMonksClient, count: int, *, advance: float = 0.0
) -> list[list[Any]]:
    """`count` intervals, `PERIOD` apart: the replay clock moves on, then both workers ask (at the
    same moment in even intervals; in odd ones the second worker first, the other `LAG` later)."""
    loop = asyncio.get_running_loop()
    start = loop.time()
    seen = []
    for interval in range(count):
        await asyncio.sleep(max(0.0, start + interval * PERIOD - loop.time()))
        if advance:
            await sim.clock(advance=advance)
        if interval % 2 == 0:
            seen.append(await _both(first, second, 0.0))
        else:
            second_board, first_board = await _both(second, first, LAG)
            seen.append([first_board, second_board])
    return seen


async def test_two_workers_share_one_board_request_per_interval(
    start_sim: StartSim, workers: Workers
) -> None:
    sim = await start_sim(t=600)
    first, second = workers(sim)
    seen = await _intervals(sim, first, second, 6, advance=60)

    arrivals = []
    for interval, (first_board, second_board) in enumerate(seen):
        assert isinstance(first_board, LiveBoard) and isinstance(second_board, LiveBoard), interval
        assert sorted(first_board.fixtures) == sorted(THREE_IDS)
        assert first_board.fixtures == second_board.fixtures, interval
        assert first_board.fetched_at == second_board.fetched_at, interval
        arrivals.append(first_board.fetched_at)
    assert arrivals == sorted(set(arrivals))  # a new board every interval
    minutes = [board.fixtures[THREE_IDS[0]].minute for board, _ in seen]
    assert len(set(minutes)) > 1  # and it is the new board, not a copy of the first

    assert await sim.requests() == {LIVE: 6}
    assert first.stats.transport.sent + second.stats.transport.sent == 6
    assert first.stats.live.started == second.stats.live.started == 6


async def test_an_unchanged_fixture_keeps_its_snapshot_on_both_workers(
    start_sim: StartSim, workers: Workers
) -> None:
    """The replay clock still: the second interval's board is fetched, yet every snapshot is the
    very object of the first, for the worker that fetched and the one that read it from Redis."""
    sim = await start_sim()
    first, second = workers(sim)
    [[a1, b1], [a2, b2]] = await _intervals(sim, first, second, 2)
    for before, after in ((a1, a2), (b1, b2)):
        assert isinstance(before, LiveBoard) and isinstance(after, LiveBoard)
        assert after.fetched_at > before.fetched_at
        assert all(after.fixtures[i] is before.fixtures[i] for i in THREE_IDS)
    assert await sim.requests() == {LIVE: 2}


async def test_a_failed_board_fails_both_workers(start_sim: StartSim, workers: Workers) -> None:
    """A lasting 503, both workers asking at once: the one holding the lease gives up after its
    three attempts and the other fails the same interval from the published failure, sending
    nothing; once the fault is gone, the next interval's board reaches both. (The breaker stays
    closed here: a worker whose breaker is open fails the interval for everyone until it probes,
    as a single process would.)"""
    sim = await start_sim()
    first, second = workers(sim, breaker=BreakerPolicy(failure_threshold=10, cooldown=10.0))
    await sim.fault(kind="status", status=503, endpoints=[LIVE])
    results = await _both(first, second, 0.0)
    assert all(isinstance(result, ProviderError) for result in results), results
    assert await sim.requests() == {LIVE: 3}

    await sim.clear_faults()
    await asyncio.sleep(PERIOD)
    boards = await _both(first, second, 0.0)
    assert all(
        isinstance(board, LiveBoard) and sorted(board.fixtures) == sorted(THREE_IDS) for board in boards
    ), boards
    assert await sim.requests() == {LIVE: 4}


async def test_a_worker_asking_after_the_failure_fails_at_once(start_sim: StartSim, workers: Workers) -> None:
    """A lasting 503: the second worker asks just after the first has failed, in the same
    interval. It fails that poll at once from the published failure, as it would take a published
    board, instead of waiting out the first worker's lease and spending three requests of its own."""
    sim = await start_sim()
    first, second = workers(sim)
    await sim.fault(kind="status", status=503, endpoints=[LIVE])
    with pytest.raises(ProviderError):
        await first.live()
    loop = asyncio.get_running_loop()
    began = loop.time()
    with pytest.raises(ProviderError):
        await second.live()
    elapsed = loop.time() - began
    assert await sim.requests() == {LIVE: 3}
    assert second.stats.transport.sent == 0
    assert elapsed < INTERVAL / 2


async def test_without_redis_each_worker_fetches_its_own_board(start_sim: StartSim, workers: Workers) -> None:
    """Redis unreachable: nothing to share, so each worker fetches every interval (and the
    budget counts in memory); the boards still arrive."""
    sim = await start_sim()
    first, second = workers(sim, url=f"redis://127.0.0.1:{free_port()}/0")
    seen = await _intervals(sim, first, second, 3)
    for pair in seen:
        assert all(
            isinstance(board, LiveBoard) and sorted(board.fixtures) == sorted(THREE_IDS) for board in pair
        )
    assert await sim.requests() == {LIVE: 6}
    assert first.stats.transport.sent == second.stats.transport.sent == 3


async def test_a_slow_board_is_shared_with_the_worker_waiting_for_it(
    start_sim: StartSim, workers: Workers
) -> None:
    """A board that takes more than half an interval to arrive: the worker that asked while it
    was being fetched takes it when it lands, rather than waiting out the lease and fetching the
    same board again itself."""
    sim = await start_sim()
    first, second = workers(sim)
    await sim.fault(kind="latency", seconds=INTERVAL * 0.6, endpoints=[LIVE])
    loop = asyncio.get_running_loop()
    began = loop.time()
    boards = await _both(first, second, 0.0)
    elapsed = loop.time() - began
    assert all(isinstance(board, LiveBoard) for board in boards), boards
    assert boards[0].fetched_at == boards[1].fetched_at
    assert await sim.requests() == {LIVE: 1}
    assert elapsed < INTERVAL
