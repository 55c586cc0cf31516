"""The API's `/metrics` over real HTTP: route templates, live clients, and the internal-port option."""

from __future__ import annotations

import socket

import httpx
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy.ext.asyncio import AsyncEngine

from api.app import create_app
from devkit.devstack.ports import free_port
from scoreline.settings import Settings
from tests.readmodel.rows import MatchLog
from tests.streams.clients import sse
from tests.support.http import serve
from tests.support.waiting import eventually

MATCH = 81000001


def _value(text: str, name: str, **labels: str) -> float | None:
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()):
                return sample.value
    return None


async def test_metrics_need_no_token_and_label_routes_by_template(
    engine: AsyncEngine, database_url: str, redis_url: str
) -> None:
    await MatchLog.create(engine, MATCH)
    settings = Settings(database_url=database_url, redis_url=redis_url)
    async with serve(create_app(settings)) as url, httpx.AsyncClient(base_url=url) as api:
        assert (await api.get(f"/v1/matches/{MATCH}")).status_code == 200
        assert (await api.get("/v1/matches/999")).status_code == 404
        async with sse(url, f"/v1/matches/{MATCH}/stream") as stream:
            await stream.next()

            async def one_sse_client() -> str | None:
                text = (await api.get("/metrics")).text
                return text if _value(text, "scoreline_stream_clients", transport="sse") == 1 else None

            text = await eventually(one_sse_client)
        handler = "/v1/matches/{fixture_id}"
        assert _value(text, "http_requests_total", handler=handler, method="GET", status="200") == 1
        assert _value(text, "http_requests_total", handler=handler, method="GET", status="404") == 1
        assert _value(text, "http_request_duration_seconds_bucket", handler=handler, le="0.1") is not None
        assert _value(text, "scoreline_outbox_lag_seconds", consumer="live-hub") is not None
        assert "/metrics" not in {
            sample.labels.get("handler")
            for family in text_string_to_metric_families(text)
            for sample in family.samples
        }


async def test_with_an_internal_address_metrics_leave_the_public_port(
    database_url: str, redis_url: str
) -> None:
    port = free_port()
    settings = Settings(
        database_url=database_url, redis_url=redis_url, api_metrics_address=f"127.0.0.1:{port}"
    )
    async with serve(create_app(settings)) as url, httpx.AsyncClient() as http:
        assert (await http.get(f"{url}/readyz")).status_code in (200, 503)
        assert (await http.get(f"{url}/metrics")).status_code == 404
        internal = await http.get(f"http://127.0.0.1:{port}/metrics")
        assert internal.status_code == 200
        assert _value(internal.text, "http_requests_total", handler="/readyz", method="GET") == 1


async def test_a_taken_metrics_port_leaves_the_api_serving(database_url: str, redis_url: str) -> None:
    """Like the worker's exporter: no metrics (Prometheus sees the target down), but the API runs."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        address = f"127.0.0.1:{taken.getsockname()[1]}"
        settings = Settings(database_url=database_url, redis_url=redis_url, api_metrics_address=address)
        async with serve(create_app(settings)) as url, httpx.AsyncClient() as http:
            assert (await http.get(f"{url}/healthz")).status_code == 200
            assert (await http.get(f"{url}/metrics")).status_code == 404
