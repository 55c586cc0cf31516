"""Push fixtures: the APNs simulator (real HTTP/2 over TLS), settings aimed at it, the sender's parts.

One simulator for the session, started the way `tests/apns_sim` starts it; its journal and faults
are cleared before each test. Temporal and Postgres are the suite's real ones (`tests/conftest.py`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import timedelta

import pytest
import pytest_asyncio

from activities.push.apns import ApnsClient, ApnsConfig
from activities.push.drain import DrainConfig
from scoreline.settings import Settings
from tests.push.simulator import PushSim, running_push_sim


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


def fast_drain(config: DrainConfig) -> DrainConfig:
    """`config` with test-sized delays (the real shape): a lease lapses 1 s + the request timeout +
    the 2 s margin after a take, so a killed drainer's rows are taken again soon; a start in doubt
    waits 1 s; a backoff is at most 0.5 s."""
    return replace(
        config,
        lease_s=config.request_timeout + 3.0,
        start_grace_s=1.0,
        poll_s=0.1,
        backoff_first_s=0.05,
        backoff_cap_s=0.5,
    )


@pytest.fixture
def drain_config(push_settings: Settings) -> DrainConfig:
    """The drainer's settings for this test's simulator, with test-sized delays (`fast_drain`)."""
    return fast_drain(DrainConfig.from_settings(push_settings))


@pytest.fixture
def fast_worker_drain(monkeypatch: pytest.MonkeyPatch) -> None:
    """Workers started in this test's process (`running_worker`) drain with `fast_drain`'s delays."""
    real = DrainConfig.from_settings

    def shrunk(settings: Settings) -> DrainConfig:
        return fast_drain(real(settings))

    monkeypatch.setattr(DrainConfig, "from_settings", shrunk)


@pytest_asyncio.fixture
async def apns_client(push_settings: Settings) -> AsyncIterator[ApnsClient]:
    client = ApnsClient(ApnsConfig.from_settings(push_settings))
    try:
        yield client
    finally:
        await client.aclose()
