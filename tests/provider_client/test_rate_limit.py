"""429s and the token: no request before the provider's reset time; typed, non-retried errors."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from datetime import UTC, datetime
from email.utils import format_datetime
from typing import Any

import httpx
import pytest

from activities.provider import (
    BreakerState,
    ProviderAuthError,
    ProviderRateLimited,
    SportMonksClient,
    SportMonksTransport,
)
from activities.provider.ratelimit import retry_after_seconds
from devkit.simulators.provider.ratelimit import RateLimiter
from tests.provider_client.conftest import THREE_IDS, MakeClient, ManualClock, StartSim, client_config


def _seconds_until(moment: datetime) -> float:
    return (moment - datetime.now(UTC)).total_seconds()


async def test_a_429_storm_sends_nothing_before_the_reset(
    start_sim: StartSim, make_client: MakeClient
) -> None:
    """After a 429 announcing a 30 s reset, hundreds of calls of every kind are refused locally
    with `retry_at`, and no request reaches the provider until the reset has passed. (The live
    calls share the remembered failure; the hundred `fixture()` calls of one id share one batch.)"""
    sim = await start_sim()
    clock = ManualClock()
    client = make_client(sim, clock=clock)
    await sim.fault(kind="rate_limit", duration=30)

    with pytest.raises(ProviderRateLimited) as first:
        await client.live()
    assert first.value.sent is True
    assert 28 <= _seconds_until(first.value.retry_at) <= 31
    assert await sim.total() == 1

    calls = [client.live() for _ in range(100)]
    calls += [client.fixture(THREE_IDS[0]) for _ in range(100)]
    calls += [client.fixtures(THREE_IDS) for _ in range(100)]
    results = await asyncio.gather(*calls, return_exceptions=True)
    assert {type(result) for result in results} == {ProviderRateLimited}
    retry_ats = [result.retry_at for result in results if isinstance(result, ProviderRateLimited)]
    assert all(abs((retry_at - first.value.retry_at).total_seconds()) < 2 for retry_at in retry_ats)

    clock.advance(29.5)
    with pytest.raises(ProviderRateLimited):
        await client.fixture(THREE_IDS[0])
    assert await sim.total() == 1
    # 100 `fixtures()` calls, one batch of the 100 `fixture()` calls, the one just now.
    assert client.stats.transport.refused_rate_limited == 102
    assert client.stats.live.cached == 100

    await sim.clock(advance=30)  # the provider's window is over
    clock.advance(0.6)
    assert await client.fixture(THREE_IDS[0]) is not None
    assert len((await client.live()).fixtures) == 3
    assert await sim.total() == 3
    assert client.transport.breaker.state is BreakerState.CLOSED


async def test_a_spent_budget_stops_requests_before_the_429(
    start_sim: StartSim, make_client: MakeClient
) -> None:
    """A 200 reporting `remaining: 0` already closes the window: the next call is refused locally."""
    sim = await start_sim()
    sim.simulator.rate_limiter = RateLimiter(limit=2)
    client = make_client(sim)
    for _ in range(2):
        assert await client.fixture(THREE_IDS[0]) is not None
    with pytest.raises(ProviderRateLimited) as caught:
        await client.fixture(THREE_IDS[0])
    assert caught.value.sent is False
    assert 3500 <= _seconds_until(caught.value.retry_at) <= 3601
    assert await sim.total() == 2


async def test_a_wrong_token_is_an_auth_error_and_not_retried(
    start_sim: StartSim, make_client: MakeClient
) -> None:
    """HTTP 401 is `ProviderAuthError` after exactly one request; the breaker does not count it."""
    sim = await start_sim()
    client = make_client(sim, token="wrong")
    for _ in range(5):
        with pytest.raises(ProviderAuthError):
            await client.fixture(THREE_IDS[0])
    assert await sim.total() == 5
    assert client.transport.breaker.state is BreakerState.CLOSED


def _answering(response: Callable[[], httpx.Response]) -> SportMonksClient:
    http = httpx.AsyncClient(
        base_url="http://provider.test", transport=httpx.MockTransport(lambda request: response())
    )
    return SportMonksClient(SportMonksTransport(http, client_config(), owns_http=True))


@pytest.mark.parametrize(
    ("header", "body_reset", "expected"),
    [
        ("120", 5, 120),  # Retry-After later than the body's reset: the later one wins
        ("2", 40, 40),
        (None, None, 60),  # nothing said: the configured fallback
        ("http-date", None, 300),
    ],
)
async def test_retry_after_and_the_body_reset_are_both_honoured(
    header: str | None, body_reset: int | None, expected: float
) -> None:
    """The hold lasts until the later of `Retry-After` and `rate_limit.resets_in_seconds`."""
    if header == "http-date":
        header = format_datetime(datetime.fromtimestamp(time.time() + 300, tz=UTC), usegmt=True)
    headers = {"Retry-After": header} if header else {}
    body: dict[str, Any] = {"message": "You have reached your rate limit"}
    if body_reset is not None:
        body["rate_limit"] = {"resets_in_seconds": body_reset, "remaining": 0}
    async with _answering(lambda: httpx.Response(429, json=body, headers=headers)) as client:
        with pytest.raises(ProviderRateLimited) as caught:
            await client.fixture(1)
        assert expected - 2 <= _seconds_until(caught.value.retry_at) <= expected + 1
        assert client.stats.transport.sent == 1


def test_retry_after_parsing() -> None:
    """Delta-seconds and HTTP dates parse; garbage is ignored."""
    now = 1_800_000_000.0
    assert retry_after_seconds("17", now) == 17
    assert retry_after_seconds("Fri, 15 Jan 2027 08:00:00 GMT", now) == pytest.approx(
        datetime(2027, 1, 15, 8, tzinfo=UTC).timestamp() - now
    )
    assert retry_after_seconds("soon", now) is None
    assert retry_after_seconds(None, now) is None
