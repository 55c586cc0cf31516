"""How one Cricket v2 request is answered: the shared faults, then `api_token`, the budget, the body.

The order is football's (`..serving`): connection trouble, hangs, outages and `rate_limit` faults
in front of the API, then the token, then the endpoint's hourly budget, then the body that a
`malformed` or `truncated` fault may garble. Cricket v2 differences: the token is only the
`api_token` query parameter (an `Authorization` header is not read), the budget is 2,000 calls per
endpoint per hour, and a 429 is `{"message": "Too Many Attempts."}` with a `Retry-After` header
(Laravel's throttle) and no rate-limit block.
"""

from __future__ import annotations

import hmac
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from starlette.datastructures import URL
from starlette.requests import Request
from starlette.responses import Response

from devkit.simulators.provider.cricket.envelope import CricketOutcome, too_many_attempts_body
from devkit.simulators.provider.cricket.includes import CricketInclude
from devkit.simulators.provider.cricket.replay import CricketTrack
from devkit.simulators.provider.cricket_timemap import CricketTimeMap
from devkit.simulators.provider.endpoints import CricketEndpoint
from devkit.simulators.provider.envelope import ApiError, unauthenticated_body
from devkit.simulators.provider.fault_book import Activation
from devkit.simulators.provider.faults import DropIncludeFault, RateLimitFault
from devkit.simulators.provider.serving import before_api, respond, send_body
from devkit.simulators.provider.simulator import Simulator


@dataclass(frozen=True)
class CricketView:
    """What a cricket route renders from: the replay moment, the includes, and the query.

    Attributes:
        t: Replay time of the request.
        includes: The requested relations (minus any a fault drops).
        clock_zero: Wall-clock epoch of `t = 0`, read once so one response is consistent.
        speed: Replay seconds per real second.
        params: The query parameters.
        url: The request URL (for the page links).
    """

    t: float
    includes: CricketInclude
    clock_zero: float
    speed: float
    params: Mapping[str, str]
    url: URL

    def wall_at(self, t: float) -> float:
        """The wall-clock epoch at which the replay reaches `t`."""
        return self.clock_zero + t / self.speed

    def show(self, track: CricketTrack) -> dict[str, Any]:
        """The fixture as the API shows it now: base fields, included relations, times mapped."""
        fixture = self.includes.apply(track.at(self.t).fixture)
        mapped: dict[str, Any] = CricketTimeMap(track.origin, self.clock_zero, self.speed).apply(fixture)
        return mapped

    def listing(self, tracks: Sequence[CricketTrack]) -> list[dict[str, Any]]:
        """The fixtures as shown now, in the order given."""
        return [self.show(track) for track in tracks]


CricketRender = Callable[[CricketView], CricketOutcome]


def authorised(request: Request, token: str) -> bool:
    """True if the request carries the token as the `api_token` query parameter."""
    supplied = request.query_params.get("api_token", "")
    return bool(supplied) and hmac.compare_digest(supplied.encode(), token.encode())


def _throttled(seconds: float) -> Response:
    retry_after = max(1, math.ceil(seconds))
    return respond(too_many_attempts_body(), 429, headers={"Retry-After": str(retry_after)})


def _limited_by_fault(
    endpoint: CricketEndpoint,
) -> Callable[[Simulator, Activation[RateLimitFault]], Response]:
    def answer(sim: Simulator, activation: Activation[RateLimitFault]) -> Response:
        left = activation.seconds_left(sim.clock.now())
        if left is None:
            return _throttled(sim.cricket_rate_limiter.peek(endpoint).resets_in_seconds)
        # In real seconds, so a client that waits that long finds the fault over.
        return _throttled(sim.clock.real_seconds(left))

    return answer


def _includes(request: Request, sim: Simulator, endpoint: CricketEndpoint, t: float) -> CricketInclude:
    includes = CricketInclude.parse(request.query_params.get("include"))
    for drop in sim.faults.applicable(DropIncludeFault, t, endpoint):
        if includes.has(drop.spec.include):
            sim.faults.use(drop)
            includes = includes.without(drop.spec.include)
    return includes


async def serve_cricket(
    request: Request, sim: Simulator, endpoint: CricketEndpoint, render: CricketRender
) -> Response:
    """Answer a Cricket v2 request the way the real API (and the active faults) would.

    Args:
        request: The incoming request.
        sim: The simulator.
        endpoint: Which cricket endpoint this is, for faults, stats and the budget.
        render: Builds the outcome (data or an API error) from the view.
    """
    sim.stats.count(endpoint)
    early = await before_api(request, sim, endpoint, _limited_by_fault(endpoint))
    if early is not None:
        return early
    if not authorised(request, sim.config.token):
        return respond(unauthenticated_body(), 401)
    if sim.cricket_rate_limiter.take(endpoint) is None:
        return _throttled(sim.cricket_rate_limiter.peek(endpoint).resets_in_seconds)

    clock = sim.clock
    t = clock.now()
    view = CricketView(
        t=t,
        includes=_includes(request, sim, endpoint, t),
        clock_zero=clock.clock_zero,
        speed=clock.speed,
        params=request.query_params,
        url=request.url,
    )
    outcome = render(view)
    if isinstance(outcome, ApiError):
        return send_body(sim, endpoint, t, outcome.status, outcome.body)
    return send_body(sim, endpoint, t, 200, outcome.body())
