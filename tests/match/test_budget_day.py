"""The hourly budget (issue 14): with the provider allowing N calls per window, a day of matches
played inside PROVIDER_HOURLY_BUDGET = N never receives a 429, and every match still ends exactly
as recorded, although the workers wanted more than N calls in a window.

The simulator's limit is set through `POST /_sim/rate-limit`: N calls per W seconds of real time,
W short (it stands in for SportMonks' hour), and the workers get the same N per W. Two `scoreline
worker` processes share the board and the budget through a Redis of the test's own.
"""

from __future__ import annotations

import asyncio
import time
from datetime import timedelta
from pathlib import Path

import pytest
from temporalio.client import Client

from scoreline.settings import Settings
from tests.match.harness import fast_settings, start_match, stored_outcome
from tests.support.provider import Provider, expected, line_times, running_provider
from tests.support.worker import WorkerProcess, worker_processes

pytestmark = [pytest.mark.timeout(240), pytest.mark.own_redis]

NAME = "football-three-matches"
END_OF_RECORDING = 10_000.0
WINDOW = timedelta(seconds=30)
"""The provider's counting window, standing in for its hour (the run spans two)."""
CALLS = 270
"""N: calls per window, for the simulator and the workers alike. The board alone needs three
quarters (one `livescores/inplay` per 0.15 s for both workers together, 200 a window; a board
that wanted more than three quarters would be polled slower, `tests/match/test_small_plan.py`).
Before kick-off every match is off the board and reconciled every 0.2 s, one `fixtures/multi` per
worker per turn: ten calls a second more while the run waits there, more than the budget refills,
so it refuses some."""
PRE_KICKOFF = 12.0
"""Seconds the run holds the clock before kick-off, as a match day starts."""
REFUSED = "scoreline_provider_budget_refused_total"


def day_settings(settings: Settings, provider_url: str) -> Settings:
    """Live and idle polls every 0.15 s, reconciles every 0.2 s, inside N calls per W."""
    return fast_settings(settings, provider_url).model_copy(
        update={
            "poll_interval_live": timedelta(milliseconds=150),
            "poll_interval_idle": timedelta(milliseconds=150),
            "reconcile_interval": timedelta(milliseconds=200),
            "watch_heartbeat_timeout": timedelta(seconds=5),
            "provider_hourly_budget": CALLS,
            "provider_budget_window": WINDOW,
        }
    )


async def demand(provider: Provider, workers: list[WorkerProcess]) -> tuple[int, int]:
    """Calls the provider received so far, and calls the workers' budget refused (never sent)."""
    served = sum((await provider.stats()).values())
    refused = sum([int(await worker.metric(REFUSED)) for worker in workers])
    return served, refused


async def test_a_day_of_matches_inside_the_budget_never_meets_a_429(
    settings: Settings, temporal_client: Client, database_url: str, tmp_path: Path
) -> None:
    """N calls per W allowed: the three bundled matches, stepped line by line from before kick-off
    through full time and the settle, get no 429 and end as recorded, while the workers wanted more
    than their budget allowed (it refused calls and deferred reconciles) and sent at most N in the
    first window.

    Before the change nothing counted calls on our side: every call wanted was sent (and more: a
    board per worker, a `fixtures/{id}` per match), so the provider answered the excess with 429s
    and a throttled client stopped polling until the window reset."""
    outcomes = expected(NAME)
    times = [*line_times([NAME]), END_OF_RECORDING]
    async with running_provider([NAME], t=0.0) as provider:
        await provider.set_rate_limit(CALLS, WINDOW.total_seconds())
        config = day_settings(settings, provider.url)
        opened = time.monotonic()  # the simulator's window opens with the first call, below
        # Started before the workers, as the fixture sync would have: their first calls are the
        # budget's, and the workers' own start-up (the sync) must not leave these none.
        handles = [await start_match(temporal_client, config, int(key)) for key in outcomes]
        async with worker_processes(config, tmp_path, 2) as workers:

            async def first_window() -> tuple[int, int]:
                await asyncio.sleep(max(0.0, opened + WINDOW.total_seconds() - 1 - time.monotonic()))
                return await demand(provider, workers)

            sampled = asyncio.create_task(first_window())
            try:
                await asyncio.sleep(PRE_KICKOFF)
                await provider.step_through(times, timeout=60)
                results = await asyncio.wait_for(asyncio.gather(*(handle.result() for handle in handles)), 60)
                ended = time.monotonic() - opened
                at_end = await demand(provider, workers)
                in_first_window = await sampled
            finally:
                sampled.cancel()
            deferred = sum(len(w.logged("reconcile deferred: the hourly budget is short")) for w in workers)
        limit = await provider.rate_limit()
        requests = await provider.stats()

    figures = (
        f"{ended:.0f} s; first window: (sent, refused by the budget) {in_first_window}; whole run "
        f"{at_end}, {deferred} reconciles deferred; sent per endpoint {requests}"
    )
    print(f"budget day: {figures}")
    assert limit["refused"] == 0, f"the provider answered {limit['refused']} calls with a 429: {figures}"
    served, _ = in_first_window
    assert served <= CALLS, figures
    # Every refused call is one the workers would have sent: the budget, not luck, kept them inside N.
    assert at_end[1] > 0, f"the budget never refused a call: {figures}"
    assert deferred > 0, figures
    assert {result.state.value for result in results} == {"finished"}
    for fixture_key, outcome in outcomes.items():
        stored = await stored_outcome(database_url, int(fixture_key))
        assert stored["events"] == sorted(outcome["events"]), fixture_key
        assert stored["retracted"] == sorted(outcome["retracted"]), fixture_key
        assert stored["score"] == outcome["score"], fixture_key
        assert stored["event_entries"] == [1], fixture_key
        assert stored["gapless"], fixture_key
