"""Liveness and readiness, without a token, for the dev-stack supervisor."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter
from pydantic import BaseModel

from devkit.simulators.provider.deps import SimulatorDep

router = APIRouter(tags=["health"])


class Alive(BaseModel):
    """The process answers."""

    status: Literal["ok"] = "ok"


class Ready(BaseModel):
    """Recordings are loaded (they are checked before the server starts, so this is final)."""

    status: Literal["ready"] = "ready"
    checks: dict[str, str]
    recordings: int
    fixtures: int


@router.get("/healthz")
async def healthz() -> Alive:
    """The process is alive."""
    return Alive()


@router.get("/readyz")
async def readyz(sim: SimulatorDep) -> Ready:
    """The simulator is serving its recordings."""
    return Ready(
        checks={"recordings": "ok"},
        recordings=len(sim.config.recordings),
        fixtures=sim.fixture_count,
    )
