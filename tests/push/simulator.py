"""The APNs simulator for push tests: started like `tests/apns_sim` does, plus its admin calls.

The simulator's admin journal keeps only its newest 10,000 records; a test with thousands of
followers reads the complete journal file instead (`journal`), from where the test's `reset` left it.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from devkit.simulators.apns.config import ApnsSimConfig
from devkit.simulators.apns.keys import ensure_signing_key, ensure_tls_certificate
from tests.apns_sim.conftest import running_simulator, sim_config


@dataclass
class PushSim:
    config: ApnsSimConfig
    cert_path: Path
    p8_path: Path
    admin: httpx.AsyncClient
    journal_path: Path
    _journal_from: int = field(default=0)
    """Where in the journal file this test's records begin."""

    @property
    def apns_url(self) -> str:
        return f"https://localhost:{self.config.port}"

    async def reset(self) -> None:
        for path in ("/_sim/pushes", "/_sim/faults"):
            (await self.admin.delete(path)).raise_for_status()
        self._journal_from = self.journal_path.stat().st_size if self.journal_path.exists() else 0

    async def pushes(self, token: str | None = None, limit: int = 100_000) -> list[dict[str, Any]]:
        params: dict[str, str | int] = {"limit": limit}
        if token is not None:
            params["token"] = token
        response = await self.admin.get("/_sim/pushes", params=params)
        response.raise_for_status()
        pushes: list[dict[str, Any]] = response.json()["pushes"]
        return pushes

    def journal(self) -> list[dict[str, Any]]:
        """Every push answered since the last `reset` (the journal file's `push` lines, whole ones only)."""
        with self.journal_path.open("rb") as file:
            file.seek(self._journal_from)
            lines = file.read().split(b"\n")[:-1]
        records = [json.loads(line) for line in lines]
        return [record for record in records if record["kind"] == "push"]

    async def stats(self) -> dict[str, Any]:
        response = await self.admin.get("/_sim/stats")
        response.raise_for_status()
        stats: dict[str, Any] = response.json()
        return stats

    async def accepted(self) -> int:
        """How many pushes were answered 200 since the last `reset`."""
        by_status: dict[str, int] = (await self.stats())["pushes"]["by_status"]
        return by_status.get("200", 0)

    async def fault(self, **spec: Any) -> None:
        response = await self.admin.post("/_sim/faults", json=spec)
        assert response.status_code == 201, response.text

    async def clear_faults(self) -> None:
        (await self.admin.delete("/_sim/faults")).raise_for_status()

    async def unregister(self, token: str) -> None:
        (await self.admin.post("/_sim/unregister", json={"token": token})).raise_for_status()


@asynccontextmanager
async def running_push_sim(data_dir: Path) -> AsyncIterator[PushSim]:
    journal_path = data_dir / "journal.jsonl"
    config = sim_config(data_dir, journal_file=journal_path)
    async with running_simulator(config):
        p8_path, _ = ensure_signing_key(config.data_dir, config.key_id)
        cert_path, _ = ensure_tls_certificate(config.data_dir, config.host)
        async with httpx.AsyncClient(
            base_url=f"http://{config.host}:{config.admin_port}", timeout=30
        ) as admin:
            yield PushSim(config, cert_path, p8_path, admin, journal_path)
