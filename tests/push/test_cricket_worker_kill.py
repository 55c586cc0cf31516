"""A worker killed mid-innings loses no ball and no wicket alert, and doubles neither (issue 12).

A `scoreline worker` process runs a rain-reduced T20 (`cricket-rain-reduced`) with a phone
following it; halfway through the first innings it gets SIGKILL, another worker takes the watch
over, and the match plays out. Every ball must be logged once, and the phone must have been alerted
once per wicket: the wickets the dead worker committed but never reported are pushed from the log.
"""

from __future__ import annotations

import asyncio
import signal
import sys
import uuid
from pathlib import Path

import asyncpg
import pytest
from temporalio.client import Client

from domain.cricket.board import cricket_fixture_id
from domain.probe import WorkerProbeInput
from scoreline.settings import Settings
from scoreline.temporal.match_runs import match_workflow_id
from tests.match.cricket import cricket_settings, recorded_lines, start_cricket_match
from tests.match.harness import stored_outcome
from tests.push.phones import phones
from tests.push.screen import every_activity_ended
from tests.push.simulator import PushSim
from tests.push.test_cricket_match import insert_cricket_fixture, moments
from tests.push.test_match_lifecycle import device_api
from tests.support.provider import expected, running_provider
from tests.support.waiting import eventually
from tests.support.worker import running_worker, worker_process_env
from workflows.match import MatchWorkflow
from workflows.probe import WorkerProbeWorkflow

pytestmark = pytest.mark.timeout(300)

NAME = "cricket-rain-reduced"
END_OF_RECORDING = 1_000_000.0


async def test_killed_worker_mid_innings_loses_and_doubles_nothing(
    push_settings: Settings,
    temporal_client: Client,
    database_url: str,
    sim: PushSim,
    db: asyncpg.Connection,
    tmp_path: Path,
) -> None:
    """SIGKILL mid-innings: every ball stored once, one alert per wicket, one start, one end."""
    [(provider_key, outcome)] = expected(NAME).items()
    fixture_id = cricket_fixture_id(int(provider_key))
    await insert_cricket_fixture(db, fixture_id)
    lines = recorded_lines(NAME)
    times = [float(line["t"]) for line in lines]
    opening = next(i for i, line in enumerate(lines) if line["fixture"]["status"] == "1st Innings")
    first_innings_end = next(
        i for i, line in enumerate(lines) if line["fixture"]["status"] == "Innings Break"
    )
    kill_at = (opening + first_innings_end) // 2
    async with running_provider([NAME]) as provider:
        config = cricket_settings(push_settings, provider)
        async with device_api(config) as api:
            [phone] = await phones(api, sim, 1, prefix="kill-")
            await phone.follow(fixture_id)
            log = (tmp_path / "worker.log").open("w")
            first = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "scoreline",
                "worker",
                env=worker_process_env(config),
                stdout=log,
                stderr=log,
            )
            try:
                await asyncio.wait_for(
                    temporal_client.execute_workflow(
                        WorkerProbeWorkflow.run,
                        WorkerProbeInput(),
                        id=f"probe-{uuid.uuid4()}",
                        task_queue=config.temporal_task_queue,
                    ),
                    60,
                )
                # The app waits for its start from when the worker is up, not from the follow: on
                # a loaded CI machine the worker took 34 s to answer its probe, longer than that wait.
                phone.run_app(fixture_id, within=60)
                await start_cricket_match(temporal_client, config, fixture_id)
                await provider.step_through(times[: opening + 1])
                await phone.activity_running()
                await provider.step_through(times[opening + 1 : kill_at])
            finally:
                first.send_signal(signal.SIGKILL)
                await first.wait()
                log.close()
            killed_at = await stored_outcome(database_url, fixture_id)
            assert killed_at["version"] > 0
            try:
                async with running_worker(temporal_client, config):
                    await provider.step_through([*times[kill_at:], END_OF_RECORDING])
                    handle = temporal_client.get_workflow_handle_for(
                        MatchWorkflow.run, match_workflow_id(fixture_id)
                    )
                    result = await asyncio.wait_for(handle.result(), 60)
                    await eventually(lambda: every_activity_ended([phone]), within=30)
            finally:
                phone.cancel()

    assert result.state.value == "finished"
    stored = await stored_outcome(database_url, fixture_id)
    assert stored["events"] == sorted(["balls", ball] for ball in outcome["balls"])
    assert stored["event_entries"] == [1], "a ball was logged twice or never"
    assert stored["gapless"]
    starts, updates = await phone.starts(), await phone.updates()
    assert [d.event for d in starts] == ["start"]
    assert [d.event for d in updates].count("end") == 1
    wickets = sum(innings["wickets"] for innings in outcome["innings"])
    assert moments(updates).count("wicket") == wickets, "a wicket alert was lost or doubled"
