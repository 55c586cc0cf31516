"""`scoreline api` as its own process, so a test can kill it (SIGKILL) and start it again on the
same port while a browser keeps the page open."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from dataclasses import dataclass, field

import httpx

from scoreline.settings import Settings
from tests.support.waiting import eventually


@dataclass
class ApiProcess:
    settings: Settings
    port: int
    process: subprocess.Popen[bytes] | None = field(default=None, init=False)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> None:
        self.process = self._spawn()
        async with httpx.AsyncClient(base_url=self.url, timeout=2) as http:
            await eventually(lambda: self._healthy(http), within=30, every=0.1)

    def _spawn(self) -> subprocess.Popen[bytes]:
        environment = {
            **os.environ,
            "DATABASE_URL": self.settings.require_database_url(),
            "REDIS_URL": self.settings.require_redis_url(),
            "TEMPORAL_ADDRESS": self.settings.temporal_address,
            "TEMPORAL_NAMESPACE": self.settings.temporal_namespace,
            "TEMPORAL_TASK_QUEUE": self.settings.temporal_task_queue,
            "COMMAND_ANSWER_TIMEOUT": "30s",
            "LOG_FORMAT": "json",
        }
        return subprocess.Popen(
            [sys.executable, "-m", "scoreline", "api", "--port", str(self.port)],
            env=environment,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    async def _healthy(self, http: httpx.AsyncClient) -> bool:
        try:
            return (await http.get("/readyz")).status_code == 200
        except httpx.TransportError:
            return False

    def kill(self) -> None:
        """SIGKILL: no graceful shutdown, open connections just drop."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=10)
