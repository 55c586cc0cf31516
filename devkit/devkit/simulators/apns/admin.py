"""The admin API (plain HTTP/1.1): health, the push journal, stats and fault injection.

Kept apart from the APNs port so tests and the dev stack can inspect and steer the simulator
without a provider token, TLS or HTTP/2.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated

from fastapi import FastAPI, HTTPException, Query, status
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from devkit.simulators.apns.faults import Fault, FaultAction, FaultInjector
from devkit.simulators.apns.journal import Journal, JournalStats, PushRecord
from devkit.simulators.apns.protocol import ConnectionRegistry
from devkit.simulators.apns.service import PushService

ReadinessChecks = Callable[[], dict[str, str]]


class FaultIn(BaseModel):
    """Body of `POST /_sim/faults`; see `faults.Fault` for the meaning of each field."""

    model_config = ConfigDict(extra="forbid")

    action: FaultAction = "respond"
    status: int | None = None
    reason: str | None = None
    token: str | None = None
    latency_ms: int = Field(default=0, ge=0)
    count: int | None = Field(default=None, ge=1)
    duration_s: float | None = Field(default=None, gt=0)


class UnregisterIn(BaseModel):
    """Body of `POST /_sim/unregister`: the token, and optionally when it "became" invalid."""

    model_config = ConfigDict(extra="forbid")

    token: str = Field(min_length=1)
    timestamp_ms: int | None = None


@dataclass(frozen=True)
class PushPage:
    """Journal records, oldest first."""

    pushes: list[PushRecord]


@dataclass(frozen=True)
class FaultList:
    """Faults still active."""

    faults: list[Fault]


@dataclass(frozen=True)
class Cleared:
    """How many items a DELETE removed."""

    cleared: int


@dataclass(frozen=True)
class Unregistered:
    """A token that now answers 410, and the `timestamp` it reports."""

    token: str
    timestamp: int


@dataclass(frozen=True)
class ConnectionCounts:
    """HTTP/2 connections to the APNs side."""

    open: int
    total: int


@dataclass(frozen=True)
class SimStats:
    """`GET /_sim/stats`."""

    pushes: JournalStats
    connections: ConnectionCounts
    active_faults: int
    unregistered_tokens: int


@dataclass(frozen=True)
class Health:
    """`/healthz` and `/readyz` bodies."""

    status: str
    checks: dict[str, str]


def create_admin_app(
    *,
    journal: Journal,
    faults: FaultInjector,
    service: PushService,
    connections: ConnectionRegistry,
    readiness: ReadinessChecks,
) -> FastAPI:
    """The admin app, bound to one simulator's state."""
    app = FastAPI(title="Scoreline APNs simulator admin")

    @app.get("/healthz")
    async def healthz() -> Health:
        return Health(status="ok", checks={})

    @app.get("/readyz", response_model=Health, responses={503: {"model": Health}})
    async def readyz() -> Health | JSONResponse:
        checks = readiness()
        if all(value == "ok" for value in checks.values()):
            return Health(status="ready", checks=checks)
        return JSONResponse({"status": "not_ready", "checks": checks}, status.HTTP_503_SERVICE_UNAVAILABLE)

    @app.get("/_sim/pushes")
    async def list_pushes(
        token: str | None = None, limit: Annotated[int, Query(ge=1, le=100_000)] = 100
    ) -> PushPage:
        return PushPage(pushes=journal.pushes(token=token, limit=limit))

    @app.delete("/_sim/pushes")
    async def clear_pushes() -> Cleared:
        cleared = journal.stats().total
        journal.clear()
        return Cleared(cleared=cleared)

    @app.get("/_sim/stats")
    async def stats() -> SimStats:
        return SimStats(
            pushes=journal.stats(),
            connections=ConnectionCounts(open=connections.open_count, total=connections.total),
            active_faults=len(faults.active()),
            unregistered_tokens=service.unregistered_count,
        )

    @app.get("/_sim/faults")
    async def list_faults() -> FaultList:
        return FaultList(faults=faults.active())

    @app.post("/_sim/faults", status_code=status.HTTP_201_CREATED)
    async def add_fault(body: FaultIn) -> Fault:
        try:
            return faults.add(**body.model_dump())
        except ValueError as exc:
            raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, str(exc)) from exc

    @app.delete("/_sim/faults")
    async def clear_faults() -> Cleared:
        return Cleared(cleared=faults.clear())

    @app.post("/_sim/unregister")
    async def unregister(body: UnregisterIn) -> Unregistered:
        return Unregistered(token=body.token, timestamp=service.unregister(body.token, body.timestamp_ms))

    return app
