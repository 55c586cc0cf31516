"""`/_sim/*`: the test clock, live faults, request counters and the rate limit. A dev tool, so no token.

- `GET /_sim/clock`; `POST /_sim/clock` with `{"t": 1234.5}`, `{"advance": 60}`, `{"freeze": true|false}`.
- `GET /_sim/faults`; `POST /_sim/faults` (a recording's `fault` JSON); `DELETE /_sim/faults`.
- `GET /_sim/stats` (requests per endpoint); `POST /_sim/stats/reset`.
- `GET /_sim/rate-limit[?sport=cricket]`: the hourly budget's limit and window, each entity's use
  of its current window and how many calls it refused (answered 429) since it was set;
  `POST /_sim/rate-limit` with `{"limit": N, "window_seconds": W, "sport"?: "football"|"cricket"}`
  gives that API a budget of N calls per W real seconds (football per entity, cricket per
  endpoint), its windows and refusal count starting from nothing.
"""

from __future__ import annotations

from typing import Annotated, Any, Self

from fastapi import APIRouter, Body, Query, status
from pydantic import BaseModel, ConfigDict, Field, model_validator

from devkit.simulators.provider.deps import SimulatorDep
from devkit.simulators.provider.fault_book import Activation
from devkit.simulators.provider.faults import FaultBase, FaultSpec
from devkit.simulators.provider.ratelimit import RateLimiter
from devkit.simulators.provider.simulator import Simulator, Sport
from devkit.simulators.provider.timemap import format_datetime
from scoreline.logging import get_logger

router = APIRouter(prefix="/_sim", tags=["simulator"])
log = get_logger("devkit.simulators.provider")


class ClockChange(BaseModel):
    """Set (`t`) or move (`advance`) the replay clock, and/or stop (`freeze`) or restart it."""

    model_config = ConfigDict(extra="forbid")

    t: float | None = None
    advance: float | None = None
    freeze: bool | None = None

    @model_validator(mode="after")
    def _one_move(self) -> Self:
        if self.t is not None and self.advance is not None:
            raise ValueError("give either 't' or 'advance', not both")
        return self


class ClockStatus(BaseModel):
    """Where the replay is.

    Attributes:
        t: Replay seconds since the recordings' start (negative before it).
        speed: Replay seconds per real second.
        started: The replay has reached `t = 0`.
        frozen: The clock is stopped.
        clock_zero: Wall-clock epoch of `t = 0`; recorded times are mapped relative to it.
        now: The replay's current moment as a SportMonks datetime (what fixtures are compared to).
        end_t: Replay time of the last recorded line.
        finished: The replay is past its last line.
    """

    t: float
    speed: float
    started: bool
    frozen: bool
    clock_zero: float
    now: str
    end_t: float
    finished: bool


class FaultView(BaseModel):
    """A fault and how far along it is."""

    id: str
    source: str
    start_t: float
    used: int
    in_force: bool
    fault: dict[str, Any]


class Cleared(BaseModel):
    """How many live faults `DELETE /_sim/faults` ended."""

    cleared: int


class Stats(BaseModel):
    """Requests received per data endpoint, and faults injected per kind."""

    requests: dict[str, int]
    total: int
    faults: dict[str, int]


class RateLimitChange(BaseModel):
    """A new budget for one API: `limit` calls per `window_seconds` of real time."""

    model_config = ConfigDict(extra="forbid")

    limit: int = Field(ge=1)
    window_seconds: float = Field(gt=0)
    sport: Sport = "football"


class EntityUse(BaseModel):
    """One entity's current window (cricket: one endpoint's)."""

    used: int
    remaining: int
    resets_in_seconds: int


class RateLimitStatus(BaseModel):
    """An API's budget and how it is being spent.

    Attributes:
        sport: Which API (`football`, `cricket`).
        limit: Calls per entity per window.
        window_seconds: The window's length, real seconds (an hour unless set).
        refused: Calls answered 429 because their window was used up, since the budget was set
            (a `rate_limit` fault's 429s are counted in `/_sim/stats` `faults` instead).
        entities: Each entity called in a window still open.
    """

    sport: Sport
    limit: int
    window_seconds: float
    refused: int
    entities: dict[str, EntityUse]


def _rate_limit_status(sport: Sport, limiter: RateLimiter) -> RateLimitStatus:
    return RateLimitStatus(
        sport=sport,
        limit=limiter.limit,
        window_seconds=limiter.window_seconds,
        refused=limiter.refused,
        entities={
            entity: EntityUse(used=use.used, remaining=use.remaining, resets_in_seconds=use.resets_in_seconds)
            for entity, use in limiter.usage().items()
        },
    )


def _clock_status(sim: Simulator) -> ClockStatus:
    clock = sim.clock
    t = clock.now()
    return ClockStatus(
        t=t,
        speed=clock.speed,
        started=t >= 0,
        frozen=clock.frozen,
        clock_zero=clock.clock_zero,
        now=format_datetime(clock.wall_at(t)),
        end_t=sim.end_t,
        finished=t > sim.end_t,
    )


def _fault_view(activation: Activation[FaultBase], t: float) -> FaultView:
    return FaultView(
        id=activation.id,
        source=activation.source,
        start_t=activation.start_t,
        used=activation.used,
        in_force=activation.in_force(t),
        fault=activation.spec.model_dump(exclude_none=True),
    )


def _stats(sim: Simulator) -> Stats:
    return Stats(requests=sim.stats.requests, total=sim.stats.total, faults=dict(sim.faults.injected))


@router.get("/clock")
async def get_clock(sim: SimulatorDep) -> ClockStatus:
    """The replay clock."""
    return _clock_status(sim)


@router.post("/clock")
async def change_clock(sim: SimulatorDep, change: ClockChange) -> ClockStatus:
    """Set, move, freeze or restart the replay clock; it keeps running from there unless frozen."""
    clock = sim.clock
    # Freeze before moving and resume after, so `{"t": 500, "freeze": true}` stops at exactly 500.
    if change.freeze is True:
        clock.freeze()
    if change.t is not None:
        clock.set(change.t)
    if change.advance is not None:
        clock.advance(change.advance)
    if change.freeze is False:
        clock.resume()
    log.info("provider_sim.clock", t=clock.now(), frozen=clock.frozen)
    return _clock_status(sim)


@router.get("/faults")
async def list_faults(sim: SimulatorDep) -> list[FaultView]:
    """Every scripted and live fault."""
    t = sim.clock.now()
    return [_fault_view(activation, t) for activation in sim.faults.activations]


@router.post("/faults", status_code=status.HTTP_201_CREATED)
async def add_fault(sim: SimulatorDep, fault: Annotated[FaultSpec, Body()]) -> FaultView:
    """Start a live fault now (same JSON as a recording's `fault`)."""
    t = sim.clock.now()
    activation = sim.faults.add_live(fault, t)
    log.info("provider_sim.fault_added", id=activation.id, fault=fault.model_dump(exclude_none=True), t=t)
    return _fault_view(activation, t)


@router.delete("/faults")
async def clear_faults(sim: SimulatorDep) -> Cleared:
    """End every live fault (scripted ones stay)."""
    cleared = sim.faults.clear_live()
    log.info("provider_sim.faults_cleared", cleared=cleared)
    return Cleared(cleared=cleared)


@router.get("/stats")
async def get_stats(sim: SimulatorDep) -> Stats:
    """Requests per data endpoint since start (or the last reset)."""
    return _stats(sim)


@router.post("/stats/reset")
async def reset_stats(sim: SimulatorDep) -> Stats:
    """Zero the counters; answers with the (empty) counters."""
    sim.stats.reset()
    sim.faults.injected.clear()
    return _stats(sim)


@router.get("/rate-limit")
async def get_rate_limit(sim: SimulatorDep, sport: Annotated[Sport, Query()] = "football") -> RateLimitStatus:
    """An API's hourly budget, its use in the current windows and the 429s it answered."""
    return _rate_limit_status(sport, sim.limiter(sport))


@router.post("/rate-limit")
async def set_rate_limit(sim: SimulatorDep, change: RateLimitChange) -> RateLimitStatus:
    """Give an API a budget of `limit` calls per `window_seconds`; its counts start from nothing."""
    limiter = sim.limit_rate(change.sport, change.limit, change.window_seconds)
    log.info(
        "provider_sim.rate_limit",
        sport=change.sport,
        limit=change.limit,
        window_seconds=change.window_seconds,
    )
    return _rate_limit_status(change.sport, limiter)
