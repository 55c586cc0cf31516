"""The hourly request budget (`budget`): one token bucket per entity in Redis, a match's own
fetches first.

With the real Redis: a budget of 120/h (a bucket of two) lets urgent calls take it down to zero
tokens while deferrable calls stop at half the capacity and the board at a quarter (seen in full
on a bucket of forty); the bucket refills up to its capacity and no further; two
`RequestBudget`s on one Redis, as two workers, spend one bucket; with Redis unreachable a process
keeps the same bucket in memory and still refuses beyond it. Through the transport against the
simulator: a call the budget refuses raises `ProviderBudgetSpent` and is never sent (the
simulator's counters show only the calls that were spent), each retry attempt spends a call, and
an API whose endpoints are entities of their own (Cricket v2) has a bucket per endpoint.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from datetime import date, timedelta

import httpx
import pytest
import redis.asyncio as aioredis
from structlog.testing import capture_logs

from activities.provider import SportMonksClient, SportMonksTransport
from activities.provider.budget import BucketShape, Priority, RequestBudget, affordable_board_interval
from activities.provider.errors import ProviderBudgetSpent
from activities.provider.shared_board import REDIS_TIMEOUT
from devkit.devstack.ports import free_port
from tests.provider_client.conftest import THREE_IDS, Sim, StartSim, client_config

ENTITY = "Fixture"
MULTI = "fixtures/multi/{ids}"
LIVE = "livescores/inplay"


Names = Callable[[], str]


@pytest.fixture
async def redis(redis_server_url: str) -> AsyncIterator[aioredis.Redis]:
    """The test Redis, kept apart by name rather than by a flushed database (other test sessions
    sharing the server flush theirs): each bucket is under an upstream name of its own (`names`)."""
    client = aioredis.Redis.from_url(redis_server_url)
    yield client
    await client.aclose()


@pytest.fixture
async def names(redis: aioredis.Redis) -> AsyncIterator[Names]:
    """Upstream names no other test's buckets have; their keys are deleted afterwards."""
    made: list[str] = []

    def name() -> str:
        made.append(f"test-{uuid.uuid4().hex[:12]}")
        return made[-1]

    yield name
    for upstream in made:
        keys = [key async for key in redis.scan_iter(match=f"provider:budget:{upstream}:*")]
        if keys:
            await redis.delete(*keys)


@pytest.fixture
async def closed_redis() -> AsyncIterator[aioredis.Redis]:
    """A client for a port nobody listens on."""
    client = aioredis.Redis.from_url(f"redis://127.0.0.1:{free_port()}/0")
    yield client
    await client.aclose()


async def _takes(budget: RequestBudget, priority: Priority, entity: str = ENTITY, limit: int = 200) -> int:
    """Calls of `priority` the budget grants in a row before its first refusal."""
    for granted in range(limit):
        if not await budget.take(entity, priority):
            return granted
    raise AssertionError(f"the budget never refused a {priority} call")


async def _tokens(redis: aioredis.Redis, upstream: str, entity: str = ENTITY) -> float:
    raw = await redis.hget(f"provider:budget:{upstream}:{entity}", "tokens")
    assert raw is not None
    return float(raw)


@pytest.mark.unit
def test_the_bucket_holds_a_minute_and_refills_the_rest_of_the_hour() -> None:
    assert BucketShape.of(120) == BucketShape(capacity=2.0, rate=pytest.approx(118 / 3600))
    assert BucketShape.of(6000) == BucketShape(capacity=100.0, rate=pytest.approx(5900 / 3600))
    assert BucketShape.of(1) == BucketShape(capacity=2.0, rate=0.0)


async def test_120_an_hour_gives_urgent_calls_everything_and_the_others_their_share(
    redis: aioredis.Redis, names: Names
) -> None:
    """A bucket of two: an urgent call takes both (zero left); the board stops with one left (a
    quarter is half a call: it needs a whole one above) and so does a deferrable call (half)."""
    upstream = names()
    budget = RequestBudget(redis, upstream, 120)
    assert await _takes(budget, "urgent", "urgent-only") == 2
    assert await _tokens(redis, upstream, "urgent-only") == pytest.approx(0.0, abs=0.01)
    assert await _takes(budget, "deferrable", "deferrable-only") == 1
    assert await _tokens(redis, upstream, "deferrable-only") == pytest.approx(1.0, abs=0.01)
    assert await _takes(budget, "board", "board-only") == 1
    assert await _tokens(redis, upstream, "board-only") == pytest.approx(1.0, abs=0.01)

    # In turn on one bucket: what the reconciles leave, the board cannot touch; an urgent call can.
    assert await _takes(budget, "deferrable") == 1
    assert await _takes(budget, "board") == 0
    assert await _takes(budget, "urgent") == 1
    assert await _tokens(redis, upstream) == pytest.approx(0.0, abs=0.01)


async def test_each_priority_stops_at_its_floor(redis: aioredis.Redis, names: Names) -> None:
    """A bucket of forty (2,400/h): reconciles take twenty and leave half, the board ten more and
    leaves a quarter, urgent calls the last ten."""
    upstream = names()
    budget = RequestBudget(redis, upstream, 2400)
    assert budget.shape.capacity == 40
    for priority, granted, left in (("deferrable", 20, 20), ("board", 10, 10), ("urgent", 10, 0)):
        assert await _takes(budget, priority) == granted, priority
        assert left <= await _tokens(redis, upstream) < left + 0.5, priority


async def test_a_board_that_spends_all_it_may_leaves_the_confirming_call_its_token(
    redis: aioredis.Redis, names: Names
) -> None:
    """The board, polled as fast as the bucket lets it, never takes the last quarter: a match that
    left the board gets its confirming (urgent) call at once. Before, the board's floor was nothing
    and the urgent one a quarter, so a board polled faster than the refill took every token and
    the call that would confirm a full time never got one."""
    upstream = names()
    budget = RequestBudget(redis, upstream, 2400)
    while await _takes(budget, "board") > 0:
        pass
    assert await _takes(budget, "urgent") == 10


def test_a_plan_smaller_than_the_poll_rate_stretches_the_board_interval() -> None:
    """2,000 calls an hour pay for a board every 2.4 s within its three quarters: 2.5 s stays,
    0.5 s is stretched to 2.4 s, and a plan of 600 to 8 s; a larger plan never shortens it."""
    hour = timedelta(hours=1)
    assert affordable_board_interval(timedelta(seconds=2.5), 2000, hour) == timedelta(seconds=2.5)
    assert affordable_board_interval(timedelta(seconds=0.5), 2000, hour) == timedelta(seconds=2.4)
    assert affordable_board_interval(timedelta(seconds=2.5), 600, hour) == timedelta(seconds=8)
    assert affordable_board_interval(timedelta(seconds=2.5), 100_000, hour) == timedelta(seconds=2.5)


async def test_the_bucket_refills_up_to_its_capacity(redis: aioredis.Redis, names: Names) -> None:
    """Spent, then (as Redis sees it) an hour later: full again, but never above the capacity."""
    upstream = names()
    budget = RequestBudget(redis, upstream, 2400)
    assert await _takes(budget, "urgent") == 40
    key = f"provider:budget:{upstream}:{ENTITY}"
    seconds, micros = await redis.time()
    await redis.hset(key, "at", str(seconds + micros / 1e6 - 3600))
    assert await _takes(budget, "urgent") == 40


async def test_two_workers_spend_one_bucket(redis_server_url: str, names: Names) -> None:
    """Two budgets, each with its own Redis client, as two worker processes: what one spends the
    other cannot, and the urgent calls of either take what the reconciles and boards of both left."""
    upstream = names()
    first_redis, second_redis = (
        aioredis.Redis.from_url(redis_server_url),
        aioredis.Redis.from_url(redis_server_url),
    )
    try:
        first = RequestBudget(first_redis, upstream, 2400)
        second = RequestBudget(second_redis, upstream, 2400)
        assert await _takes(first, "deferrable") == 20
        assert await _takes(second, "deferrable") == 0
        assert await _takes(second, "board") == 10
        assert await _takes(first, "board") == 0
        assert await _takes(second, "urgent") == 10
        assert await _takes(first, "urgent") == 0

        # 120/h: the bucket of two is spent by one urgent call of each worker.
        small = names()
        assert await RequestBudget(first_redis, small, 120).take(ENTITY, "urgent")
        assert await RequestBudget(second_redis, small, 120).take(ENTITY, "urgent")
        assert not await RequestBudget(first_redis, small, 120).take(ENTITY, "urgent")
    finally:
        await first_redis.aclose()
        await second_redis.aclose()


async def test_without_redis_a_process_keeps_the_bucket_itself(closed_redis: aioredis.Redis) -> None:
    """Redis unreachable: the same bucket in memory, per entity, still refusing beyond it; the
    fallback is logged once, not per call."""
    budget = RequestBudget(closed_redis, "football", 120)
    with capture_logs() as logs:
        assert await _takes(budget, "urgent") == 2
        assert await _takes(budget, "deferrable", "other") == 1
        assert await _takes(budget, "board", "other") == 0
        assert await _takes(budget, "urgent", "other") == 1
    warnings = [line for line in logs if "redis unavailable" in line["event"]]
    assert len(warnings) == 1 and warnings[0]["log_level"] == "warning"

    floors = RequestBudget(closed_redis, "cricket", 2400)
    assert [await _takes(floors, p) for p in ("deferrable", "board", "urgent")] == [20, 10, 10]


@pytest.fixture
async def silent_redis() -> AsyncIterator[aioredis.Redis]:
    """A client for a server that accepts connections and never answers (a Redis that hangs,
    or one behind a network that drops its replies)."""
    accepted: list[asyncio.StreamWriter] = []

    async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append(writer)

    server = await asyncio.start_server(accept, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    client = aioredis.Redis.from_url(f"redis://127.0.0.1:{port}/0")
    yield client
    for writer in accepted:
        writer.close()
    server.close()
    await server.wait_closed()
    await client.aclose()


async def test_a_redis_that_does_not_answer_counts_as_away(silent_redis: aioredis.Redis) -> None:
    """Redis accepting but never answering is Redis away too: the call is decided by the local
    bucket within the shared board's Redis timeout (2 s), not held up until Redis answers. Every
    provider request spends from the budget first, so a hang here is a hang of them all."""
    budget = RequestBudget(silent_redis, "football", 120)
    async with asyncio.timeout(REDIS_TIMEOUT + 1):
        assert await budget.take(ENTITY, "board")


@pytest.mark.unit
async def test_without_redis_and_without_a_client_the_bucket_is_local() -> None:
    budget = RequestBudget(None, "football", 120)
    assert await _takes(budget, "urgent") == 2


@dataclass
class Budgeted:
    client: SportMonksClient
    sim: Sim


MakeBudgeted = Callable[..., Awaitable[Budgeted]]


@pytest.fixture
async def budgeted(start_sim: StartSim, redis: aioredis.Redis, names: Names) -> AsyncIterator[MakeBudgeted]:
    """`budgeted(hourly, **config)`: a client spending its own budget, against a fresh simulator."""
    made: list[tuple[SportMonksClient, httpx.AsyncClient]] = []

    async def make(hourly: int, **overrides: object) -> Budgeted:
        sim = await start_sim()
        http = httpx.AsyncClient(base_url=sim.base_url)
        budget = RequestBudget(redis, names(), hourly)
        transport = SportMonksTransport(http, client_config(**overrides), budget=budget)
        client = SportMonksClient(transport)
        made.append((client, http))
        return Budgeted(client, sim)

    yield make
    for client, http in made:
        await client.aclose()
        await http.aclose()


async def test_a_refused_call_is_never_sent(budgeted: MakeBudgeted) -> None:
    """A budget of two calls an hour (no refill): the board takes one; a reconcile and another
    board call are refused; an urgent `fixture()` takes the last, and the next is refused; nothing
    refused reaches the provider, and nothing refused is retried."""
    made = await budgeted(1)
    client, sim = made.client, made.sim
    assert sorted((await client.live()).fixtures) == sorted(THREE_IDS)

    with pytest.raises(ProviderBudgetSpent) as deferred:
        await client.fixture(THREE_IDS[1], within=0, deferrable=True)
    assert (deferred.value.endpoint, deferred.value.entity, deferred.value.priority) == (
        MULTI,
        ENTITY,
        "deferrable",
    )
    with pytest.raises(ProviderBudgetSpent) as board:
        await client.transport.get(LIVE, LIVE, priority="board")
    assert (board.value.endpoint, board.value.priority) == (LIVE, "board")

    assert await client.fixture(THREE_IDS[0], within=0) is not None
    with pytest.raises(ProviderBudgetSpent) as urgent:
        await client.fixture(THREE_IDS[1], within=0)
    assert urgent.value.priority == "urgent"

    assert await sim.requests() == {MULTI: 1, LIVE: 1}
    assert client.stats.transport.sent == 2
    assert client.transport.breaker.stats.consecutive_failures == 0


async def test_every_attempt_spends_a_call(budgeted: MakeBudgeted) -> None:
    """A call answered 503 once is retried: two attempts, two calls, the bucket of two is empty
    and the next call is refused unsent."""
    made = await budgeted(1)
    client, sim = made.client, made.sim
    await sim.fault(kind="status", status=503, count=1, endpoints=[LIVE])
    envelope = await client.transport.get(LIVE, LIVE, priority="urgent")
    assert envelope.attempts == 2
    with pytest.raises(ProviderBudgetSpent):
        await client.transport.get(LIVE, LIVE, priority="urgent")
    assert await sim.requests() == {LIVE: 2}


async def test_an_endpoint_can_be_its_own_entity(budgeted: MakeBudgeted) -> None:
    """With `budget_entity=None` (Cricket v2's counting), spending the board's bucket leaves the
    per-fixture endpoint's untouched."""
    made = await budgeted(1, budget_entity=None)
    client, sim = made.client, made.sim
    for _ in range(2):
        await client.transport.get(LIVE, LIVE, priority="urgent")
    with pytest.raises(ProviderBudgetSpent) as caught:
        await client.transport.get(LIVE, LIVE, priority="urgent")
    assert caught.value.entity == LIVE
    assert await client.fixture(THREE_IDS[0], within=0) is not None
    assert await sim.requests() == {LIVE: 2, MULTI: 1}


async def test_a_call_of_no_stated_priority_waits_behind_the_board(budgeted: MakeBudgeted) -> None:
    """The fixture sync's pages and the cricket score table state no priority: they wait for their
    next turn rather than take the board's share. Urgent was the default, so the sync's paging
    went ahead of the live board."""
    made = await budgeted(1)
    client = made.client
    assert sorted((await client.live()).fixtures) == sorted(THREE_IDS)
    with pytest.raises(ProviderBudgetSpent) as caught:
        await client.fixtures_between(date(2026, 3, 14), date(2026, 3, 14))
    assert caught.value.priority == "deferrable"
