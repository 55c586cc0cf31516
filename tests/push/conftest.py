"""Push fixtures: the APNs simulator (real HTTP/2 over TLS), settings aimed at it, the sender's parts.

One simulator for the session, started the way `tests/apns_sim` starts it; its journal and faults
are cleared before each test. Temporal and Postgres are the suite's real ones (`tests/conftest.py`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import timedelta

import asyncpg
import pytest
import pytest_asyncio

from activities.push.apns import ApnsClient, ApnsConfig
from activities.push.delivery import SendPolicy
from activities.push.fanout import FanoutConfig
from scoreline.db.urls import asyncpg_dsn
from scoreline.settings import Settings
from tests.push.simulator import PushSim, running_push_sim

FAST_POLICY = SendPolicy(max_attempts=8, throttle_backoff=0.05, error_backoff=0.05, max_backoff=0.5)
"""Real backoff shape, test-sized delays."""


@pytest_asyncio.fixture(scope="session")
async def push_sim_session(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[PushSim]:
    async with running_push_sim(tmp_path_factory.mktemp("push-apns-sim")) as sim:
        yield sim


@pytest_asyncio.fixture
async def sim(push_sim_session: PushSim) -> PushSim:
    """The shared simulator with an empty journal and no faults."""
    await push_sim_session.reset()
    return push_sim_session


@pytest.fixture
def push_settings(settings: Settings, sim: PushSim) -> Settings:
    """This test's database, Redis and Temporal, and APNs = the simulator (trusted by its CA file)."""
    return settings.model_copy(
        update={
            "apns_url": sim.apns_url,
            "apns_ca_file": sim.cert_path,
            "apns_key_path": sim.p8_path,
            "apns_team_id": sim.config.team_id,
            "apns_key_id": sim.config.key_id,
            "apns_topic": sim.config.topic,
            "apns_request_timeout": timedelta(seconds=5),
            "la_min_update_interval": timedelta(milliseconds=500),
        }
    )


@pytest.fixture
def fanout_config(push_settings: Settings) -> FanoutConfig:
    # A claimant that marked its claims more than a second ago is taken for dead: the tests that
    # kill an attempt mean it, and one that pauses it sets its own grace.
    return replace(
        FanoutConfig.from_settings(push_settings), policy=FAST_POLICY, heartbeat_every=0.5, claimant_grace=1.0
    )


@pytest_asyncio.fixture
async def apns_client(push_settings: Settings) -> AsyncIterator[ApnsClient]:
    client = ApnsClient(ApnsConfig.from_settings(push_settings))
    try:
        yield client
    finally:
        await client.aclose()


@pytest_asyncio.fixture
async def db(database_url: str) -> AsyncIterator[asyncpg.Connection]:
    """A plain connection for seeding rows and reading outcomes."""
    connection = await asyncpg.connect(asyncpg_dsn(database_url))
    try:
        yield connection
    finally:
        await connection.close()
