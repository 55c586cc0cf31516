"""The simulator's ASGI app: a SportMonks look-alike serving recordings on a replay clock.

Football recordings are served as Football v3 below `/v3/football`, cricket ones as Cricket v2
below `/api/v2.0`; one process serves both, on one clock, with one set of faults and stats.
"""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import Receive, Scope, Send

from devkit.simulators.provider.clock import ReplayClock
from devkit.simulators.provider.config import ProviderSimConfig
from devkit.simulators.provider.envelope import endpoint_not_found_body
from devkit.simulators.provider.routes import control, cricket, football, health
from devkit.simulators.provider.simulator import Simulator
from devkit.simulators.provider.wire import remember_transport
from scoreline.logging import get_logger

log = get_logger("devkit.simulators.provider")


class _SimulatorApp(FastAPI):
    """FastAPI, plus grabbing the connection's transport before any middleware wraps `send`."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        remember_transport(scope, send)
        await super().__call__(scope, receive, send)


async def _not_found(request: Request, exc: Exception) -> Response:
    if isinstance(exc, StarletteHTTPException) and exc.status_code == 404:
        return JSONResponse(endpoint_not_found_body(), status_code=404)
    assert isinstance(exc, StarletteHTTPException)
    return await http_exception_handler(request, exc)


def create_app(config: ProviderSimConfig, *, clock: ReplayClock | None = None) -> FastAPI:
    """Load the recordings and build the app.

    Args:
        config: Recordings, speed, start delay and token (host and port are for `server.run`).
        clock: A replay clock to use instead of one that reaches `t = 0` after `config.start_in`
            (tests pass a frozen one).

    Raises:
        RecordingError: A recording is malformed; the message names the file and line.
        ValueError: No recordings, or a speed that is not positive.
    """
    simulator = Simulator.load(config, clock=clock)
    app = _SimulatorApp(
        title="Scoreline provider simulator",
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
    )
    app.state.simulator = simulator
    app.include_router(football.router)
    app.include_router(cricket.router)
    app.include_router(control.router)
    app.include_router(health.router)
    app.add_exception_handler(StarletteHTTPException, _not_found)
    log.info(
        "provider_sim.loaded",
        recordings=[str(path) for path in config.recordings],
        fixtures=[track.fixture_id for track in simulator.replay.tracks],
        cricket_fixtures=[track.fixture_id for track in simulator.cricket.tracks],
        scripted_faults=len(simulator.faults.activations),
        speed=simulator.clock.speed,
        t=round(simulator.clock.now(), 3),
    )
    return app
