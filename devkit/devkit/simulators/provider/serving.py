"""How one data request is answered: faults, auth, rate limit, the body, and its corruption.

The order mirrors where things break in real life. Connection trouble, hangs, outages and
throttling happen in front of the API (a load balancer does not check tokens), so they come first;
then the token and the hourly budget; then the body, which a faulty backend may garble on its way
out. Every request counts in the stats, whatever it was answered with.

`serve` is Football v3's answer; Cricket v2's (`cricket_serving.py`) goes through the same
`before_api` and `send_body`, with its own token check, budget and bodies.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from starlette.datastructures import URL
from starlette.requests import Request
from starlette.responses import Response

from devkit.simulators.provider.endpoints import FIXTURE_ENTITY, Endpoint
from devkit.simulators.provider.envelope import (
    ApiError,
    Found,
    NoResults,
    Outcome,
    envelope,
    rate_limited_body,
    status_body,
    unauthenticated_body,
)
from devkit.simulators.provider.fault_book import Activation
from devkit.simulators.provider.faults import (
    DropIncludeFault,
    HangFault,
    LatencyFault,
    MalformedFault,
    RateLimitFault,
    ResetFault,
    StatusFault,
    TruncatedFault,
)
from devkit.simulators.provider.includes import Include
from devkit.simulators.provider.ratelimit import Quota
from devkit.simulators.provider.replay import FixtureTrack
from devkit.simulators.provider.simulator import Simulator
from devkit.simulators.provider.timemap import TimeMap
from devkit.simulators.provider.wire import ConnectionReset, TruncatedResponse
from scoreline.logging import get_logger

log = get_logger("devkit.simulators.provider")

JSON_MEDIA_TYPE = "application/json"
HOLD_POLL_SECONDS = 0.05
# What a PHP backend sends when a warning leaks into the output: the JSON is there, but the
# document is no longer JSON.
MALFORMED_PREFIX = (
    b'<br />\n<b>Warning</b>:  Undefined array key "data" in '
    b"<b>/var/www/api/app/Http/Responses/Response.php</b> on line <b>42</b><br />\n"
)


@dataclass(frozen=True)
class View:
    """What a route renders from: the replay moment, the includes, and the request's query.

    Attributes:
        t: Replay time of the request.
        includes: The requested relations (minus any a fault drops).
        clock_zero: Wall-clock epoch of `t = 0`, read once so one response is consistent.
        speed: Replay seconds per real second.
        params: The query parameters.
        url: The request URL (for `next_page`).
    """

    t: float
    includes: Include
    clock_zero: float
    speed: float
    params: Mapping[str, str]
    url: URL

    def wall_at(self, t: float) -> float:
        """The wall-clock epoch at which the replay reaches `t`."""
        return self.clock_zero + t / self.speed

    def show(self, track: FixtureTrack) -> dict[str, Any]:
        """The fixture as the API shows it now: requested relations only, times mapped."""
        fixture = self.includes.apply(track.at(self.t).fixture)
        mapped: dict[str, Any] = TimeMap(track.origin, self.clock_zero, self.speed).apply(fixture)
        return mapped

    def listing(self, tracks: Sequence[FixtureTrack]) -> Outcome:
        """An unpaginated list, or the "No result(s)" answer when it is empty."""
        if not tracks:
            return NoResults()
        return Found(data=[self.show(track) for track in tracks])


Render = Callable[[View], Outcome]


def _json(body: Mapping[str, Any]) -> bytes:
    return json.dumps(body, separators=(",", ":")).encode()


def respond(body: Mapping[str, Any], status: int, headers: Mapping[str, str] | None = None) -> Response:
    """A plain JSON answer (errors, throttling), never garbled by a fault."""
    return Response(_json(body), status_code=status, headers=headers, media_type=JSON_MEDIA_TYPE)


def _client_gone() -> Response:
    # The client left during a hang or a delay, so this is never sent; returning at once keeps a
    # dead request from using up faults meant for the next ones.
    return Response(status_code=499)


def authorised(request: Request, token: str) -> bool:
    """True if the request carries the token as `api_token` or in `Authorization`.

    The real API takes the raw token in the header; `Bearer <token>` is accepted too, for
    convenience.
    """
    header = request.headers.get("authorization", "").strip()
    if header[:7].lower() == "bearer ":
        header = header[7:].strip()
    supplied = [request.query_params.get("api_token", ""), header]
    return any(hmac.compare_digest(value.encode(), token.encode()) for value in supplied if value)


async def _hold(request: Request, holding: Callable[[], bool]) -> bool:
    """Wait while `holding()` is true; False if the client gave up meanwhile."""
    while holding():
        if await request.is_disconnected():
            return False
        await asyncio.sleep(HOLD_POLL_SECONDS)
    return True


async def _delay(request: Request, seconds: float) -> bool:
    """Sleep `seconds` of real time; False if the client gave up meanwhile."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    return await _hold(request, lambda: loop.time() < deadline)


def fault_quota(sim: Simulator, activation: Activation[RateLimitFault], t: float) -> Quota:
    left = activation.seconds_left(t)
    if left is None:
        return Quota(remaining=0, resets_in_seconds=sim.rate_limiter.peek(FIXTURE_ENTITY).resets_in_seconds)
    # Reported in real seconds, so a client that waits that long finds the fault over.
    return Quota(remaining=0, resets_in_seconds=max(1, math.ceil(sim.clock.real_seconds(left))))


def _football_limited(sim: Simulator, limited: Activation[RateLimitFault]) -> Response:
    return respond(rate_limited_body(fault_quota(sim, limited, sim.clock.now())), 429)


LimitedAnswer = Callable[[Simulator, Activation[RateLimitFault]], Response]


async def before_api(
    request: Request, sim: Simulator, endpoint: Endpoint, limited: LimitedAnswer = _football_limited
) -> Response | None:
    """Faults in front of the API; a response short-circuits the request.

    Args:
        request: The incoming request.
        sim: The simulator.
        endpoint: Which data endpoint this is.
        limited: The API's answer to a `rate_limit` fault.
    """
    faults, clock = sim.faults, sim.clock
    for latency in faults.applicable(LatencyFault, clock.now(), endpoint):
        faults.use(latency)
        if not await _delay(request, latency.spec.seconds):
            return _client_gone()
    if faults.take(ResetFault, clock.now(), endpoint) is not None:
        log.debug("provider_sim.fault", kind="reset", endpoint=endpoint)
        return ConnectionReset()
    hang = faults.take(HangFault, clock.now(), endpoint)
    if hang is not None:
        log.debug("provider_sim.fault", kind="hang", endpoint=endpoint)
        if not await _hold(request, lambda: hang.holds(clock.now())):
            return _client_gone()
    status = faults.take(StatusFault, clock.now(), endpoint)
    if status is not None:
        log.debug("provider_sim.fault", kind="status", status=status.spec.status, endpoint=endpoint)
        return respond(status_body(status.spec.status), status.spec.status)
    throttled = faults.take(RateLimitFault, clock.now(), endpoint)
    if throttled is not None:
        log.debug("provider_sim.fault", kind="rate_limit", endpoint=endpoint)
        return limited(sim, throttled)
    return None


def _includes(request: Request, sim: Simulator, endpoint: Endpoint, t: float) -> Include:
    includes = Include.parse(request.query_params.get("include"))
    for drop in sim.faults.applicable(DropIncludeFault, t, endpoint):
        if includes.has(drop.spec.include):
            sim.faults.use(drop)
            includes = includes.without(drop.spec.include)
    return includes


async def serve(request: Request, sim: Simulator, endpoint: Endpoint, render: Render) -> Response:
    """Answer a data request the way the real API (and the active faults) would.

    Args:
        request: The incoming request.
        sim: The simulator.
        endpoint: Which data endpoint this is, for faults and stats.
        render: Builds the outcome (data, nothing found, or an API error) from the view.
    """
    sim.stats.count(endpoint)
    early = await before_api(request, sim, endpoint)
    if early is not None:
        return early
    if not authorised(request, sim.config.token):
        return respond(unauthenticated_body(), 401)
    quota = sim.rate_limiter.take(FIXTURE_ENTITY)
    if quota is None:
        return respond(rate_limited_body(sim.rate_limiter.peek(FIXTURE_ENTITY)), 429)

    clock = sim.clock
    t = clock.now()
    view = View(
        t=t,
        includes=_includes(request, sim, endpoint, t),
        clock_zero=clock.clock_zero,
        speed=clock.speed,
        params=request.query_params,
        url=request.url,
    )
    outcome = render(view)
    if isinstance(outcome, ApiError):
        status, body = outcome.status, outcome.body
    else:
        status, body = 200, envelope(outcome, quota, view.wall_at(t))
    return send_body(sim, endpoint, t, status, body)


def send_body(sim: Simulator, endpoint: Endpoint, t: float, status: int, body: Mapping[str, Any]) -> Response:
    """The answer as JSON, garbled or cut short if a `malformed` or `truncated` fault says so."""
    content = _json(body)
    if sim.faults.take(MalformedFault, t, endpoint) is not None:
        log.debug("provider_sim.fault", kind="malformed", endpoint=endpoint)
        return Response(MALFORMED_PREFIX + content, status_code=status, media_type=JSON_MEDIA_TYPE)
    if sim.faults.take(TruncatedFault, t, endpoint) is not None:
        log.debug("provider_sim.fault", kind="truncated", endpoint=endpoint)
        return TruncatedResponse(content, status_code=status, media_type=JSON_MEDIA_TYPE)
    return Response(content, status_code=status, media_type=JSON_MEDIA_TYPE)
