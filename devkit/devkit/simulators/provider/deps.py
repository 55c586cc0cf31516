"""FastAPI dependencies shared by the simulator's routes."""

from __future__ import annotations

from typing import Annotated, cast

from fastapi import Depends, Request

from devkit.simulators.provider.simulator import Simulator


async def get_simulator(request: Request) -> Simulator:
    """The simulator the app was created with (async, so FastAPI does not hop to a thread)."""
    return cast(Simulator, request.app.state.simulator)


SimulatorDep = Annotated[Simulator, Depends(get_simulator)]
