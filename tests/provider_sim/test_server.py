"""`server.run`: serves until SIGINT or SIGTERM, then returns normally (a real process each)."""

from __future__ import annotations

import asyncio
import signal
import socket
import sys
import textwrap

import httpx
import pytest

from tests.provider_sim.conftest import BASIC

READY_TIMEOUT = 20.0


def free_port() -> int:
    """A port nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.mark.slow
@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
async def test_run_serves_until_signalled_and_exits_cleanly(stop: signal.Signals) -> None:
    """The process answers `/readyz`, and a stop signal ends it with status 0 and no traceback."""
    port = free_port()
    script = textwrap.dedent(
        f"""
        from pathlib import Path
        from devkit.simulators.provider.config import ProviderSimConfig
        from devkit.simulators.provider.server import run
        run(ProviderSimConfig(recordings=(Path({str(BASIC)!r}),), port={port}))
        print("run returned")
        """
    )
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", script, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
            async with asyncio.timeout(READY_TIMEOUT):
                while True:
                    try:
                        if (await client.get("/readyz")).status_code == 200:
                            break
                    except httpx.TransportError:
                        pass
                    assert process.returncode is None, await process.communicate()
                    await asyncio.sleep(0.05)
            await client.get("/v3/football/livescores?api_token=dev-provider-token")
        process.send_signal(stop)
        stdout, stderr = await asyncio.wait_for(process.communicate(), timeout=10)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert process.returncode == 0, stderr.decode()
    assert b"run returned" in stdout
    assert b"Traceback" not in stderr
