"""The circuit breaker: opens after N failures, one half-open probe, closes on success.

`fixture()` calls go through the batcher (`fixtures/multi/{ids}`); they are awaited one at a time
with `within=0`, so each is a request of its own. Where requests must be in flight together
(the half-open probe, the bulkhead), the tests use `fixtures([id])`, which is never batched.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine
from typing import Any

import pytest
from structlog.testing import capture_logs

from activities.provider import (
    BreakerPolicy,
    BreakerState,
    ProviderUnavailable,
    RetryPolicy,
    SportMonksClient,
)
from domain.snapshot import Snapshot
from tests.provider_client.conftest import THREE_IDS, MakeClient, ManualClock, Sim, StartSim

FIXTURE = THREE_IDS[0]
ENDPOINT = "fixtures/multi/{ids}"
NO_RETRIES = RetryPolicy(attempts=1)


async def _outcomes(calls: list[Coroutine[Any, Any, object]]) -> list[object]:
    return list(await asyncio.gather(*calls, return_exceptions=True))


async def _one(client: SportMonksClient) -> Snapshot | None:
    """One `fixture()` call that is a request of its own (nobody else to wait for)."""
    return await client.fixture(FIXTURE, within=0)


async def _failing(start_sim: StartSim) -> Sim:
    sim = await start_sim()
    await sim.fault(kind="status", status=503, endpoints=[ENDPOINT])
    return sim


async def test_it_opens_after_n_failures_and_then_sends_nothing(
    start_sim: StartSim, make_client: MakeClient
) -> None:
    """Three failed requests open it; the next twenty calls fail fast without a request."""
    sim = await _failing(start_sim)
    client = make_client(sim, clock=ManualClock(), retry=NO_RETRIES)
    for expected in (BreakerState.CLOSED, BreakerState.CLOSED, BreakerState.OPEN):
        with pytest.raises(ProviderUnavailable):
            await _one(client)
        assert client.transport.breaker.state is expected
    for _ in range(20):
        with pytest.raises(ProviderUnavailable) as refused:
            await _one(client)
        assert refused.value.reason == "breaker_open"
    assert await sim.requests() == {ENDPOINT: 3}
    stats = client.transport.breaker.stats
    assert (stats.opened, stats.rejected, stats.consecutive_failures) == (1, 20, 3)
    assert stats.retry_in == pytest.approx(10.0)

    # Twenty concurrent callers share one batch: one refused request, twenty refused callers.
    results = await _outcomes([client.fixture(FIXTURE) for _ in range(20)])
    assert all(isinstance(r, ProviderUnavailable) and r.reason == "breaker_open" for r in results)
    assert client.transport.breaker.stats.rejected == 21
    assert await sim.requests() == {ENDPOINT: 3}


async def test_retries_stop_as_soon_as_it_opens(start_sim: StartSim, make_client: MakeClient) -> None:
    """With five attempts allowed and a threshold of two, a call sends two requests, not five."""
    sim = await _failing(start_sim)
    client = make_client(
        sim,
        clock=ManualClock(),
        retry=RetryPolicy(attempts=5, backoff_base=0.001, backoff_max=0.001),
        breaker=BreakerPolicy(failure_threshold=2, cooldown=10.0),
    )
    with pytest.raises(ProviderUnavailable) as caught:
        await _one(client)
    assert (caught.value.reason, caught.value.attempts) == ("breaker_open", 2)
    assert await sim.requests() == {ENDPOINT: 2}


async def test_half_open_lets_exactly_one_probe_through(start_sim: StartSim, make_client: MakeClient) -> None:
    """After the cool-down, of twenty concurrent requests one is sent: a failing probe re-opens the
    breaker for another cool-down, a succeeding one closes it."""
    sim = await _failing(start_sim)
    clock = ManualClock()
    client = make_client(sim, clock=clock, retry=NO_RETRIES)
    for _ in range(3):
        with pytest.raises(ProviderUnavailable):
            await _one(client)

    clock.advance(9.9)
    with pytest.raises(ProviderUnavailable):
        await _one(client)
    assert await sim.requests() == {ENDPOINT: 3}

    clock.advance(0.1)
    assert client.transport.breaker.state is BreakerState.HALF_OPEN
    results = await _outcomes([client.fixtures([FIXTURE]) for _ in range(20)])
    assert all(isinstance(r, ProviderUnavailable) for r in results)
    reasons = sorted(r.reason for r in results if isinstance(r, ProviderUnavailable))
    assert reasons == ["breaker_open"] * 19 + ["retries_exhausted"]
    assert await sim.requests() == {ENDPOINT: 4}
    assert client.transport.breaker.state is BreakerState.OPEN

    await sim.clear_faults()
    clock.advance(10.0)
    results = await _outcomes([client.fixtures([FIXTURE]) for _ in range(20)])
    assert sum(1 for r in results if isinstance(r, ProviderUnavailable)) == 19
    [probe] = [r for r in results if not isinstance(r, ProviderUnavailable)]
    assert isinstance(probe, list) and [snapshot.fixture_id for snapshot in probe] == [FIXTURE]
    assert await sim.requests() == {ENDPOINT: 5}
    assert client.transport.breaker.state is BreakerState.CLOSED
    assert await _one(client) is not None
    assert await sim.requests() == {ENDPOINT: 6}


async def test_a_success_resets_the_failure_count(start_sim: StartSim, make_client: MakeClient) -> None:
    """Failures must be consecutive: two, a success, two more leave it closed."""
    sim = await start_sim()
    client = make_client(sim, clock=ManualClock(), retry=NO_RETRIES)
    for _ in range(2):
        await sim.fault(kind="status", status=502, count=2, endpoints=[ENDPOINT])
        for _ in range(2):
            with pytest.raises(ProviderUnavailable):
                await _one(client)
        assert client.transport.breaker.state is BreakerState.CLOSED
        assert await _one(client) is not None
    assert client.transport.breaker.stats.opened == 0


async def test_state_changes_are_logged(start_sim: StartSim, make_client: MakeClient) -> None:
    """closed → open → half_open → closed, each one a `provider.breaker` line."""
    sim = await _failing(start_sim)
    clock = ManualClock()
    client = make_client(sim, clock=clock, retry=NO_RETRIES)
    with capture_logs() as logs:
        for _ in range(3):
            with pytest.raises(ProviderUnavailable):
                await _one(client)
        await sim.clear_faults()
        clock.advance(10.0)
        await _one(client)
    changes = [(line["old"], line["new"]) for line in logs if line["event"] == "provider.breaker"]
    assert changes == [("closed", "open"), ("open", "half_open"), ("half_open", "closed")]
    assert next(line["log_level"] for line in logs if line["event"] == "provider.breaker") == "warning"


async def test_the_bulkhead_bounds_requests_in_flight(start_sim: StartSim, make_client: MakeClient) -> None:
    """With a bulkhead of two, six slow requests never have more than two out at once."""
    sim = await start_sim()
    client = make_client(sim, max_concurrency=2)
    await sim.fault(kind="latency", seconds=0.15, endpoints=[ENDPOINT])
    peak = 0

    async def sample() -> None:
        nonlocal peak
        while True:
            peak = max(peak, client.stats.transport.in_flight)
            await asyncio.sleep(0.005)

    sampler = asyncio.create_task(sample())
    loop = asyncio.get_running_loop()
    began = loop.time()
    snapshots = await asyncio.gather(*(client.fixtures([FIXTURE]) for _ in range(6)))
    elapsed = loop.time() - began
    sampler.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await sampler
    assert [[snapshot.fixture_id for snapshot in found] for found in snapshots] == [[FIXTURE]] * 6
    assert peak == 2
    assert elapsed >= 3 * 0.15  # three waves of two
    assert await sim.requests() == {ENDPOINT: 6}
