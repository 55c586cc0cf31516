"""The dev stack starts its parts side by side; whichever comes up first, they must all come up."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from devkit.devstack.stack import PORTS_VARIABLE, DevOptions, DevStack, Ports
from scoreline.settings import Settings

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

RECORDING = Path(__file__).resolve().parents[2] / "recordings" / "football-basic.jsonl"


class _SimulatorAfterWorker(DevStack):
    """Launches the APNs simulator only once the worker has run a workflow: an order a loaded
    machine can produce by chance, made certain here."""

    async def _start_apns(self, ports: Ports) -> None:
        while not any(child.name == self.probed_worker for child in self.children):
            await asyncio.sleep(0.05)
        await self._probe_worker(self.addresses["temporal"])
        await super()._start_apns(ports)


async def test_a_worker_that_starts_before_the_apns_simulator_finds_its_key_and_certificate(
    tmp_path: Path, database_url: str, redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression (CI, 2026-12-05): the worker reads the APNs signing key and the simulator's
    certificate as it starts, and only the simulator, started beside it, created them. On a loaded
    machine the worker got there first and exited (`FileNotFoundError: .../apns/AuthKey_DEVKEY1234.p8`),
    so `scoreline dev` failed to start. Fails before the fix: `PartFailed` for the worker."""
    monkeypatch.setenv(PORTS_VARIABLE, "free")
    stack = _SimulatorAfterWorker(
        DevOptions(data_dir=tmp_path / "stack", recordings=(RECORDING,), start_in=600),
        Settings(database_url=database_url, redis_url=redis_url),
        monitoring=None,
    )
    try:
        await stack.start()
        worker = next(child for child in stack.children if child.name == stack.probed_worker)
        assert worker.returncode is None, f"the worker exited; its log: {worker.log_path}"
    finally:
        await stack.stop()
