"""The command road when things break: resends across worker restarts, continue-as-new, a killed
API process and a database outage. Every case ends with the command in the log exactly once."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from datetime import timedelta

import asyncpg
import httpx
import pytest
from sqlalchemy.engine import make_url
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from devkit.devstack.ports import free_port
from devkit.devstack.tcp_proxy import CuttableProxy
from scoreline.db.urls import asyncpg_dsn
from scoreline.settings import Settings
from scoreline.temporal.match_runs import match_workflow_id
from tests.commands.harness import Road, road_settings, running_api, spread_fixture_ids
from tests.support.replay import replays_and_keep
from tests.support.waiting import eventually
from tests.support.worker import running_worker
from workflows.match import MatchWorkflow

GOAL = {"side": "home", "minute": 30, "player_id": 110, "kind": "open_play"}
RESEND_HEAD_START = 1.0
"""Seconds the resend has to reach the API (one key read) before the database comes back."""


async def test_a_resend_after_a_worker_restart_is_a_duplicate_and_the_history_replays(
    settings: Settings, database_url: str, temporal_client: Client
) -> None:
    await spread_fixture_ids(database_url)
    tuned = road_settings(settings)
    async with running_api(tuned, database_url) as road:
        fixture_id = await road.fixture()
        token = await road.desk(fixture_id)
        key = road.key()
        async with running_worker(temporal_client, tuned):
            await road.send(token, fixture_id, "football.period_start", {"period": "1H"})
            first = await road.send(token, fixture_id, "football.goal", GOAL, saw=1, key=key)
        async with running_worker(temporal_client, tuned):
            again = await road.send(token, fixture_id, "football.goal", GOAL, saw=1, key=key)
            # A workflow task the old worker held goes to the new one only after Temporal's sticky
            # queue timeout (10 s): meanwhile the desk hears `try_again` and resends the same key.
            later_key = road.key()
            for _ in range(5):
                later = await road.send(
                    token, fixture_id, "football.corner", {"side": "away", "minute": 31}, saw=2, key=later_key
                )
                if later.json()["outcome"] != "try_again":
                    break
        history = await temporal_client.get_workflow_handle(match_workflow_id(fixture_id)).fetch_history()

    assert first.json() == {"outcome": "accepted", "seq": 2}
    assert again.json()["outcome"] == "duplicate"
    assert json.dumps(again.json()["answer"], separators=(",", ":")).encode() == first.content
    assert later.json() == {"outcome": "accepted", "seq": 3}
    assert [row["seq"] for row in await road.log(fixture_id)] == [1, 2, 3]
    await replays_and_keep("match-desk-commands", [MatchWorkflow], history)


async def test_a_resend_after_continue_as_new_is_a_duplicate_and_the_match_carries_on(
    settings: Settings, database_url: str, short_history_env: WorkflowEnvironment
) -> None:
    await spread_fixture_ids(database_url)
    client = short_history_env.client
    tuned = road_settings(
        settings,
        temporal_address=client.service_client.config.target_host,
        temporal_namespace=client.namespace,
    )
    async with running_worker(client, tuned), running_api(tuned, database_url) as road:
        fixture_id = await road.fixture()
        token = await road.desk(fixture_id)
        handle = client.get_workflow_handle(match_workflow_id(fixture_id))
        await road.send(token, fixture_id, "football.period_start", {"period": "1H"})
        key = road.key()
        first = await road.send(token, fixture_id, "football.goal", GOAL, saw=1, key=key)
        first_run = (await handle.describe()).run_id
        saw = 2
        while (await handle.describe()).run_id == first_run:
            note = await road.send(token, fixture_id, "match.commentary", {"text": f"note {saw}"})
            assert note.json()["outcome"] == "accepted"
            saw = note.json()["seq"]
            assert saw < 60, "the workflow never continued as new"

        again = await road.send(token, fixture_id, "football.goal", GOAL, saw=1, key=key)
        second_goal = await road.send(token, fixture_id, "football.goal", {**GOAL, "minute": 40}, saw=saw)

    assert again.json()["outcome"] == "duplicate"
    assert json.dumps(again.json()["answer"], separators=(",", ":")).encode() == first.content
    assert second_goal.json() == {"outcome": "accepted", "seq": saw + 1}
    (board,) = await road.rows("SELECT home_score FROM scoreboard WHERE fixture_id = $1", fixture_id)
    assert board["home_score"] == 2
    assert len(await road.rows("SELECT 1 FROM timeline_item WHERE command_id = $1", key)) == 1


def _api_process(settings: Settings, port: int) -> subprocess.Popen[bytes]:
    environment = {
        **os.environ,
        "DATABASE_URL": settings.require_database_url(),
        "REDIS_URL": settings.require_redis_url(),
        "TEMPORAL_ADDRESS": settings.temporal_address,
        "TEMPORAL_NAMESPACE": settings.temporal_namespace,
        "TEMPORAL_TASK_QUEUE": settings.temporal_task_queue,
        "COMMAND_ANSWER_TIMEOUT": "30s",
        "LOG_FORMAT": "json",
    }
    return subprocess.Popen(
        [sys.executable, "-m", "scoreline", "api", "--port", str(port)],
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


async def _lock_waiters(database_url: str) -> int:
    db = await asyncpg.connect(asyncpg_dsn(database_url))
    try:
        value = await db.fetchval(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock'",
            make_url(database_url).database,
        )
    finally:
        await db.close()
    return int(value)


async def test_the_api_killed_before_answering_the_resend_is_a_duplicate(
    road: Road, settings: Settings, database_url: str
) -> None:
    fixture_id = await road.fixture()
    token = await road.desk(fixture_id)
    await road.send(token, fixture_id, "football.period_start", {"period": "1H"})
    port = free_port()
    api = _api_process(road_settings(settings), port)
    key = road.key()
    body = {"key": key, "code": "football.goal", "input": GOAL, "saw": 1}
    blocker = await asyncpg.connect(asyncpg_dsn(database_url))
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
            await eventually(lambda: _healthy(http), within=30)
            # Hold the fixture lock: the commit waits on it, so the update is sent but not answered.
            transaction = blocker.transaction()
            await transaction.start()
            await blocker.execute("SELECT 1 FROM fixture WHERE id = $1 FOR UPDATE", fixture_id)
            sent = asyncio.create_task(
                http.post(
                    f"/v1/matches/{fixture_id}/commands",
                    json=body,
                    headers={"Authorization": f"Bearer {token}"},
                )
            )
            await eventually(lambda: _lock_waiters(database_url), within=30)
            api.send_signal(signal.SIGKILL)
            api.wait(timeout=10)
            with pytest.raises(httpx.TransportError):
                await sent
            await transaction.rollback()
    finally:
        await blocker.close()
        if api.poll() is None:
            api.kill()

    await eventually(lambda: _stored(road, key), within=30)
    resend = await road.post(token, fixture_id, body)

    assert resend.json() == {"outcome": "duplicate", "answer": {"outcome": "accepted", "seq": 2}}
    assert [row["command_id"] for row in await road.log(fixture_id)][1:] == [key]


# Cutting live connections mid-transaction leaves a peer's socket to the garbage collector now and
# then (its close races the abort); that ResourceWarning is the outage this test makes, not a leak
# of the code under test.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
async def test_the_commit_database_down_gives_try_again_and_the_resend_is_accepted_once(
    settings: Settings, database_url: str, temporal_client: Client
) -> None:
    await spread_fixture_ids(database_url)
    proxy = CuttableProxy.to_database(database_url)
    await proxy.start()
    tuned = road_settings(settings)
    through_proxy = tuned.model_copy(update={"database_url": proxy.database_url(database_url)})
    patient = tuned.model_copy(update={"command_answer_timeout": timedelta(seconds=20)})
    async with (
        running_worker(temporal_client, through_proxy),
        running_api(tuned, database_url) as road,
        running_api(patient, database_url) as patient_road,
    ):
        fixture_id = await road.fixture()
        token = await road.desk(fixture_id)
        await road.send(token, fixture_id, "football.period_start", {"period": "1H"})
        key = road.key()

        await proxy.cut()
        first = await road.send(token, fixture_id, "football.goal", GOAL, saw=1, key=key)
        # The resend goes out while the worker's database is still cut, so it finds no stored answer
        # and attaches to the update still in flight; only then does the commit get through. Sent
        # after the reconnect instead, it raced the commit's retry and was now and then answered
        # `duplicate` (also right, but not what this test is about: the attach).
        resending = asyncio.create_task(
            patient_road.send(token, fixture_id, "football.goal", GOAL, saw=1, key=key)
        )
        await asyncio.sleep(RESEND_HEAD_START)
        await proxy.start()
        resend = await resending
        await proxy.cut()

    assert first.status_code == 503
    assert first.headers["retry-after"] == "1"
    assert first.json()["outcome"] == "try_again"
    assert resend.json() == {"outcome": "accepted", "seq": 2}
    assert [row["command_id"] for row in await road.log(fixture_id)][1:] == [key]
    assert len(await road.rows("SELECT 1 FROM command WHERE command_id = $1", key)) == 1


async def _healthy(http: httpx.AsyncClient) -> bool:
    try:
        return (await http.get("/healthz")).status_code == 200
    except httpx.TransportError:
        return False


async def _stored(road: Road, key: str) -> bool:
    return bool(await road.rows("SELECT 1 FROM command WHERE command_id = $1", key))


async def test_temporal_unreachable_is_try_again_and_writes_nothing(
    settings: Settings, database_url: str
) -> None:
    await spread_fixture_ids(database_url)
    nowhere = road_settings(settings, temporal_address=f"127.0.0.1:{free_port()}")
    async with running_api(nowhere, database_url) as road:
        fixture_id = await road.fixture()
        token = await road.desk(fixture_id)

        response = await road.send(token, fixture_id, "football.period_start", {"period": "1H"})

    assert response.status_code == 503
    assert response.headers["retry-after"] == "1"
    assert response.json()["outcome"] == "try_again"
    assert await road.rows("SELECT 1 FROM command WHERE fixture_id = $1", fixture_id) == []
