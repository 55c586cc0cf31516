"""The provider simulator for end-to-end tests, with its replay clock driven by the test.

`step_through` moves the frozen replay clock from one recording line to the next and waits until
the simulator has answered a few more requests for each, so every state the recording shows is
seen by the watch, however loaded the machine is — no real-time waits, no luck.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from devkit.simulators.provider.app import create_app
from devkit.simulators.provider.config import BUNDLED_RECORDINGS_DIR, ProviderSimConfig
from devkit.simulators.provider.recording_file import find_recording, read_recording
from tests.support.http import serve

TOKEN = "test-provider-token"


def recording(name: str) -> Path:
    """The bundled recording `name` (`NAME.jsonl`, or `NAME.jsonl.gz` when it is compressed)."""
    return find_recording(BUNDLED_RECORDINGS_DIR, name)


def expected(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((BUNDLED_RECORDINGS_DIR / f"{name}.expected.json").read_text())
    return data


def line_times(names: Sequence[str | Path]) -> list[float]:
    """Every distinct `t` at which any of the recordings changes, in order."""
    times: set[float] = set()
    for name in names:
        path = name if isinstance(name, Path) else recording(name)
        for line in read_recording(path).splitlines()[1:]:
            if line.strip():
                times.add(float(json.loads(line)["t"]))
    return sorted(times)


@dataclass
class Provider:
    url: str
    admin: httpx.AsyncClient

    async def set_clock(self, t: float) -> None:
        (await self.admin.post("/_sim/clock", json={"t": t, "freeze": True})).raise_for_status()

    async def requests_served(self) -> int:
        stats = (await self.admin.get("/_sim/stats")).json()
        return int(stats["total"])

    async def stats(self) -> dict[str, int]:
        """Requests received per data endpoint since the start or the last `reset_stats`."""
        response = await self.admin.get("/_sim/stats")
        response.raise_for_status()
        requests: dict[str, int] = response.json()["requests"]
        return requests

    async def reset_stats(self) -> None:
        (await self.admin.post("/_sim/stats/reset")).raise_for_status()

    async def set_rate_limit(self, limit: int, window_seconds: float) -> dict[str, Any]:
        """Allow `limit` football calls per entity per `window_seconds` of real time (the real API:
        thousands an hour), counting afresh; answers the new budget's status."""
        response = await self.admin.post(
            "/_sim/rate-limit", json={"limit": limit, "window_seconds": window_seconds}
        )
        response.raise_for_status()
        status: dict[str, Any] = response.json()
        return status

    async def rate_limit(self) -> dict[str, Any]:
        """The football budget: `limit`, `window_seconds`, `refused` (429s answered), `entities`."""
        response = await self.admin.get("/_sim/rate-limit")
        response.raise_for_status()
        status: dict[str, Any] = response.json()
        return status

    async def fault(self, **fault: Any) -> None:
        (await self.admin.post("/_sim/faults", json=fault)).raise_for_status()

    async def step_through(
        self, times: Sequence[float], *, polls_per_step: int = 2, timeout: float = 30
    ) -> None:
        """Show each moment until the watch has polled it `polls_per_step` times."""
        for t in times:
            await self.set_clock(t)
            seen = await self.requests_served()
            async with asyncio.timeout(timeout):
                while await self.requests_served() < seen + polls_per_step:
                    await asyncio.sleep(0.01)


@asynccontextmanager
async def running_provider(names: Sequence[str | Path], *, t: float = -600.0) -> AsyncIterator[Provider]:
    """The simulator on a free port, its clock frozen at replay time `t`; a name is a bundled
    recording, a path one of the test's own."""
    recordings = tuple(name if isinstance(name, Path) else recording(name) for name in names)
    config = ProviderSimConfig(recordings=recordings, token=TOKEN, start_in=0)
    async with serve(create_app(config)) as url, httpx.AsyncClient(base_url=url) as admin:
        provider = Provider(url=url, admin=admin)
        await provider.set_clock(t)
        yield provider
