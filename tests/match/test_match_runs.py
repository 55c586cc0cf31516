"""One way to start `match-{id}`, from the database's facts (trust issue, hole 5).

A run that ended (a match postponed for too long) is followed by a new one when the fixture is
rescheduled; a desk command on a match that is over starts a run that decides it against the
stored state and ends, without polling the provider or starting Live Activities again.
"""

from __future__ import annotations

import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from domain.fixture_sync import FixtureSyncInput, FixtureSyncResult
from scoreline.settings import Settings
from scoreline.temporal.match_runs import match_workflow_id
from tests.commands.harness import road_settings, running_api
from tests.match.harness import end_leftover_run, fast_settings, start_match, stored_outcome
from tests.match.recordings import POSTPONED_AT, RESCHEDULED_AT, postponed_then_rescheduled
from tests.support.provider import expected, line_times, running_provider
from tests.support.replay import replays_and_keep
from tests.support.worker import running_worker
from workflows.fixture_sync import FixtureSyncWorkflow
from workflows.match import MatchWorkflow

pytestmark = pytest.mark.timeout(180)

FIXTURE_ID = 81000001
END_OF_RECORDING = 10_000.0


async def _sync(client: Client, queue: str) -> FixtureSyncResult:
    return await client.execute_workflow(
        FixtureSyncWorkflow.run, FixtureSyncInput(), id=f"sync-{uuid.uuid4().hex[:8]}", task_queue=queue
    )


async def test_a_fixture_rescheduled_after_its_run_gave_up_is_watched_again(
    settings: Settings, temporal_client: Client, database_url: str, tmp_path: Path
) -> None:
    """The sync starts the match; it is postponed and its run gives up and completes; rescheduled,
    the next sync starts a new run, which plays the match to the recorded result. On the main of
    2026-12-01 the second sync refused (`ALLOW_DUPLICATE_FAILED_ONLY`: the first run completed) and
    the rescheduled match was never watched."""
    path = postponed_then_rescheduled(tmp_path)
    await end_leftover_run(temporal_client, FIXTURE_ID)
    async with running_provider([path], t=0.0) as provider:
        config = fast_settings(settings, provider.url).model_copy(
            update={
                "postponed_recheck_interval": timedelta(milliseconds=200),
                "postponed_give_up": timedelta(seconds=1),
            }
        )
        queue = config.temporal_task_queue
        async with running_worker(temporal_client, config):
            first = await _sync(temporal_client, queue)
            assert first.started == (FIXTURE_ID,)
            handle = temporal_client.get_workflow_handle_for(MatchWorkflow.run, match_workflow_id(FIXTURE_ID))
            first_run = (await handle.describe()).run_id
            await provider.step_through([POSTPONED_AT], polls_per_step=4)
            gave_up = await handle.result()
            assert gave_up.state.value == "postponed"

            await provider.set_clock(RESCHEDULED_AT)
            second = await _sync(temporal_client, queue)
            assert second.started == (FIXTURE_ID,), "the rescheduled fixture got no new run"
            rerun = temporal_client.get_workflow_handle_for(MatchWorkflow.run, match_workflow_id(FIXTURE_ID))
            assert (await rerun.describe()).run_id != first_run
            later = [t for t in line_times([path]) if t > RESCHEDULED_AT]
            await provider.step_through([*later, END_OF_RECORDING])
            outcome = await rerun.result()
            first_history = await temporal_client.get_workflow_handle(
                match_workflow_id(FIXTURE_ID), run_id=first_run
            ).fetch_history()
            await replays_and_keep(
                "match-postponed-rescheduled", [MatchWorkflow], first_history, await rerun.fetch_history()
            )
    recorded = expected("football-basic")[str(FIXTURE_ID)]
    assert (outcome.state.value, outcome.home, outcome.away) == (
        "finished",
        recorded["score"]["home"],
        recorded["score"]["away"],
    )
    stored = await stored_outcome(database_url, FIXTURE_ID)
    assert stored["event_entries"] == [1] and stored["gapless"]


def _activity_types(events: list[Any]) -> list[str]:
    return [
        event.activity_task_scheduled_event_attributes.activity_type.name
        for event in events
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
    ]


async def test_a_command_on_a_match_that_is_over_is_decided_on_the_stored_state_without_polling(
    settings: Settings, temporal_client: Client, database_url: str
) -> None:
    """After full time (the run completed), an operator's commentary is accepted at the next seq;
    the run it starts opens no watch and no fetch (the provider hears nothing), starts no Live
    Activity and ends once the command is answered, the stored match unchanged. On the main of
    2026-12-01 that run started from a blank state: it polled the provider again, took the match
    for a fresh kick-off and waited out another settle period."""
    async with running_provider(["football-basic"]) as provider:
        config = road_settings(fast_settings(settings, provider.url))
        async with running_worker(temporal_client, config), running_api(config, database_url) as road:
            handle = await start_match(temporal_client, config, FIXTURE_ID)
            await provider.step_through([*line_times(["football-basic"]), END_OF_RECORDING])
            await handle.result()
            before = await stored_outcome(database_url, FIXTURE_ID)
            served = await provider.requests_served()

            response = await road.send(
                road.operator_token,
                FIXTURE_ID,
                "match.commentary",
                {"text": "a late word from the press box"},
                saw=before["version"],
            )
            assert response.status_code == 200, response.text
            assert response.json() == {"outcome": "accepted", "seq": before["version"] + 1}
            rerun = temporal_client.get_workflow_handle_for(MatchWorkflow.run, match_workflow_id(FIXTURE_ID))
            outcome = await rerun.result()
            history = await rerun.fetch_history()
            assert await provider.requests_served() == served, "the run polled the provider again"
            await replays_and_keep("match-command-after-full-time", [MatchWorkflow], history)
    assert (outcome.state.value, outcome.home, outcome.away) == ("finished", 3, 1)
    assert _activity_types(list(history.events)) == [], "the run scheduled a watch, fetch or push"
    after = await stored_outcome(database_url, FIXTURE_ID)
    assert (after["score"], after["state"], after["version"]) == (
        before["score"],
        before["state"],
        before["version"] + 1,
    )
