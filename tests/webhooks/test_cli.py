"""`scoreline partners webhooks …` as an operator runs it: a real process, a real database, a real receiver."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

from sqlalchemy.ext.asyncio import AsyncEngine

from scoreline.webhooks.endpoints import get_endpoint, list_endpoints
from scoreline.webhooks.signing import SECRET_PREFIX
from tests.webhooks.conftest import PARTNER
from tests.webhooks.receivers import receiver


async def _webhooks(database_url: str, data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "SCORELINE_DATA_DIR": str(data_dir),
        "LOG_FORMAT": "json",
    }
    return await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "scoreline", "partners", "webhooks", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


async def test_add_prints_the_secret_last_and_test_sends_a_ping_it_verifies(
    database_url: str, tmp_path: Path, engine: AsyncEngine, partner: str
) -> None:
    async with receiver() as seen:
        added = await _webhooks(database_url, tmp_path, "add", PARTNER, seen.url, "--delay", "5")
        assert added.returncode == 0, added.stderr
        secret = added.stdout.splitlines()[-1]
        assert secret.startswith(SECRET_PREFIX) and secret == secret.strip()
        [endpoint] = await list_endpoints(engine, PARTNER)
        assert (endpoint.url, endpoint.delay_seconds) == (seen.url, 5)

        tested = await _webhooks(database_url, tmp_path, "test", PARTNER)
        assert tested.returncode == 0, tested.stderr
        assert "HTTP 200" in tested.stdout
        [ping] = seen.journal
        assert ping.verify(secret)["type"] == "webhook.ping"

        paused = await _webhooks(database_url, tmp_path, "pause", str(endpoint.id))
        assert "paused" in paused.stdout
        assert (await get_endpoint(engine, endpoint.id)).paused_at is not None
        resumed = await _webhooks(database_url, tmp_path, "resume", str(endpoint.id))
        assert "active" in resumed.stdout
        rotated = await _webhooks(database_url, tmp_path, "rotate", str(endpoint.id))
        new_secret = rotated.stdout.splitlines()[-1]
        assert new_secret.startswith(SECRET_PREFIX) and new_secret != secret
        listed = await _webhooks(database_url, tmp_path, "list")
        assert seen.url in listed.stdout


async def test_add_refuses_plain_http_to_another_host_and_prints_no_secret(
    database_url: str, tmp_path: Path, partner: str
) -> None:
    refused = await _webhooks(database_url, tmp_path, "add", PARTNER, "http://hooks.example.com/in")
    assert refused.returncode == 1
    assert SECRET_PREFIX not in refused.stdout
    assert "https://" in refused.stderr
