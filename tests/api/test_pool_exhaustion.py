"""Every connection of the API's pool busy is a 503 `unavailable` with `Retry-After` on every
route, never a 500: the client resends, as after any store outage (design §6)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta

import httpx
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from api.app import create_app
from api.resources import Resources
from scoreline.accounts.store import create_operator
from scoreline.db.urls import sqlalchemy_url
from scoreline.settings import Settings
from tests.support.http import serve

REGISTRATION = {"install_id": "install-pool-1", "platform": "ios", "environment": "sandbox"}


@asynccontextmanager
async def _busy_pool(resources: Resources, database_url: str) -> AsyncIterator[None]:
    """Both of the API's engines swapped for a one-connection pool whose connection is held."""
    tiny = create_async_engine(sqlalchemy_url(database_url), pool_size=1, max_overflow=0, pool_timeout=0.3)
    engines = (resources.engine, resources.commands_engine)
    try:
        async with tiny.connect():
            resources.engine = resources.commands_engine = tiny
            yield
    finally:
        resources.engine, resources.commands_engine = engines
        await tiny.dispose()


async def test_an_exhausted_pool_is_503_with_retry_after_on_every_route(
    settings: Settings, database_url: str, engine: AsyncEngine
) -> None:
    """Regression: when the pool timed out (`QueuePool limit ... reached`), desks, devices and
    commands answered 500. Fails on main before the fix."""
    _, operator = await create_operator(engine, f"op-{uuid.uuid4().hex[:8]}")
    _, uncached = await create_operator(engine, f"op-{uuid.uuid4().hex[:8]}")
    auth = {"Authorization": f"Bearer {operator}"}
    app = create_app(settings)
    async with serve(app) as url, httpx.AsyncClient(base_url=url, timeout=10) as http:
        # The operator's token is now in the process's cache: the command route reaches its own read.
        assert (await http.get("/v1/console/matches", headers=auth)).status_code == 200
        async with _busy_pool(app.state.resources, database_url):
            command = await http.post(
                "/v1/matches/1/commands",
                json={"key": "k-pool-1", "code": "match.commentary", "input": {"text": "hi"}, "saw": 0},
                headers=auth,
            )
            desks = await http.get(
                "/v1/console/matches/1/desks", headers={"Authorization": f"Bearer {uncached}"}
            )
            device = await http.post("/v1/devices", json=REGISTRATION)

    for response in (desks, device):
        assert response.status_code == 503, response.text
        assert response.json()["error"]["code"] == "unavailable"
        assert response.headers["retry-after"] == "1"
    assert command.status_code == 503, command.text
    assert command.json()["outcome"] == "try_again"
    assert command.headers["retry-after"] == "1"


async def test_a_request_waits_for_a_busy_pool_no_longer_than_the_api_pool_timeout(
    settings: Settings,
) -> None:
    """A request that found every connection of the API's pool busy was held for SQLAlchemy's
    default 30 s before its 503 (past this client's 10 s); it now waits `API_DB_POOL_TIMEOUT`."""
    quick = settings.model_copy(update={"db_pool_api": 1, "api_db_pool_timeout": timedelta(seconds=0.5)})
    app = create_app(quick)
    async with serve(app) as url, httpx.AsyncClient(base_url=url, timeout=10) as http:
        engine = app.state.resources.engine
        async with engine.connect(), engine.connect():  # the pool's one connection and its overflow
            response = await http.post("/v1/devices", json=REGISTRATION)
    assert response.status_code == 503, response.text
    assert response.json()["error"]["code"] == "unavailable"
