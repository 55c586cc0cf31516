"""A Postgres outage for the push store's tests: an engine whose connections go through a proxy
the test cuts and restores."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from sqlalchemy.ext.asyncio import AsyncEngine

from devkit.devstack.tcp_proxy import CuttableProxy
from scoreline.db.engine import create_engine


@contextlib.asynccontextmanager
async def cut_off_engine(database_url: str) -> AsyncIterator[tuple[CuttableProxy, AsyncEngine]]:
    """The proxy (open) and an engine reaching `database_url` through it; both gone afterwards."""
    proxy = CuttableProxy.to_database(database_url)
    await proxy.start()
    engine = create_engine(proxy.database_url(database_url), pool_size=2, pre_ping=False)
    try:
        yield proxy, engine
    finally:
        await engine.dispose()
        await proxy.cut()
