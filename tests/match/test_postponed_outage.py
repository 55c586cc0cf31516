"""A provider outage while a match is postponed does not fail its workflow (trust issue, hole 4).

A postponed match re-fetches its fixture every `POSTPONED_RECHECK_INTERVAL` for a new start time.
That fetch gives up after about 15 minutes of errors; its `ActivityError` used to fail the run,
after which the rescheduled match was never watched. Now the failed recheck is logged and the
next one comes an interval later.

Runs on the time-skipping server: the recheck intervals and the fetch's retries pass in moments.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowExecutionStatus
from temporalio.testing import WorkflowEnvironment

from scoreline.settings import Settings
from tests.match.harness import fast_settings, start_match, stored_outcome
from tests.match.recordings import POSTPONED_AT, RESCHEDULED_AT, postponed_then_rescheduled
from tests.support.provider import expected, line_times, running_provider
from tests.support.waiting import eventually
from tests.support.worker import running_worker

pytestmark = pytest.mark.timeout(240)

FIXTURE_ID = 81000001
END_OF_RECORDING = 10_000.0


async def test_a_postponed_match_survives_failed_rechecks_and_plays_once_rescheduled(
    settings: Settings, time_skipping_env: WorkflowEnvironment, database_url: str, tmp_path: Path
) -> None:
    """Postponed, then the provider answers 503 until a recheck has given up; the run keeps going,
    and once the provider is back with the match rescheduled, it plays to the recorded result. On
    the main of 2026-12-01 the first failed recheck failed the run."""
    client = time_skipping_env.client
    path = postponed_then_rescheduled(tmp_path)
    async with running_provider([path], t=0.0) as provider:
        config = fast_settings(settings, provider.url).model_copy(
            update={"temporal_address": client.service_client.config.target_host}
        )
        async with running_worker(client, config):
            handle = await start_match(client, config, FIXTURE_ID)
            await provider.step_through([POSTPONED_AT], polls_per_step=4)
            await provider.fault(kind="status", status=503, duration=3600)

            async def a_recheck_gave_up() -> bool:
                history = await handle.fetch_history()
                return any(e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED for e in history.events)

            await eventually(a_recheck_gave_up, within=120, every=0.5)
            assert (await handle.describe()).status == WorkflowExecutionStatus.RUNNING
            (await provider.admin.delete("/_sim/faults")).raise_for_status()
            await provider.step_through([RESCHEDULED_AT])
            later = [t for t in line_times([path]) if t > RESCHEDULED_AT]
            await provider.step_through([*later, END_OF_RECORDING], timeout=60)
            outcome = await handle.result()
    recorded = expected("football-basic")[str(FIXTURE_ID)]
    assert (outcome.state.value, outcome.home, outcome.away) == (
        "finished",
        recorded["score"]["home"],
        recorded["score"]["away"],
    )
    stored = await stored_outcome(database_url, FIXTURE_ID)
    assert stored["event_entries"] == [1] and stored["gapless"]
