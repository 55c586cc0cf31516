"""The worker's view of its dependencies, for WorkerProbeWorkflow."""

from __future__ import annotations

import redis.asyncio as aioredis
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio import activity

from domain.probe import ProbeResult
from scoreline.logging import get_logger

log = get_logger(__name__)


class ProbeActivities:
    def __init__(self, engine: AsyncEngine, redis: aioredis.Redis) -> None:
        self._engine = engine
        self._redis = redis

    @activity.defn(name="probe_dependencies")
    async def probe_dependencies(self) -> ProbeResult:
        result = ProbeResult(postgres=await self._postgres(), redis=await self._redis_state())
        log.info("worker probe", postgres=result.postgres, redis=result.redis)
        return result

    async def _postgres(self) -> str:
        try:
            async with self._engine.connect() as connection:
                await connection.execute(text("SELECT 1"))
        except Exception as error:  # noqa: BLE001 - the probe reports any failure, it never raises
            return f"error: {error}"
        return "ok"

    async def _redis_state(self) -> str:
        try:
            await self._redis.ping()
        except Exception as error:  # noqa: BLE001 - the probe reports any failure, it never raises
            return f"error: {error}"
        return "ok"
