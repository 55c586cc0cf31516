"""The API answers liveness always, readiness only with its dependencies, and errors in one shape."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from api.app import create_app
from devkit.devstack.ports import free_port
from scoreline.settings import Settings
from tests.support.http import serve


@pytest.fixture
async def api_url(settings: Settings) -> AsyncIterator[str]:
    async with serve(create_app(settings)) as url:
        yield url


async def test_healthz_and_readyz_with_every_dependency_up(api_url: str) -> None:
    """With Postgres, Redis and Temporal reachable, /readyz is 200 and names each check ok."""
    async with httpx.AsyncClient(base_url=api_url) as client:
        assert (await client.get("/healthz")).json() == {"status": "ok"}
        ready = await client.get("/readyz")
    assert ready.status_code == 200
    assert ready.json() == {"status": "ready", "checks": {"postgres": "ok", "redis": "ok", "temporal": "ok"}}


async def test_readyz_names_the_dependency_that_is_down(settings: Settings) -> None:
    """Redis unreachable: /healthz stays 200, /readyz is 503 and says which check failed."""
    broken = settings.model_copy(update={"redis_url": f"redis://127.0.0.1:{free_port()}/0"})
    async with serve(create_app(broken)) as url, httpx.AsyncClient(base_url=url) as client:
        assert (await client.get("/healthz")).status_code == 200
        ready = await client.get("/readyz")
    assert ready.status_code == 503
    body = ready.json()
    assert body["status"] == "not_ready"
    assert body["checks"]["postgres"] == "ok"
    assert body["checks"]["temporal"] == "ok"
    assert body["checks"]["redis"] == "failed"


async def test_unknown_route_gets_the_error_body(api_url: str) -> None:
    """A 404 is machine-readable: {"error": {"code": "not_found", ...}}."""
    async with httpx.AsyncClient(base_url=api_url) as client:
        response = await client.get("/v1/nothing-here")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


async def test_trace_id_comes_from_traceparent_or_is_made(api_url: str) -> None:
    """A valid W3C traceparent sets the trace id (echoed in X-Trace-Id); otherwise a fresh one is made."""
    trace = "4bf92f3577b34da6a3ce929d0e0e4736"
    async with httpx.AsyncClient(base_url=api_url) as client:
        given = await client.get("/healthz", headers={"traceparent": f"00-{trace}-00f067aa0ba902b7-01"})
        fresh = await client.get("/healthz", headers={"traceparent": "garbage"})
    assert given.headers["x-trace-id"] == trace
    assert len(fresh.headers["x-trace-id"]) == 32
    assert fresh.headers["x-trace-id"] != trace
