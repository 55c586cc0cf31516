"""The FastAPI application: thin routes over the workflow (writes) and Postgres/Redis (reads)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from starlette.types import Receive, Scope, Send

from api.cors import PublicReadCors, parse_origins
from api.errors import install_error_handlers
from api.guards.body_limit import BodyLimit
from api.guards.storable_text import StorableText
from api.guards.unfinished import serve_resetting_unfinished
from api.live.runtime import LiveRuntime
from api.metrics import ApiMetrics
from api.resources import Resources
from api.routes import commands, console, health, matches, ops, streams
from api.routes import devices as device_routes
from api.routes import feeds as feed_routes
from api.routes import fixtures as fixture_routes
from api.routes import webhooks as webhook_routes
from api.tracing import TraceMiddleware
from api.web.routes import install_web_apps
from scoreline.db.engine import create_engine
from scoreline.redis_client import shared_redis
from scoreline.settings import Settings


class _ScorelineApp(FastAPI):
    """FastAPI, with a connection left unfinished reset rather than flushed
    (`api.guards.unfinished`): it needs uvicorn's own `send`, before any middleware wraps it."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await serve_resetting_unfinished(super().__call__, scope, receive, send)


def create_app(settings: Settings) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        pool_timeout = settings.api_db_pool_timeout.total_seconds()
        engine = create_engine(
            settings.require_database_url(), pool_size=settings.db_pool_api, pool_timeout=pool_timeout
        )
        commands_engine = create_engine(
            settings.require_database_url(),
            pool_size=settings.db_pool_commands,
            pre_ping=False,
            pool_timeout=pool_timeout,
        )
        redis = shared_redis(settings.require_redis_url())
        app.state.resources = Resources(
            settings=settings,
            engine=engine,
            redis=redis,
            commands_engine=commands_engine,
            metrics=metrics,
        )
        live = await LiveRuntime.start(settings, engine, redis)
        app.state.live = live
        try:
            yield
        finally:
            await live.stop()
            await redis.aclose()
            await commands_engine.dispose()
            await engine.dispose()

    app = _ScorelineApp(title="Scoreline", version="0.1.0", lifespan=lifespan)
    metrics = ApiMetrics()
    app.state.metrics = metrics
    metrics.install(app, address=settings.api_metrics_address)
    # Handlers first: TraceMiddleware, added after, wraps the catch-all, so a 500 keeps its trace id.
    install_error_handlers(app)
    # The text guard reads what the body limit lets through: the limit is outside it.
    app.add_middleware(StorableText)
    app.add_middleware(BodyLimit, max_bytes=settings.api_max_body_bytes)
    app.add_middleware(TraceMiddleware)
    # Outermost, so error answers of the public reads carry CORS headers too.
    app.add_middleware(PublicReadCors, origins=parse_origins(settings.api_cors_origins))
    app.include_router(health.router)
    app.include_router(matches.router)
    app.include_router(feed_routes.router)
    app.include_router(commands.router)
    app.include_router(streams.router)
    app.include_router(fixture_routes.router)
    app.include_router(device_routes.router)
    app.include_router(ops.router)
    app.include_router(console.router)
    app.include_router(webhook_routes.router)
    install_web_apps(app)
    return app
