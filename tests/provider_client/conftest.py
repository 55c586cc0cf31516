"""The provider client against the real provider simulator, over real HTTP on a free port.

Time is never waited for: the simulator's replay clock is frozen and moved through `/_sim/clock`,
and the client's breaker, 429 window and coalescing read a `ManualClock` the test advances (the
live-coalescing tests use the real clock, since they measure real poll intervals).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import httpx
import pytest

from activities.provider import (
    BreakerPolicy,
    ProviderClientConfig,
    RetryPolicy,
    SportMonksClient,
    SportMonksTransport,
)
from devkit.simulators.provider.app import create_app
from devkit.simulators.provider.clock import ReplayClock
from devkit.simulators.provider.config import BUNDLED_RECORDINGS_DIR, ProviderSimConfig
from devkit.simulators.provider.ratelimit import RateLimiter
from devkit.simulators.provider.server import build_server
from devkit.simulators.provider.simulator import Simulator

TOKEN = "client-test-token"
BASIC = BUNDLED_RECORDINGS_DIR / "football-basic.jsonl"
THREE_MATCHES = BUNDLED_RECORDINGS_DIR / "football-three-matches.jsonl"
BASIC_ID = 81000001
THREE_IDS = (81000001, 81000002, 81000003)
# Replay time at which every fixture of both recordings is in play.
LIVE_T = 1000.0
SYNTHETIC_BASE_ID = 91000000
KEPT_FIELDS = frozenset(
    {"id", "sport_id", "league_id", "season_id", "state_id", "name", "starting_at", "starting_at_timestamp"}
    | {"result_info", "length", "state", "scores"}
)


class ManualClock:
    """A monotonic clock that moves only when told to."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@dataclass
class Sim:
    """A running simulator and a token-free control client for `/_sim`."""

    base_url: str
    control: httpx.AsyncClient
    simulator: Simulator

    async def requests(self) -> dict[str, int]:
        """Requests received per data endpoint."""
        response = await self.control.get("/_sim/stats")
        response.raise_for_status()
        counts: dict[str, int] = response.json()["requests"]
        return counts

    async def total(self) -> int:
        """Requests received over all data endpoints."""
        return sum((await self.requests()).values())

    async def fault(self, **fault: Any) -> None:
        """Start a live fault now."""
        response = await self.control.post("/_sim/faults", json=fault)
        assert response.status_code == 201, response.text

    async def clear_faults(self) -> None:
        """End every live fault."""
        (await self.control.delete("/_sim/faults")).raise_for_status()

    async def clock(self, **change: Any) -> None:
        """Set or move the replay clock."""
        (await self.control.post("/_sim/clock", json=change)).raise_for_status()

    async def reset(self, t: float) -> None:
        """Back to a fresh state: no live faults, zero counters, a full hourly budget, clock at `t`."""
        await self.clear_faults()
        (await self.control.post("/_sim/stats/reset")).raise_for_status()
        await self.clock(t=t, freeze=True)
        self.simulator.rate_limiter = RateLimiter()


StartSim = Callable[..., Awaitable[Sim]]


class SimPool:
    """One simulator per set of recordings for the whole session (loading one takes ~0.4 s).

    Tests never use one at the same time; `start_sim` resets it before handing it out.
    """

    def __init__(self) -> None:
        self._sims: dict[tuple[Path, ...], Sim] = {}
        self._servers: list[tuple[Any, asyncio.Task[None]]] = []

    async def get(self, recordings: tuple[Path, ...]) -> Sim:
        if recordings not in self._sims:
            self._sims[recordings] = await self._launch(recordings)
        return self._sims[recordings]

    async def _launch(self, recordings: tuple[Path, ...]) -> Sim:
        config = ProviderSimConfig(recordings=recordings, token=TOKEN, port=0)
        app = create_app(config, clock=ReplayClock(t=LIVE_T, frozen=True))
        server = build_server(config, app)
        task = asyncio.create_task(server.serve())
        while not server.started:
            if task.done():
                task.result()
            await asyncio.sleep(0.005)
        self._servers.append((server, task))
        base_url = f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
        control = httpx.AsyncClient(base_url=base_url, timeout=5.0)
        # The first data request of a process pays for lazy set-up; keep it out of the tests.
        await control.get("/v3/football/livescores/inplay", params={"api_token": TOKEN})
        return Sim(base_url=base_url, control=control, simulator=app.state.simulator)

    async def aclose(self) -> None:
        for sim in self._sims.values():
            await sim.control.aclose()
        for server, _ in self._servers:
            server.should_exit = True
        await asyncio.gather(*(task for _, task in self._servers))


@pytest.fixture(scope="session")
async def sim_pool() -> AsyncIterator[SimPool]:
    pool = SimPool()
    yield pool
    await pool.aclose()


@pytest.fixture
def start_sim(sim_pool: SimPool) -> StartSim:
    """A running simulator for `recordings`, reset, with its replay clock frozen at `t`."""

    async def start(recordings: Sequence[Path] = (THREE_MATCHES,), *, t: float = LIVE_T) -> Sim:
        sim = await sim_pool.get(tuple(recordings))
        await sim.reset(t)
        return sim

    return start


Synthetic = Callable[..., Path]


@pytest.fixture(scope="session")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> Synthetic:
    """`synthetic(count, broken=())`: the path of a synthetic recording, one file per arguments."""
    directory = tmp_path_factory.mktemp("recordings")

    def make(count: int, broken: Sequence[int] = ()) -> Path:
        path = directory / f"synthetic-{count}-{'-'.join(map(str, broken)) or 'ok'}.jsonl"
        return path if path.exists() else synthetic_recording(path, count, broken=broken)

    return make


@dataclass
class Sent:
    """Headers of every request the client sent, seen by an httpx event hook."""

    requests: list[httpx.Request] = field(default_factory=list)

    async def hook(self, request: httpx.Request) -> None:
        self.requests.append(request)


def client_config(clock: Callable[[], float] = time.monotonic, **overrides: Any) -> ProviderClientConfig:
    """Small backoffs, so fault tests take fractions of a second.

    The timeout is generous for a loaded CI machine; the hang and latency tests shrink it.
    """
    config = ProviderClientConfig(
        token=TOKEN,
        timeout=2.0,
        retry=RetryPolicy(attempts=3, backoff_base=0.01, backoff_max=0.04, deadline=5.0),
        breaker=BreakerPolicy(failure_threshold=3, cooldown=10.0),
        max_concurrency=64,
        live_ttl=0.2,
        clock=clock,
        wall=time.time,
    )
    return replace(config, **overrides)


MakeClient = Callable[..., SportMonksClient]


@pytest.fixture
async def make_client() -> AsyncIterator[MakeClient]:
    """Build clients against a simulator (closed after the test); keyword overrides go to the config."""
    clients: list[tuple[SportMonksClient, httpx.AsyncClient]] = []

    def make(sim: Sim, *, sent: Sent | None = None, **overrides: Any) -> SportMonksClient:
        hooks = {"request": [sent.hook]} if sent is not None else {}
        http = httpx.AsyncClient(base_url=sim.base_url, event_hooks=hooks)
        client = SportMonksClient(SportMonksTransport(http, client_config(**overrides)))
        clients.append((client, http))
        return client

    yield make
    for client, http in clients:
        await client.aclose()
        await http.aclose()


def synthetic_recording(path: Path, count: int, *, broken: Sequence[int] = ()) -> Path:
    """`count` small fixtures in play from t=0, ids from `SYNTHETIC_BASE_ID`.

    Each is football-basic's fixture at `LIVE_T` reduced to its base fields, state and scores (the
    payload stays small, so the tests measure the client, not JSON volume); the indexes in
    `broken` get a `scores` value the normaliser must reject.
    """
    lines = [json.loads(line) for line in BASIC.read_text().splitlines() if line.strip()]
    template = [line for line in lines[1:] if "fixture" in line and line["t"] <= LIVE_T][-1]["fixture"]
    template = {key: value for key, value in template.items() if key in KEPT_FIELDS}
    ids = [SYNTHETIC_BASE_ID + index for index in range(count)]
    header = {**lines[0], "name": "synthetic", "fixtures": ids}
    body = []
    for index, fixture_id in enumerate(ids):
        fixture = {**template, "id": fixture_id, "name": f"Synthetic {index}"}
        if index in broken:
            fixture["scores"] = "not a list"
        body.append({"t": 0.0, "fixture": fixture})
    path.write_text("\n".join(json.dumps(line) for line in [header, *body]) + "\n")
    return path
