"""`GET /v1/ops/alerts` over real HTTP, reading a real Alertmanager (the repository's routing)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from api.app import create_app
from devkit.devstack import monitoring
from devkit.devstack.ports import free_port
from scoreline.accounts.store import create_desk, create_operator
from scoreline.settings import Settings
from tests.readmodel.rows import MatchLog
from tests.support.http import serve
from tests.support.waiting import eventually

BREAKER = {"alertname": "ProviderBreakerOpen", "upstream": "football", "severity": "page"}


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
async def alertmanager(tmp_path: Path) -> AsyncIterator[str]:
    binaries = monitoring.find_binaries()
    assert binaries is not None, "Alertmanager is needed: `make ops-tools` installs it"
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    config = monitoring.write_config(tmp_path / "alertmanager.yml", monitoring.alertmanager_config(None))
    child = monitoring.alertmanager_process(
        binaries.alertmanager, config, tmp_path / "data", port, tmp_path / "alertmanager.log"
    )
    await child.start()
    try:
        async with httpx.AsyncClient(timeout=2) as http:

            async def ready() -> bool:
                try:
                    return (await http.get(f"{url}/-/ready")).status_code == 200
                except httpx.HTTPError:
                    return False

            await eventually(ready, within=30, every=0.1)
        yield url
    finally:
        await child.stop()


async def _api(database_url: str, redis_url: str, alertmanager_url: str) -> Settings:
    return Settings(database_url=database_url, redis_url=redis_url, alertmanager_url=alertmanager_url)


async def test_an_operator_sees_what_is_firing_with_its_runbook(
    engine: AsyncEngine, database_url: str, redis_url: str, alertmanager: str
) -> None:
    _, operator = await create_operator(engine, "ops")
    await MatchLog.create(engine, 81000001)
    _, desk = await create_desk(engine, "north", [81000001])
    started = datetime.now(UTC) - timedelta(minutes=2)
    posted = {
        "labels": BREAKER,
        "annotations": {"summary": "Provider football: breaker open", "runbook": "check the provider"},
        "startsAt": started.isoformat(),
    }
    async with httpx.AsyncClient(timeout=5) as http:
        assert (await http.post(f"{alertmanager}/api/v2/alerts", json=[posted])).status_code == 200
    settings = await _api(database_url, redis_url, alertmanager)
    async with serve(create_app(settings)) as url, httpx.AsyncClient(base_url=url, timeout=5) as api:

        async def listed() -> list[dict[str, object]] | None:
            response = await api.get("/v1/ops/alerts", headers=bearer(operator))
            assert response.status_code == 200, response.text
            body = response.json()
            assert body["source"] == "alertmanager"
            return body["alerts"] or None

        alerts = await eventually(listed, within=10)
        assert len(alerts) == 1
        alert = alerts[0]
        assert alert["name"] == "ProviderBreakerOpen"
        assert (alert["severity"], alert["summary"], alert["runbook"]) == (
            "page",
            "Provider football: breaker open",
            "check the provider",
        )
        assert alert["labels"] == BREAKER
        assert abs(datetime.fromisoformat(str(alert["starts_at"])) - started) < timedelta(seconds=1)

        refused = await api.get("/v1/ops/alerts", headers=bearer(desk))
        assert refused.status_code == 403 and refused.json()["error"]["code"] == "operators_only"
        assert (await api.get("/v1/ops/alerts")).status_code == 401


async def test_without_alertmanager_the_list_says_so_and_an_unreachable_one_is_503(
    engine: AsyncEngine, database_url: str, redis_url: str
) -> None:
    _, operator = await create_operator(engine, "ops")
    none = await _api(database_url, redis_url, "")
    async with serve(create_app(none)) as url, httpx.AsyncClient(base_url=url, timeout=5) as api:
        response = await api.get("/v1/ops/alerts", headers=bearer(operator))
        assert response.status_code == 200 and response.json() == {"source": "none", "alerts": []}
    gone = await _api(database_url, redis_url, f"http://127.0.0.1:{free_port()}")
    async with serve(create_app(gone)) as url, httpx.AsyncClient(base_url=url, timeout=5) as api:
        response = await api.get("/v1/ops/alerts", headers=bearer(operator))
        assert response.status_code == 503
        assert response.json()["error"]["code"] == "alertmanager_unavailable"
