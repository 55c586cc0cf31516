"""`/readyz` tells anonymous callers only which check failed; the reason goes to the log."""

from __future__ import annotations

import asyncio

import httpx
import structlog
from structlog.testing import capture_logs

from api.app import create_app
from devkit.devstack.ports import free_port
from scoreline.settings import Settings
from tests.support.http import serve


async def test_a_refused_dependency_is_failed_without_its_error_text(settings: Settings) -> None:
    """Regression: /readyz answered the raw exception text (hosts, ports, driver messages) to anyone;
    now the check says only `failed` and the reason is logged. Fails on main before the fix."""
    port = free_port()
    broken = settings.model_copy(update={"redis_url": f"redis://127.0.0.1:{port}/0"})
    with capture_logs([structlog.contextvars.merge_contextvars]) as logs:
        async with serve(create_app(broken)) as url, httpx.AsyncClient(base_url=url) as client:
            ready = await client.get("/readyz")

    assert ready.status_code == 503
    assert ready.json() == {
        "status": "not_ready",
        "checks": {"postgres": "ok", "redis": "failed", "temporal": "ok"},
    }
    assert str(port) not in ready.text
    (line,) = [entry for entry in logs if entry["event"] == "readyz.check_failed"]
    assert line["check"] == "redis"
    assert str(port) in line["error"]
    assert line["trace_id"] == ready.headers["x-trace-id"]


async def test_a_dependency_that_never_answers_is_timeout(settings: Settings) -> None:
    """A Redis that accepts connections and stays silent: the check is `timeout`, not a hang."""
    connections: list[asyncio.StreamWriter] = []

    async def silent(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(writer)

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    silent_redis = settings.model_copy(update={"redis_url": f"redis://127.0.0.1:{port}/0"})
    try:
        with capture_logs() as logs:
            async with serve(create_app(silent_redis)) as url, httpx.AsyncClient(base_url=url) as client:
                ready = await client.get("/readyz", timeout=10)
    finally:
        for writer in connections:
            writer.close()
        server.close()
        await server.wait_closed()

    assert ready.status_code == 503
    assert ready.json()["checks"] == {"postgres": "ok", "redis": "timeout", "temporal": "ok"}
    assert [entry["check"] for entry in logs if entry["event"] == "readyz.check_failed"] == ["redis"]
