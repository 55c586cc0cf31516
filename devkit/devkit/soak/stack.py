"""The soak's stack: the dev stack's parts with two workers and two API processes, kept running.

It is `scoreline dev` with what a production deployment has and a laptop's dev stack does not:
- two workers on one task queue (one reaches Postgres through a TCP proxy the soak can cut) and
  two API processes (the load's clients move between them);
- a supervisor that starts a Scoreline process again a moment after it died, as systemd or
  Kubernetes would: the soak kills processes, it does not leave them dead;
- its own embedded Postgres and Redis even when `DATABASE_URL` / `REDIS_URL` are set, because the
  soak restarts them (a shared server is not the soak's to restart) and starts from empty tables.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import signal
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import redis.asyncio as aioredis

from devkit.devstack import health
from devkit.devstack.ports import choose_port, free_port
from devkit.devstack.process import ChildProcess
from devkit.devstack.stack import DevOptions, DevStack, PartFailed, Ports
from devkit.devstack.tcp_proxy import CuttableProxy
from devkit.soak.schedule import APIS, CUT_WORKER, WORKERS
from scoreline.settings import Settings

RESTART_DELAY = 1.0
"""Seconds between a process's death and its restart (systemd's `RestartSec`)."""
RESTARTED = (*WORKERS, *APIS, "feeds")
"""The Scoreline processes the supervisor brings back; the services are restarted by their faults."""
APNS_JOURNAL = "apns-journal.jsonl"


class SoakStack(DevStack):
    """One soak's processes. `start()` brings everything up; `supervise()` keeps Scoreline's own
    processes running until cancelled; `stop()` stops them all."""

    def __init__(self, options: DevOptions, environment: Settings) -> None:
        own_services = environment.model_copy(update={"database_url": None, "redis_url": None})
        super().__init__(options, own_services, monitoring=None, probed_worker=WORKERS[0])
        self.proxy: CuttableProxy | None = None
        self.restarts: Counter[str] = Counter()
        self.api_urls: tuple[str, ...] = ()
        self._released: dict[str, asyncio.Event] = {}
        """Per process, set unless a fault is keeping it down or paused (the supervisor waits)."""

    @property
    def apns_journal(self) -> Path:
        return self.options.data_dir / APNS_JOURNAL

    def child(self, name: str) -> ChildProcess:
        return next(child for child in self.children if child.name == name)

    # -- the parts that differ from the dev stack --------------------------------------------------

    def _apns_options(self) -> tuple[str, ...]:
        return ("--journal-file", str(self.apns_journal))

    async def _start_worker(self) -> None:
        self.proxy = CuttableProxy.to_database(self.child_env["DATABASE_URL"])
        await self.proxy.start()
        through_proxy = self.proxy.database_url(self.child_env["DATABASE_URL"])
        for name in WORKERS:
            child = self._scoreline(name, "worker")
            overrides = {"WORKER_METRICS_ADDRESS": f"127.0.0.1:{free_port()}"}
            if name == CUT_WORKER:
                overrides["DATABASE_URL"] = through_proxy
            self.children.append(dataclasses.replace(child, env={**(child.env or {}), **overrides}))
            await self.children[-1].start()

    async def _start_api(self, ports: Ports) -> None:
        taken = {ports.api}
        api_ports = (ports.api, *(choose_port(ports.api + 1, taken) for _ in APIS[1:]))
        self.api_urls = tuple(f"http://127.0.0.1:{port}" for port in api_ports)
        await asyncio.gather(
            *(self._start_one_api(name, port) for name, port in zip(APIS, api_ports, strict=True))
        )

    async def _start_one_api(self, name: str, port: int) -> None:
        url = f"http://127.0.0.1:{port}"
        child = self._scoreline(name, "api", "--host", "127.0.0.1", "--port", str(port))
        await self._launch(child, lambda: health.http_problem(f"{url}/readyz"))

    # -- keeping it running --------------------------------------------------------------------

    async def supervise(self) -> None:
        """Restart each of `RESTARTED` a moment after it exits, unless a fault holds it; forever."""
        async with asyncio.TaskGroup() as group:
            for name in RESTARTED:
                group.create_task(self._keep_running(name))

    async def _keep_running(self, name: str) -> None:
        child = self.child(name)
        while True:
            await child.wait()
            await asyncio.sleep(RESTART_DELAY)
            await self._release_of(name).wait()
            if child.returncode is not None:
                self.restarts[name] += 1
                await child.start()

    def _release_of(self, name: str) -> asyncio.Event:
        if name not in self._released:
            self._released[name] = asyncio.Event()
            self._released[name].set()
        return self._released[name]

    @contextlib.contextmanager
    def held(self, name: str) -> Iterator[None]:
        """Keep the supervisor off `name` while a fault has it down."""
        released = self._release_of(name)
        released.clear()
        try:
            yield
        finally:
            released.set()

    # -- what the faults do to it ----------------------------------------------------------------

    def kill(self, name: str) -> int | None:
        """SIGKILL `name`'s whole process group (no goodbye, as a crashed host); its pid."""
        child = self.child(name)
        pid = child.pid
        if pid is not None and child.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
        return pid

    async def pause(self, name: str, seconds: float) -> None:
        """SIGSTOP `name` for `seconds`, then SIGCONT: alive but silent, its heartbeats stop."""
        child = self.child(name)
        if child.pid is None or child.returncode is not None:
            return
        with self.held(name):
            os.killpg(child.pid, signal.SIGSTOP)
            try:
                await asyncio.sleep(seconds)
            finally:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(child.pid, signal.SIGCONT)

    async def restart_service(self, name: str, down_for: float) -> None:
        """Stop Postgres or Redis (a fast shutdown), leave it down `down_for` seconds, start it
        again and wait until it answers."""
        child = self.child(name)
        with self.held(name):
            await child.stop()
            await asyncio.sleep(down_for)
            await child.start()
            url = self.addresses["postgres" if name == "postgres" else "redis"]
            check = health.postgres_problem if name == "postgres" else health.redis_problem
            try:
                await health.wait_until_ready(lambda: check(url), timeout=60, gave_up=lambda: None)
            except health.ReadinessError as error:
                raise PartFailed(name, f"did not come back: {error}", child.log_path) from error

    async def flush_redis(self) -> None:
        client = aioredis.from_url(self.addresses["redis"])
        try:
            await client.flushall()
        finally:
            await client.aclose()

    async def cut_database(self, seconds: float) -> None:
        """Break every connection of the proxied worker to Postgres and refuse new ones for `seconds`."""
        if self.proxy is None:
            return
        await self.proxy.cut()
        try:
            await asyncio.sleep(seconds)
        finally:
            await self.proxy.restore()

    async def stop(self) -> None:
        for name in (name for name, released in self._released.items() if not released.is_set()):
            child = self.child(name)
            if child.pid is not None and child.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(child.pid, signal.SIGCONT)
        await super().stop()
        if self.proxy is not None:
            await self.proxy.cut()


def soak_options(
    data_dir: Path,
    recordings: tuple[Path, ...],
    speed: float,
    start_in: float,
    tuning: tuple[tuple[str, str], ...],
) -> DevOptions:
    """The dev stack's options for a soak: the simulator reaches `t = 0` `start_in` seconds after
    it starts (the load's preparation happens in that countdown)."""
    return DevOptions(data_dir, 8000, recordings, speed, start_in=start_in, tuning=tuning)
