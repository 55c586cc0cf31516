"""What the worker's activities are built from: one small Postgres pool per role, Redis, the
provider and APNs clients, and the worker's Live Activity drainer; opened at start, closed on exit.

Roles get their own pools so that one cannot starve another: hundreds of live watches ingesting at
once must never leave a desk's commit waiting for a connection, nor hold up a publish or the
drainer. Sizes are settings (`DB_POOL_*`); each pool may grow to twice its size under a burst.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass

import redis.asyncio as aioredis
from sqlalchemy.ext.asyncio import AsyncEngine

from activities.provider.client import SportMonksClient
from activities.provider.cricket.client import CricketClient
from activities.push.apns import ApnsClient
from activities.push.drain import DrainConfig, Drainer
from activities.watched import WatchedMatches
from scoreline.db.engine import create_engine
from scoreline.db.urls import asyncpg_dsn
from scoreline.readmodel.refresher import ReadCopyRefresher
from scoreline.redis_client import shared_redis
from scoreline.settings import Settings


@dataclass(frozen=True)
class Pools:
    ingest: AsyncEngine
    """Watches, one-off fetches and the fixture sync: the provider's side of the log."""
    commands: AsyncEngine
    """Desk command commits and their read-copy refreshes."""
    pushes: AsyncEngine
    """Live Activity publishes and the drainer's takes and settles."""
    background: AsyncEngine
    """Retention, the readiness probe and looking up match facts to start runs."""


@dataclass(frozen=True)
class WorkerDependencies:
    pools: Pools
    redis: aioredis.Redis
    provider: SportMonksClient
    cricket: CricketClient
    read_copies: ReadCopyRefresher
    """Refreshes the fans' read copies after desk commits, coalesced, off the commit's path."""
    apns: ApnsClient | None
    """None without `APNS_KEY_PATH`: publishing still works; nothing is sent from this worker."""
    watched: WatchedMatches
    """The in-play matches watched here, reported as the poll-age gauge."""


@asynccontextmanager
async def worker_dependencies(settings: Settings) -> AsyncIterator[WorkerDependencies]:
    async with AsyncExitStack() as stack:
        url = settings.require_database_url()

        def pool(size: int) -> AsyncEngine:
            # No pre-ping: every database call here runs in a retried activity (or the drainer's
            # retrying loop), and the first failure after a restart invalidates the pool.
            engine = create_engine(url, pool_size=size, pre_ping=False)
            stack.push_async_callback(engine.dispose)
            return engine

        pools = Pools(
            ingest=pool(settings.db_pool_ingest),
            commands=pool(settings.db_pool_commands),
            pushes=pool(settings.db_pool_pushes),
            background=pool(settings.db_pool_background),
        )
        redis = shared_redis(settings.require_redis_url())
        stack.push_async_callback(redis.aclose)
        # With Redis, every worker shares one live board per interval and one hourly budget.
        provider = SportMonksClient.from_settings(settings, redis=redis)
        stack.push_async_callback(provider.aclose)
        cricket = CricketClient.from_settings(settings, redis=redis)
        stack.push_async_callback(cricket.aclose)
        apns = ApnsClient.from_settings(settings) if settings.apns_key_path else None
        if apns is not None:
            stack.push_async_callback(apns.aclose)
            # Stopped before the client and the pools close: its last requests are answered and settled.
            drainer = Drainer(pools.pushes, apns, DrainConfig.from_settings(settings), dsn=asyncpg_dsn(url))
            drainer.start()
            stack.push_async_callback(drainer.stop)
        read_copies = ReadCopyRefresher(pools.commands, redis)
        stack.push_async_callback(read_copies.aclose)
        watched = WatchedMatches()
        watched.start()
        stack.push_async_callback(watched.aclose)
        yield WorkerDependencies(
            pools=pools,
            redis=redis,
            provider=provider,
            cricket=cricket,
            read_copies=read_copies,
            apns=apns,
            watched=watched,
        )
