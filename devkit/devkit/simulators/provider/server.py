"""Run the simulator under uvicorn until SIGINT or SIGTERM."""

from __future__ import annotations

import signal
import threading

import uvicorn
from starlette.types import ASGIApp

from devkit.simulators.provider.app import create_app
from devkit.simulators.provider.config import ProviderSimConfig

# A hung request (the `hang` fault) must not keep the process alive after a stop signal.
GRACEFUL_SHUTDOWN_SECONDS = 2
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def build_server(config: ProviderSimConfig, app: ASGIApp | None = None) -> uvicorn.Server:
    """A uvicorn server for the simulator on `config.host:config.port` (port 0 picks a free one).

    Args:
        config: The simulator settings.
        app: An app built with `create_app`; built from `config` when omitted.
    """
    return uvicorn.Server(
        uvicorn.Config(
            app if app is not None else create_app(config),
            host=config.host,
            port=config.port,
            # The connection faults are written against uvicorn's h11 protocol.
            http="h11",
            lifespan="off",
            # Logging is the process's (structlog); uvicorn's records propagate to it.
            log_config=None,
            timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_SECONDS,
        )
    )


def run(config: ProviderSimConfig) -> None:
    """Serve until SIGINT or SIGTERM, then return normally.

    Raises:
        RecordingError: A recording is malformed (before anything listens).
        SystemExit: uvicorn could not bind `host:port`.
    """
    server = build_server(config)
    if threading.current_thread() is not threading.main_thread():
        server.run()  # uvicorn leaves signals alone off the main thread
        return
    # uvicorn re-raises the stop signal to the previous handler once it has shut down; making
    # that handler its own `handle_exit` turns the re-raise into a no-op, so `run` just returns
    # (instead of a KeyboardInterrupt or a death by SIGTERM), and a signal that arrives before
    # uvicorn installs its handlers still stops it.
    previous = {sig: signal.signal(sig, server.handle_exit) for sig in STOP_SIGNALS}
    try:
        server.run()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
