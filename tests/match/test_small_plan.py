"""A provider plan smaller than the poll rate (issue 33): the live cadence stretches to what the
plan pays for, and every match still reaches its recorded end.

The simulator allows N calls per W seconds (W stands in for SportMonks' hour) and the worker's
budget is the same N per W; the configured live poll alone would want three times N. A worker
process runs with its own Redis, as a deployment's worker does.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path

import pytest
from temporalio.client import Client

from scoreline.settings import Settings
from tests.match.harness import fast_settings, start_match, stored_outcome
from tests.support.provider import expected, line_times, running_provider
from tests.support.worker import worker_processes

pytestmark = [pytest.mark.timeout(300), pytest.mark.own_redis]

NAME = "football-three-matches"
END_OF_RECORDING = 10_000.0
WINDOW = timedelta(minutes=6)
POLL = timedelta(milliseconds=100)
CALLS = 1200
"""A third of what the configured board alone wants: one `livescores/inplay` per 0.1 s is 3,600 a
window. The window is long enough for the bucket to hold 20 calls, so the floors keep 5 of them
apart from the board, as an hourly plan's bucket of 33 would."""
STRETCH = "scoreline_provider_live_poll_stretch"


async def test_a_plan_a_third_of_the_poll_rate_still_ends_every_match_as_recorded(
    settings: Settings, temporal_client: Client, database_url: str, tmp_path: Path
) -> None:
    """Every match ends exactly as recorded, the provider never answers 429, and the worker says
    once (and in its metrics) that it polls slower than configured.

    Before the change the board took every call the budget refilled (its floor was nothing, the
    urgent calls' a quarter), so a match that left the board never got the `fixtures/multi` call
    that confirms its full time: it stayed live for good, with a warning per poll."""
    outcomes = expected(NAME)
    times = [*line_times([NAME]), END_OF_RECORDING]
    async with running_provider([NAME], t=0.0) as provider:
        await provider.set_rate_limit(CALLS, WINDOW.total_seconds())
        config = fast_settings(settings, provider.url).model_copy(
            update={
                "poll_interval_live": POLL,
                "poll_interval_idle": POLL,
                "reconcile_interval": timedelta(seconds=2),
                "watch_heartbeat_timeout": timedelta(seconds=5),
                "provider_hourly_budget": CALLS,
                "provider_budget_window": WINDOW,
            }
        )
        handles = [await start_match(temporal_client, config, int(key)) for key in outcomes]
        async with worker_processes(config, tmp_path, 1) as workers:
            await provider.step_through(times, polls_per_step=1, timeout=60)
            ending = asyncio.gather(*(handle.result() for handle in handles))
            results = await asyncio.wait_for(ending, 90)
            stretch = await workers[0].metric(STRETCH)
            said = workers[0].logged(
                "the provider budget cannot pay for POLL_INTERVAL_LIVE; live matches are polled slower"
            )
        limit = await provider.rate_limit()

    assert limit["refused"] == 0, f"the provider answered {limit['refused']} calls with a 429"
    assert {result.state.value for result in results} == {"finished"}
    for fixture_key, outcome in outcomes.items():
        stored = await stored_outcome(database_url, int(fixture_key))
        assert stored["events"] == sorted(outcome["events"]), fixture_key
        assert stored["retracted"] == sorted(outcome["retracted"]), fixture_key
        assert stored["score"] == outcome["score"], fixture_key
    assert stretch == pytest.approx(4.0), "0.1 s configured, 0.4 s paid for (360 s / 900 board calls)"
    assert len(said) == 1 and said[0]["polled_every"] == pytest.approx(0.4)
