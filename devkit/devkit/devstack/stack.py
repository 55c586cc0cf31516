"""The dev stack supervisor: start every part in order, check each answers, stop them all for sure.

Order matters: Postgres, Redis and Temporal first (the rest need them), then the migrations, then
the simulators, the worker, the feed builder and the API together. A part that fails to start stops the others and
the stack exits non-zero naming it; a part that dies later does the same. Ctrl-C / SIGTERM stop
everything in reverse order and exit 0.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import uuid
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from devkit.devstack import embedded, health
from devkit.devstack.envfile import write_env_file
from devkit.devstack.monitoring import (
    MonitoringBinaries,
    alertmanager_config,
    alertmanager_process,
    find_binaries,
    prometheus_config,
    prometheus_process,
    repository_rules,
    write_config,
)
from devkit.devstack.ports import choose_port
from devkit.devstack.process import ChildProcess
from devkit.simulators.apns.keys import ensure_signing_key, ensure_tls_certificate
from domain.probe import WorkerProbeInput
from scoreline.db import migrate
from scoreline.logging import get_logger
from scoreline.settings import ENV_FILE_NAME, Settings
from scoreline.temporal.client import connect
from workflows.probe import WorkerProbeWorkflow

log = get_logger(__name__)

DATABASE_NAME = "scoreline"
PORTS_VARIABLE = "SCORELINE_DEV_PORTS"
"""`free`: every part on a free port, not its documented one (several stacks side by side)."""
SIMULATOR_HOST = "127.0.0.1"
"""Where the APNs simulator listens (its certificate names it)."""
STARTUP_TIMEOUT = 90.0


OnReady = Callable[["DevStack"], Coroutine[Any, Any, None]]
"""Runs once every part is ready (the demo's live monitor); cancelled when the stack stops."""


@dataclass(frozen=True)
class DevOptions:
    data_dir: Path
    api_port: int = 8000
    recordings: tuple[Path, ...] = ()
    speed: float = 1.0
    start_in: float = 30.0
    tuning: tuple[tuple[str, str], ...] = ()
    """Extra settings for the worker and API (the demo polls faster to keep up with 60x)."""
    provider_plan: ProviderPlan | None = None
    """The provider simulator's plan, which the workers' hourly budget then spends (None: the
    simulator keeps SportMonks' plans and the workers the configured budget)."""


@dataclass(frozen=True)
class ProviderPlan:
    """Calls per window the provider allows: one plan, told to the simulator and to our budget."""

    calls: int
    window: timedelta


@dataclass(frozen=True)
class Ports:
    api: int
    temporal: int
    temporal_ui: int
    provider: int
    apns: int
    apns_admin: int
    postgres: int
    redis: int
    worker_metrics: int
    feeds_metrics: int
    prometheus: int
    alertmanager: int

    @classmethod
    def choose(cls, api_port: int, *, defaults: bool = True) -> Ports:
        """Each part's documented port when free; with `defaults` off, a free port for every part
        (`SCORELINE_DEV_PORTS=free`): stacks started side by side (the test suite's processes)
        would otherwise both find 8233 free and race for it."""
        taken: set[int] = set()

        def port(preferred: int) -> int:
            return choose_port(preferred if defaults else None, taken)

        return cls(
            api=port(api_port),
            temporal=port(7233),
            temporal_ui=port(8233),
            provider=port(8100),
            apns=port(8443),
            apns_admin=port(8444),
            postgres=port(5432),
            redis=port(6379),
            worker_metrics=port(9464),
            feeds_metrics=port(9465),
            prometheus=port(9090),
            alertmanager=port(9093),
        )


def without_password(url: str) -> str:
    """`url` with its password, if it has one, shown as `***` (`postgresql://user:***@host/db`).

    The netloc is replaced in place, so everything else stays byte for byte what the user gave.
    """
    parts = urlsplit(url)
    if parts.password is None:
        return url
    user = parts.netloc.rpartition("@")[0].partition(":")[0]
    host = parts.netloc.rpartition("@")[2]
    return url.replace(parts.netloc, f"{user}:***@{host}", 1)


class PartFailed(RuntimeError):
    def __init__(self, part: str, reason: str, log_path: Path | None = None) -> None:
        where = f" (log: {log_path})" if log_path else ""
        super().__init__(f"{part} failed to start: {reason}{where}")
        self.part = part


@dataclass
class DevStack:
    """One run of `scoreline dev`. `environment` is the caller's settings, read from the real env only."""

    options: DevOptions
    environment: Settings
    children: list[ChildProcess] = field(default_factory=list)
    addresses: dict[str, str] = field(default_factory=dict)
    child_env: dict[str, str] = field(default_factory=dict)
    monitoring: MonitoringBinaries | None = field(default_factory=find_binaries)
    """Prometheus and Alertmanager, run with the stack when found on this machine."""
    probed_worker: str = "worker"
    """The worker process whose death fails the start-up probe."""

    @property
    def logs(self) -> Path:
        return self.options.data_dir / "logs"

    async def run(self, on_ready: OnReady | None = None) -> int:
        """Start, report ready, wait for a signal or a death, stop. Returns the exit code."""
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        try:
            return await self._run_until_stopped(stop, on_ready)
        finally:
            await self.stop()
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(sig)

    async def _run_until_stopped(self, stop: asyncio.Event, on_ready: OnReady | None) -> int:
        startup = asyncio.create_task(self.start())
        stopped = asyncio.create_task(stop.wait())
        await asyncio.wait({startup, stopped}, return_when=asyncio.FIRST_COMPLETED)
        if not startup.done():
            startup.cancel()
            await asyncio.gather(startup, return_exceptions=True)
            return 0
        try:
            startup.result()
        except PartFailed as failure:
            stopped.cancel()
            print(f"scoreline dev: {failure}", file=sys.stderr, flush=True)
            return 1
        print(self.ready_line(), flush=True)
        watchers = [asyncio.create_task(self._watch(child)) for child in self.children]
        extra = [asyncio.create_task(on_ready(self))] if on_ready else []
        done, _ = await asyncio.wait({stopped, *watchers}, return_when=asyncio.FIRST_COMPLETED)
        for task in (*watchers, *extra, stopped):
            task.cancel()
        await asyncio.gather(*watchers, *extra, stopped, return_exceptions=True)
        if stopped in done:
            return 0
        death = next(task for task in done if task is not stopped)
        print(f"scoreline dev: {death.result()}; stopping everything", file=sys.stderr, flush=True)
        return 1

    async def _watch(self, child: ChildProcess) -> str:
        code = await child.wait()
        return f"{child.name} exited unexpectedly with code {code} (log: {child.log_path})"

    async def start(self) -> None:
        self.options.data_dir.mkdir(parents=True, exist_ok=True)
        ports = Ports.choose(self.options.api_port, defaults=os.environ.get(PORTS_VARIABLE) != "free")
        database_url = self.environment.database_url or await self._start_postgres(ports.postgres)
        redis_url = self.environment.redis_url or await self._start_redis(ports.redis)
        temporal = await self._start_temporal(ports)
        await self._migrate(database_url)
        self._set_addresses(ports, database_url, redis_url, temporal)
        await self._start_monitoring(ports)
        # The worker reads the APNs signing key and the simulator's certificate as it starts; the
        # simulator, started beside it, creates both and keeps what it finds intact. Made here
        # first, so a worker that starts before the simulator finds them (on a loaded machine it
        # did not, and exited).
        apns_dir = self.options.data_dir / "apns"
        ensure_signing_key(apns_dir, self.environment.apns_key_id)
        ensure_tls_certificate(apns_dir, SIMULATOR_HOST)
        await asyncio.gather(
            self._start_apns(ports),
            self._start_provider(ports),
            self._start_worker(),
            self._start_feeds(),
            self._start_api(ports),
        )
        await self._probe_worker(temporal)
        write_env_file(self.options.data_dir / ENV_FILE_NAME, self.child_env)

    async def stop(self) -> None:
        """Reverse start order: the API and worker leave before the services they use."""
        for child in reversed(self.children):
            await child.stop()

    def ready_line(self) -> str:
        """The one stdout line tools parse; stdout ends up in terminals and CI logs, so no passwords
        (the real URLs are in `<data-dir>/env`)."""
        return "ready " + " ".join(f"{name}={without_password(url)}" for name, url in self.addresses.items())

    # -- parts -------------------------------------------------------------------------------

    async def _launch(
        self, child: ChildProcess, check: health.Check, timeout: float = STARTUP_TIMEOUT
    ) -> None:
        self.children.append(child)
        try:
            await child.start()
        except OSError as error:
            raise PartFailed(child.name, str(error), child.log_path) from error
        await self._await_ready(child, check, timeout=timeout)
        log.info("part ready", part=child.name, pid=child.pid)

    async def _await_ready(
        self,
        child: ChildProcess,
        check: health.Check,
        *,
        part: str | None = None,
        timeout: float = STARTUP_TIMEOUT,
    ) -> None:
        """Wait for `check` to pass; fail at once, naming `part` (default the child), if the child dies."""

        def died() -> str | None:
            if child.returncode is None:
                return None
            return f"{child.name} exited with code {child.returncode}:\n{child.log_tail()}"

        try:
            await health.wait_until_ready(check, timeout=timeout, gave_up=died)
        except health.ReadinessError as error:
            raise PartFailed(part or child.name, str(error), child.log_path) from error

    async def _start_postgres(self, port: int) -> str:
        try:
            server = embedded.postgres_process(
                self.options.data_dir / "postgres", port, self.logs / "postgres.log"
            )
        except (RuntimeError, OSError) as error:
            raise PartFailed("postgres", str(error)) from error
        await self._launch(server.process, lambda: health.postgres_problem(server.url))
        return await embedded.ensure_database(server.url, DATABASE_NAME)

    async def _start_redis(self, port: int) -> str:
        url = f"redis://127.0.0.1:{port}/0"
        child = embedded.redis_process(port, self.options.data_dir / "redis", self.logs / "redis.log")
        await self._launch(child, lambda: health.redis_problem(url))
        return url

    async def _start_temporal(self, ports: Ports) -> str:
        address = f"127.0.0.1:{ports.temporal}"
        try:
            child = embedded.temporal_process(
                ports.temporal,
                ports.temporal_ui,
                self.options.data_dir / "temporal" / "temporal.db",
                self.logs / "temporal.log",
            )
        except RuntimeError as error:
            raise PartFailed("temporal", str(error)) from error
        await self._launch(child, lambda: health.temporal_problem(address))
        await self._await_ready(
            child, lambda: health.http_problem(f"http://127.0.0.1:{ports.temporal_ui}/"), part="temporal-ui"
        )
        return address

    async def _migrate(self, database_url: str) -> None:
        try:
            await asyncio.to_thread(migrate.upgrade, database_url)
        except Exception as error:  # any migration failure stops the stack, named
            raise PartFailed("migrate", f"{type(error).__name__}: {error}") from error

    def _set_addresses(self, ports: Ports, database_url: str, redis_url: str, temporal: str) -> None:
        self.addresses = {
            "api": f"http://127.0.0.1:{ports.api}",
            "temporal": temporal,
            "temporal-ui": f"http://127.0.0.1:{ports.temporal_ui}",
            "provider": f"http://127.0.0.1:{ports.provider}",
            "apns": f"https://127.0.0.1:{ports.apns}",
            "apns-admin": f"http://127.0.0.1:{ports.apns_admin}",
            "postgres": database_url,
            "redis": redis_url,
            "api-metrics": f"http://127.0.0.1:{ports.api}/metrics",
            "worker-metrics": f"http://127.0.0.1:{ports.worker_metrics}/metrics",
            "feeds-metrics": f"http://127.0.0.1:{ports.feeds_metrics}/metrics",
        }
        if self.monitoring is not None:
            self.addresses["prometheus"] = f"http://127.0.0.1:{ports.prometheus}"
            self.addresses["alertmanager"] = f"http://127.0.0.1:{ports.alertmanager}"
        apns_dir = self.options.data_dir / "apns"
        self.child_env = {
            "DATABASE_URL": database_url,
            "REDIS_URL": redis_url,
            "TEMPORAL_ADDRESS": temporal,
            "TEMPORAL_NAMESPACE": self.environment.temporal_namespace,
            "TEMPORAL_UI_URL": self.addresses["temporal-ui"],
            "API_URL": self.addresses["api"],
            "PROVIDER_URL": self.addresses["provider"],
            "PROVIDER_TOKEN": self.environment.provider_token.get_secret_value(),
            # One simulator serves both APIs: Cricket v2 lives below /api/v2.0.
            "CRICKET_PROVIDER_URL": f"{self.addresses['provider']}/api/v2.0",
            "CRICKET_PROVIDER_TOKEN": self.environment.provider_token.get_secret_value(),
            "APNS_URL": self.addresses["apns"],
            "APNS_ADMIN_URL": self.addresses["apns-admin"],
            "APNS_TEAM_ID": self.environment.apns_team_id,
            "APNS_KEY_ID": self.environment.apns_key_id,
            "APNS_TOPIC": self.environment.apns_topic,
            "APNS_KEY_PATH": str(apns_dir / f"AuthKey_{self.environment.apns_key_id}.p8"),
            "APNS_CA_FILE": str(apns_dir / "cert.pem"),
            "SCORELINE_DATA_DIR": str(self.options.data_dir),
            "WORKER_METRICS_ADDRESS": f"127.0.0.1:{ports.worker_metrics}",
            "FEEDS_METRICS_ADDRESS": f"127.0.0.1:{ports.feeds_metrics}",
            "API_METRICS_ADDRESS": "",
            "ALERTMANAGER_URL": self.addresses.get("alertmanager", ""),
        }
        plan = self.options.provider_plan
        if plan is not None:
            self.child_env["PROVIDER_HOURLY_BUDGET"] = str(plan.calls)
            self.child_env["PROVIDER_BUDGET_WINDOW"] = f"{plan.window.total_seconds():g}s"

    def _scoreline(self, name: str, *args: str) -> ChildProcess:
        env = {
            **os.environ,
            **dict(self.options.tuning),
            **self.child_env,
            "LOG_FORMAT": "json",
            "PYTHONUNBUFFERED": "1",
        }
        argv = [sys.executable, "-m", "scoreline", *args]
        return ChildProcess(name, argv, self.logs / f"{name}.log", env=env)

    async def _start_monitoring(self, ports: Ports) -> None:
        """Alertmanager, then Prometheus scraping the stack's three metrics endpoints with the
        repository's rules, when both binaries are on this machine (else the stack runs without)."""
        binaries = self.monitoring
        if binaries is None:
            return
        directory = self.options.data_dir / "monitoring"
        alertmanager_url = self.addresses["alertmanager"]
        alertmanager = alertmanager_process(
            binaries.alertmanager,
            write_config(directory / "alertmanager.yml", alertmanager_config(None)),
            directory / "alertmanager",
            ports.alertmanager,
            self.logs / "alertmanager.log",
        )
        await self._launch(alertmanager, lambda: health.http_problem(f"{alertmanager_url}/-/ready"))
        targets = {
            "scoreline-api": self.addresses["api-metrics"],
            "scoreline-worker": self.addresses["worker-metrics"],
            "scoreline-feeds": self.addresses["feeds-metrics"],
        }
        config = prometheus_config(targets, rules=repository_rules(), alertmanager=alertmanager_url)
        prometheus = prometheus_process(
            binaries.prometheus,
            write_config(directory / "prometheus.yml", config),
            directory / "prometheus",
            ports.prometheus,
            self.logs / "prometheus.log",
        )
        prometheus_url = self.addresses["prometheus"]
        await self._launch(prometheus, lambda: health.http_problem(f"{prometheus_url}/-/ready"))

    def _apns_options(self) -> tuple[str, ...]:
        """More `scoreline sim apns` options (the soak keeps the simulator's complete journal)."""
        return ()

    async def _start_apns(self, ports: Ports) -> None:
        child = self._scoreline(
            "apns",
            "sim", "apns",
            "--data-dir", str(self.options.data_dir),
            "--host", SIMULATOR_HOST,
            "--port", str(ports.apns),
            "--admin-port", str(ports.apns_admin),
            *self._apns_options(),
        )  # fmt: skip
        await self._launch(child, lambda: health.http_problem(f"{self.addresses['apns-admin']}/readyz"))

    async def _start_provider(self, ports: Ports) -> None:
        args = [
            "sim", "provider",
            "--port", str(ports.provider),
            "--speed", f"{self.options.speed:g}",
            "--start-in", f"{self.options.start_in:g}",
        ]  # fmt: skip
        for recording in self.options.recordings:
            args += ["--recording", str(recording)]
        plan = self.options.provider_plan
        if plan is not None:
            args += ["--plan-calls", str(plan.calls), "--plan-window", f"{plan.window.total_seconds():g}"]
        child = self._scoreline("provider", *args)
        await self._launch(child, lambda: health.http_problem(f"{self.addresses['provider']}/readyz"))

    async def _start_worker(self) -> None:
        child = self._scoreline("worker", "worker")
        self.children.append(child)
        await child.start()

    async def _start_feeds(self) -> None:
        child = self._scoreline("feeds", "feeds")
        self.children.append(child)
        await child.start()

    async def _start_api(self, ports: Ports) -> None:
        child = self._scoreline("api", "api", "--host", "127.0.0.1", "--port", str(ports.api))
        await self._launch(child, lambda: health.http_problem(f"{self.addresses['api']}/readyz"))

    async def _probe_worker(self, temporal: str) -> None:
        """The worker is ready when it runs a workflow that reaches Postgres and Redis."""
        worker = next(child for child in self.children if child.name == self.probed_worker)

        async def check() -> str | None:
            client = await connect(temporal, self.environment.temporal_namespace)
            try:
                result = await client.execute_workflow(
                    WorkerProbeWorkflow.run,
                    WorkerProbeInput(),
                    id=f"worker-probe-{uuid.uuid4()}",
                    task_queue=self.environment.temporal_task_queue,
                    execution_timeout=timedelta(seconds=20),
                )
            except Exception as error:  # noqa: BLE001 - reported as the reason the worker is not ready
                return f"probe workflow: {error}"
            return None if result.ok else f"probe: postgres={result.postgres} redis={result.redis}"

        await self._await_ready(worker, check)
