"""The demo's simulated phones on the real stack: they follow a desk-scored match, get their Live
Activities started at kick-off through the APNs simulator, and the monitor counts the pushes."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from temporalio.client import Client

from devkit.devstack.demo_desk import create_desk_match
from devkit.devstack.demo_phones import PHONES, run_demo_phones
from devkit.devstack.monitor import _pushes_delivered
from scoreline.settings import Settings
from tests.commands.harness import Road, road_settings, running_api, spread_fixture_ids
from tests.push.simulator import PushSim, running_push_sim
from tests.support.waiting import eventually
from tests.support.worker import running_worker

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
async def sim(tmp_path: Path) -> AsyncIterator[PushSim]:
    async with running_push_sim(tmp_path / "apns") as running:
        yield running


@pytest.fixture
async def road(
    settings: Settings, database_url: str, temporal_client: Client, sim: PushSim
) -> AsyncIterator[Road]:
    """API + worker, the worker's APNs sender aimed at the simulator."""
    await spread_fixture_ids(database_url)
    tuned = road_settings(
        settings,
        apns_url=sim.apns_url,
        apns_ca_file=sim.cert_path,
        apns_key_path=sim.p8_path,
        apns_team_id=sim.config.team_id,
        apns_key_id=sim.config.key_id,
        apns_topic=sim.config.topic,
    )
    async with running_worker(temporal_client, tuned), running_api(tuned, database_url) as road:
        yield road


async def test_the_phones_follow_the_match_and_the_monitor_counts_their_pushes(
    road: Road, sim: PushSim
) -> None:
    """Before the fix the monitor read `by_status` at the top of the simulator's stats (it sits
    under `pushes`) and showed `pushes=0` for every demo line, however many went out."""
    match = await create_desk_match(road.engine)
    admin = str(sim.admin.base_url).rstrip("/")
    phones = asyncio.create_task(run_demo_phones(road.url, admin, lambda: [match.fixture_id]))
    try:
        follows = "SELECT count(*) AS n FROM follow WHERE fixture_id = $1"
        await eventually(lambda: _count(road, follows, match.fixture_id, PHONES), within=30)
        kickoff = await road.send(match.token, match.fixture_id, "football.period_start", {"period": "1H"})
        assert kickoff.json()["outcome"] == "accepted"
        active = "SELECT count(*) AS n FROM live_activity WHERE fixture_id = $1 AND status = 'active'"
        await eventually(lambda: _count(road, active, match.fixture_id, PHONES), within=30)
        delivered = await _pushes_delivered(sim.admin, admin)
    finally:
        phones.cancel()
    assert delivered is not None and delivered >= PHONES


async def _count(road: Road, query: str, fixture_id: int, wanted: int) -> bool:
    (row,) = await road.rows(query, fixture_id)
    return int(row["n"]) >= wanted
