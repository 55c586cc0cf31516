"""The APNs simulator for push tests: started like `tests/apns_sim` does, plus its admin calls."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from simulators.apns.config import ApnsSimConfig
from simulators.apns.keys import ensure_signing_key, ensure_tls_certificate
from tests.apns_sim.conftest import running_simulator, sim_config


@dataclass(frozen=True)
class PushSim:
    config: ApnsSimConfig
    cert_path: Path
    p8_path: Path
    admin: httpx.AsyncClient

    @property
    def apns_url(self) -> str:
        return f"https://localhost:{self.config.port}"

    async def reset(self) -> None:
        for path in ("/_sim/pushes", "/_sim/faults"):
            (await self.admin.delete(path)).raise_for_status()

    async def pushes(self, token: str | None = None, limit: int = 100_000) -> list[dict[str, Any]]:
        params: dict[str, str | int] = {"limit": limit}
        if token is not None:
            params["token"] = token
        response = await self.admin.get("/_sim/pushes", params=params)
        response.raise_for_status()
        pushes: list[dict[str, Any]] = response.json()["pushes"]
        return pushes

    async def stats(self) -> dict[str, Any]:
        response = await self.admin.get("/_sim/stats")
        response.raise_for_status()
        stats: dict[str, Any] = response.json()
        return stats

    async def fault(self, **spec: Any) -> None:
        response = await self.admin.post("/_sim/faults", json=spec)
        assert response.status_code == 201, response.text

    async def unregister(self, token: str) -> None:
        (await self.admin.post("/_sim/unregister", json={"token": token})).raise_for_status()


@asynccontextmanager
async def running_push_sim(data_dir: Path) -> AsyncIterator[PushSim]:
    config = sim_config(data_dir)
    async with running_simulator(config):
        p8_path, _ = ensure_signing_key(config.data_dir, config.key_id)
        cert_path, _ = ensure_tls_certificate(config.data_dir, config.host)
        async with httpx.AsyncClient(
            base_url=f"http://{config.host}:{config.admin_port}", timeout=30
        ) as admin:
            yield PushSim(config, cert_path, p8_path, admin)
