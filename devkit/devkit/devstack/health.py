"""Readiness checks: each returns None when the part answers, or says what is wrong."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import timedelta

import asyncpg
import httpx
import redis.asyncio as aioredis
from temporalio.client import Client

from scoreline.db.urls import asyncpg_dsn

Check = Callable[[], Awaitable[str | None]]


async def postgres_problem(database_url: str) -> str | None:
    try:
        connection = await asyncpg.connect(asyncpg_dsn(database_url), timeout=2)
    except (OSError, asyncpg.PostgresError, TimeoutError) as error:
        return f"postgres: {error}"
    try:
        await connection.fetchval("SELECT 1")
    finally:
        await connection.close()
    return None


async def redis_problem(redis_url: str) -> str | None:
    client = aioredis.Redis.from_url(redis_url, socket_connect_timeout=2, socket_timeout=2)
    try:
        await client.ping()
    except (OSError, aioredis.RedisError) as error:
        return f"redis: {error}"
    finally:
        await client.aclose()
    return None


async def temporal_problem(address: str, namespace: str = "default") -> str | None:
    try:
        async with asyncio.timeout(3):
            client = await Client.connect(address, namespace=namespace)
        healthy = await client.service_client.check_health(timeout=timedelta(seconds=2))
    except Exception as error:  # noqa: BLE001 - any failure to connect means "not ready yet"
        return f"temporal: {error}"
    return None if healthy else "temporal: health check said not serving"


async def http_problem(url: str, *, verify: bool | str = True) -> str | None:
    try:
        async with httpx.AsyncClient(timeout=2, verify=verify) as client:
            response = await client.get(url)
    except httpx.HTTPError as error:
        return f"{url}: {error!r}"
    if response.status_code != 200:
        return f"{url}: HTTP {response.status_code} {response.text[:200]}"
    return None


async def wait_until_ready(check: Check, *, timeout: float, gave_up: Callable[[], str | None]) -> None:
    """Poll `check` until it passes; fail early when `gave_up` reports the process died."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    problem: str | None = "not checked yet"
    while loop.time() < deadline:
        death = gave_up()
        if death is not None:
            raise ReadinessError(death)
        problem = await check()
        if problem is None:
            return
        await asyncio.sleep(0.2)
    raise ReadinessError(f"not ready after {timeout:.0f}s: {problem}")


class ReadinessError(RuntimeError):
    """A part never answered its health check."""
