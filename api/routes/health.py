"""`/healthz` (the process is alive) and `/readyz` (it can reach Postgres, Redis and Temporal)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from datetime import timedelta

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from sqlalchemy import text

from api.deps import ResourcesDep
from api.resources import Resources

router = APIRouter(tags=["health"])

CHECK_TIMEOUT = 2.0


class Liveness(BaseModel):
    status: str = "ok"


class Readiness(BaseModel):
    status: str
    checks: dict[str, str]


@router.get("/healthz", response_model=Liveness)
async def healthz() -> Liveness:
    return Liveness()


@router.get("/readyz", response_model=Readiness, responses={503: {"model": Readiness}})
async def readyz(resources: ResourcesDep) -> JSONResponse:
    names = ("postgres", "redis", "temporal")
    results = await asyncio.gather(
        _check(_postgres(resources)), _check(_redis(resources)), _check(_temporal(resources))
    )
    checks = dict(zip(names, results, strict=True))
    ready = all(value == "ok" for value in checks.values())
    body = Readiness(status="ready" if ready else "not_ready", checks=checks)
    return JSONResponse(body.model_dump(), status_code=200 if ready else 503)


async def _check(probe: Awaitable[None]) -> str:
    try:
        await asyncio.wait_for(probe, CHECK_TIMEOUT)
    except TimeoutError:
        return f"error: no answer in {CHECK_TIMEOUT:g}s"
    except Exception as error:  # noqa: BLE001 - readiness reports every failure, it never raises
        return f"error: {type(error).__name__}: {error}"
    return "ok"


async def _postgres(resources: Resources) -> None:
    async with resources.engine.connect() as connection:
        await connection.execute(text("SELECT 1"))


async def _redis(resources: Resources) -> None:
    await resources.redis.ping()


async def _temporal(resources: Resources) -> None:
    client = await resources.temporal()
    if not await client.service_client.check_health(timeout=timedelta(seconds=CHECK_TIMEOUT)):
        raise RuntimeError("not serving")
