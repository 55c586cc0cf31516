"""Each simulator fault: retried with backoff, breaker opened and closed, only typed errors raised.

`fixture()` goes through the batcher to `fixtures/multi/{ids}`, so that is the endpoint faulted;
each call here is awaited alone with `within=0`, a request of its own.
"""

from __future__ import annotations

from typing import Any

import pytest
from structlog.testing import capture_logs

from activities.provider import BreakerState, ProviderUnavailable
from tests.provider_client.conftest import THREE_IDS, MakeClient, ManualClock, StartSim

FIXTURE = THREE_IDS[0]
ENDPOINT = "fixtures/multi/{ids}"
SLOW_TIMEOUT = 0.3
# name -> (fault body, config overrides)
TRANSIENT: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "status_503": ({"kind": "status", "status": 503}, {}),
    "status_500": ({"kind": "status", "status": 500}, {}),
    "malformed": ({"kind": "malformed"}, {}),
    "truncated": ({"kind": "truncated"}, {}),
    "reset": ({"kind": "reset"}, {}),
    "hang": ({"kind": "hang"}, {"timeout": SLOW_TIMEOUT}),
    "latency": ({"kind": "latency", "seconds": 3 * SLOW_TIMEOUT}, {"timeout": SLOW_TIMEOUT}),
}


@pytest.mark.parametrize("name", TRANSIENT)
async def test_a_passing_fault_is_retried_away(
    name: str, start_sim: StartSim, make_client: MakeClient
) -> None:
    """Two faulty answers, then a good one: the caller gets the fixture after three requests."""
    fault, overrides = TRANSIENT[name]
    sim = await start_sim()
    client = make_client(sim, **overrides)
    await sim.fault(**fault, count=2, endpoints=[ENDPOINT])
    with capture_logs() as logs:
        snapshot = await client.fixture(FIXTURE, within=0)
    assert snapshot is not None and snapshot.fixture_id == FIXTURE
    assert await sim.requests() == {ENDPOINT: 3}
    assert client.stats.transport.failed == 2
    assert client.transport.breaker.state is BreakerState.CLOSED
    assert client.transport.breaker.stats.consecutive_failures == 0
    sleeps = [line["sleep_s"] for line in logs if line["event"] == "provider.retry"]
    # Full jitter: uniform in [0, base * 2**(n-1)], base 0.01.
    assert len(sleeps) == 2
    assert 0 <= sleeps[0] <= 0.01 and 0 <= sleeps[1] <= 0.02


@pytest.mark.parametrize("name", TRANSIENT)
async def test_a_lasting_fault_opens_the_breaker_until_a_probe_succeeds(
    name: str, start_sim: StartSim, make_client: MakeClient
) -> None:
    """Retries run out (3 requests, threshold 3: the breaker opens); nothing is sent while it is
    open; after the cool-down one probe goes through and, the fault gone, closes it."""
    fault, overrides = TRANSIENT[name]
    sim = await start_sim()
    clock = ManualClock()
    client = make_client(sim, clock=clock, **overrides)
    await sim.fault(**fault, endpoints=[ENDPOINT])

    with pytest.raises(ProviderUnavailable) as exhausted:
        await client.fixture(FIXTURE, within=0)
    assert type(exhausted.value) is ProviderUnavailable
    assert (exhausted.value.reason, exhausted.value.attempts) == ("retries_exhausted", 3)
    assert client.transport.breaker.state is BreakerState.OPEN

    for _ in range(5):
        with pytest.raises(ProviderUnavailable) as refused:
            await client.fixture(FIXTURE, within=0)
        assert (refused.value.reason, refused.value.attempts) == ("breaker_open", 0)
    assert await sim.requests() == {ENDPOINT: 3}

    await sim.clear_faults()
    clock.advance(10.0)
    assert client.transport.breaker.state is BreakerState.HALF_OPEN
    assert await client.fixture(FIXTURE, within=0) is not None
    assert client.transport.breaker.state is BreakerState.CLOSED
    assert await sim.requests() == {ENDPOINT: 4}


async def test_live_poll_faults_surface_as_provider_unavailable(
    start_sim: StartSim, make_client: MakeClient
) -> None:
    """A live poll whose every attempt is garbled raises `ProviderUnavailable`, nothing rawer."""
    sim = await start_sim()
    client = make_client(sim)
    await sim.fault(kind="malformed")
    with pytest.raises(ProviderUnavailable) as caught:
        await client.live()
    assert caught.value.reason == "retries_exhausted"
    assert isinstance(caught.value.__cause__, Exception)
    assert await sim.requests() == {"livescores/inplay": 3}


async def test_a_dropped_include_is_absent_not_empty(start_sim: StartSim, make_client: MakeClient) -> None:
    """A silently dropped `events` include is not an error: one request, `events is None` (so the
    ingest retracts nothing), other relations intact, and the gap is logged."""
    sim = await start_sim()
    client = make_client(sim)
    await sim.fault(kind="drop_include", include="events")
    with capture_logs() as logs:
        board = await client.live()
    assert sorted(board.fixtures) == sorted(THREE_IDS)
    for snapshot in board.fixtures.values():
        assert snapshot.events is None
        assert snapshot.timeline is not None and snapshot.participants is not None
    assert await sim.requests() == {"livescores/inplay": 1}
    assert client.transport.breaker.state is BreakerState.CLOSED
    [missing] = [line for line in logs if line["event"] == "provider.includes_missing"]
    assert missing["missing"] == {"events": 3}
