"""The API describes itself: `/openapi.json` builds, is a valid OpenAPI document, and `/docs` renders."""

from __future__ import annotations

import httpx
from openapi_spec_validator import validate

from api.app import create_app
from scoreline.settings import Settings
from tests.support.http import serve


async def test_openapi_document_is_valid_and_docs_load(settings: Settings) -> None:
    """Regression: /openapi.json answered 500 (the SSE routes' response class hid its status code
    from FastAPI's schema builder), so /docs was broken; fails on main before that fix."""
    async with serve(create_app(settings)) as url, httpx.AsyncClient(base_url=url) as client:
        spec = await client.get("/openapi.json")
        docs = await client.get("/docs")
    assert spec.status_code == 200, spec.text
    document = spec.json()
    validate(document)
    assert {"/healthz", "/readyz", "/v1/devices", "/v1/stream", "/v1/matches/{fixture_id}/stream"} <= set(
        document["paths"]
    )
    assert set(document["paths"]["/v1/stream"]["get"]["responses"]["200"]["content"]) == {"text/event-stream"}
    assert docs.status_code == 200
    assert "swagger-ui" in docs.text
    assert "/openapi.json" in docs.text
