"""Whole-simulator behaviour: restarts, the Apple-faithful payload mode, and the blocking entry point."""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path

import httpx
import pytest

from devkit.simulators.apns.keys import ensure_signing_key, ensure_tls_certificate
from tests.apns_sim.conftest import (
    client_tls,
    device_token,
    la_start,
    provider_token,
    running_simulator,
    sim_config,
)


async def test_restart_reuses_keys_and_lenient_mode_only_notes_payload_problems(tmp_path: Path) -> None:
    """A restart keeps the certificate and .p8; without strict_payloads a bad start is 200, marked dropped."""
    first = sim_config(tmp_path, strict_payloads=False)
    async with running_simulator(first):
        cert_before = (tmp_path / "cert.pem").read_bytes()
        p8_before = ensure_signing_key(tmp_path, first.key_id)[0].read_bytes()
    second = sim_config(tmp_path, strict_payloads=False)
    async with running_simulator(second):
        cert_path, _ = ensure_tls_certificate(tmp_path, second.host)
        assert cert_path.read_bytes() == cert_before
        assert ensure_signing_key(tmp_path, second.key_id)[0].read_bytes() == p8_before
        token = device_token()
        provider = provider_token(second, p8_before.decode())
        async with httpx.AsyncClient(
            http2=True, verify=client_tls(cert_path), base_url=f"https://localhost:{second.port}"
        ) as apns:
            response = await apns.post(
                f"/3/device/{token}",
                json=la_start(omit=("attributes",)),
                headers={
                    "authorization": f"bearer {provider}",
                    "apns-topic": second.topic + ".push-type.liveactivity",
                    "apns-push-type": "liveactivity",
                },
            )
        async with httpx.AsyncClient(base_url=f"http://{second.host}:{second.admin_port}") as admin:
            [record] = (await admin.get("/_sim/pushes")).json()["pushes"]

    assert response.status_code == 200
    assert (record["status"], record["dropped_by_device"]) == (200, "MissingAttributes")


@pytest.mark.slow
async def test_run_exits_cleanly_on_sigterm(tmp_path: Path) -> None:
    """`run` serves until SIGTERM, then shuts down and exits 0."""
    config = sim_config(tmp_path)
    script = (
        "from pathlib import Path; from devkit.simulators.apns.config import ApnsSimConfig; "
        "from devkit.simulators.apns.server import run; "
        f"run(ApnsSimConfig(data_dir=Path({str(tmp_path)!r}), "
        f"port={config.port}, admin_port={config.admin_port}))"
    )
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", script, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{config.admin_port}") as admin:
            for _ in range(300):
                try:
                    if (await admin.get("/readyz")).status_code == 200:
                        break
                except httpx.TransportError:
                    await asyncio.sleep(0.05)
            else:
                pytest.fail("simulator subprocess never became ready")
        process.send_signal(signal.SIGTERM)
        _, stderr = await asyncio.wait_for(process.communicate(), 15)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()

    assert process.returncode == 0, stderr.decode()
    assert b"Traceback" not in stderr
