"""Serve an ASGI app on a real port inside the test's event loop, so tests use real connections."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import uvicorn
from starlette.types import ASGIApp

from devkit.devstack.ports import free_port
from scoreline.cli.services import API_KEEP_ALIVE_S


@asynccontextmanager
async def serve(app: ASGIApp, *, port: int | None = None) -> AsyncIterator[str]:
    """Yield the base URL once uvicorn accepts connections; shut it down (lifespan included) after."""
    chosen = port or free_port()
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=chosen,
        log_config=None,
        access_log=False,
        lifespan="on",
        timeout_keep_alive=API_KEEP_ALIVE_S,
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    try:
        while not server.started:
            if task.done():
                task.result()
                raise RuntimeError("uvicorn stopped before it started")
            await asyncio.sleep(0.02)
        yield f"http://127.0.0.1:{chosen}"
    finally:
        server.should_exit = True
        await task
