"""An exception no route handled still gets the one JSON error shape, a trace id, and a log line."""

from __future__ import annotations

import httpx
import structlog
from structlog.testing import capture_logs

from api.app import create_app
from scoreline.settings import Settings
from tests.support.http import serve

SECRET = "password=hunter2 at db.internal:5432"


async def test_an_unhandled_exception_is_a_json_500_with_the_trace_id(settings: Settings) -> None:
    """Regression: an unhandled exception reached the client as Starlette's text/plain 500 without
    X-Trace-Id; now it is `internal_error` in the JSON shape, its text stays in the log (with the
    trace id) and never reaches the client. Fails on main before the fix."""
    app = create_app(settings)

    async def broken() -> None:
        raise RuntimeError(SECRET)

    app.add_api_route("/broken", broken)
    trace = "4bf92f3577b34da6a3ce929d0e0e4736"
    with capture_logs([structlog.contextvars.merge_contextvars]) as logs:
        async with serve(app) as url, httpx.AsyncClient(base_url=url) as client:
            response = await client.get("/broken", headers={"traceparent": f"00-{trace}-00f067aa0ba902b7-01"})
            after = await client.get("/healthz")

    assert response.status_code == 500
    assert response.headers["content-type"] == "application/json"
    assert response.headers["x-trace-id"] == trace
    error = response.json()["error"]
    assert error["code"] == "internal_error"
    assert trace in error["message"]
    assert "hunter2" not in response.text
    (line,) = [entry for entry in logs if entry["event"] == "api.unhandled_error"]
    assert (line["trace_id"], line["path"], line["method"]) == (trace, "/broken", "GET")
    assert line["log_level"] == "error"
    assert "exc_info" in line
    assert after.status_code == 200
