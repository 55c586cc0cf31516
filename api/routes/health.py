"""`/healthz` (the process is alive) and `/readyz` (it can reach Postgres, Redis and Temporal).

Both answer anyone (load balancers, hosts, curious users), so `/readyz` says only which check is
not `ok` (`failed`, or `timeout` when it gave no answer in `CHECK_TIMEOUT`); why it failed (the
error text names hosts, ports and driver details) goes to the log with the request's trace id.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from datetime import timedelta
from typing import Literal

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from sqlalchemy import text

from api.deps import ResourcesDep
from api.resources import Resources
from scoreline.logging import get_logger

router = APIRouter(tags=["health"])

CHECK_TIMEOUT = 2.0

log = get_logger("api.health")

CheckResult = Literal["ok", "failed", "timeout"]


class Liveness(BaseModel):
    status: str = "ok"


class Readiness(BaseModel):
    status: Literal["ready", "not_ready"]
    checks: dict[str, CheckResult]


@router.get("/healthz", response_model=Liveness)
async def healthz() -> Liveness:
    return Liveness()


@router.get("/readyz", response_model=Readiness, responses={503: {"model": Readiness}})
async def readyz(resources: ResourcesDep) -> JSONResponse:
    probes = {"postgres": _postgres(resources), "redis": _redis(resources), "temporal": _temporal(resources)}
    results = await asyncio.gather(*(_check(name, probe) for name, probe in probes.items()))
    checks = dict(zip(probes, results, strict=True))
    ready = all(value == "ok" for value in checks.values())
    body = Readiness(status="ready" if ready else "not_ready", checks=checks)
    return JSONResponse(body.model_dump(), status_code=200 if ready else 503)


async def _check(name: str, probe: Awaitable[None]) -> CheckResult:
    try:
        async with asyncio.timeout(CHECK_TIMEOUT):
            await probe
    except TimeoutError:
        log.warning("readyz.check_failed", check=name, error=f"no answer in {CHECK_TIMEOUT:g}s")
        return "timeout"
    except Exception as error:  # noqa: BLE001 - readiness reports every failure, it never raises
        log.warning("readyz.check_failed", check=name, error=f"{type(error).__name__}: {error}")
        return "failed"
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
