"""A real simulator on free ports for the whole session, reset before each test."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import socket
import ssl
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
import pytest_asyncio
from aioapns import APNs
from aioapns.connection import APNsDevelopmentClientProtocol

from devkit.simulators.apns.config import ApnsSimConfig
from devkit.simulators.apns.keys import ensure_signing_key, ensure_tls_certificate
from devkit.simulators.apns.server import serve

LIVE_ACTIVITY_SUFFIX = ".push-type.liveactivity"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def client_tls(cert_path: Path) -> ssl.SSLContext:
    """Trust the simulator's certificate the way the sender will, with strict X.509 checks on."""
    context = ssl.create_default_context(cafile=str(cert_path))
    context.verify_flags |= ssl.VERIFY_X509_STRICT
    return context


def device_token() -> str:
    """A Live-Activity-length token (80 bytes), unique per call."""
    return secrets.token_hex(80)


@dataclass(frozen=True)
class Sim:
    config: ApnsSimConfig
    cert_path: Path
    p8_path: Path
    admin: httpx.AsyncClient
    # One token for the session, as a sender reuses it: a new one on a warm connection is 429.
    session_jwt: str

    @property
    def apns_url(self) -> str:
        return f"https://localhost:{self.config.port}"

    @property
    def la_topic(self) -> str:
        return self.config.topic + LIVE_ACTIVITY_SUFFIX

    def provider_token(
        self,
        *,
        iat: int | None = None,
        kid: str | None = None,
        iss: str | None = None,
        key: str | None = None,
    ) -> str:
        return jwt.encode(
            {"iss": iss or self.config.team_id, "iat": int(time.time()) if iat is None else iat},
            key or self.p8_path.read_text(),
            algorithm="ES256",
            headers={"kid": kid or self.config.key_id},
        )

    def la_headers(self, **overrides: str) -> dict[str, str]:
        headers = {
            "authorization": f"bearer {self.session_jwt}",
            "apns-topic": self.la_topic,
            "apns-push-type": "liveactivity",
            "apns-priority": "10",
        }
        headers.update(overrides)
        return headers

    def aioapns_client(self, **options: Any) -> APNs:
        """aioapns 4.0 aimed at the simulator: the documented protocol-class override, no patching."""
        port = self.config.port

        class LocalProtocol(APNsDevelopmentClientProtocol):
            APNS_SERVER = "localhost"
            APNS_PORT = port

        client = APNs(
            key=self.p8_path.read_text(),
            key_id=self.config.key_id,
            team_id=self.config.team_id,
            topic=self.config.topic,
            use_sandbox=True,
            ssl_context=client_tls(self.cert_path),
            **options,
        )
        client.pool.protocol_class = LocalProtocol
        return client

    async def pushes(self, token: str | None = None, limit: int = 100) -> list[dict[str, Any]]:
        params: dict[str, str | int] = {"limit": limit}
        if token is not None:
            params["token"] = token
        response = await self.admin.get("/_sim/pushes", params=params)
        response.raise_for_status()
        pushes: list[dict[str, Any]] = response.json()["pushes"]
        return pushes

    async def fault(self, **spec: Any) -> dict[str, Any]:
        response = await self.admin.post("/_sim/faults", json=spec)
        assert response.status_code == 201, response.text
        fault: dict[str, Any] = response.json()
        return fault


def provider_token(
    config: ApnsSimConfig,
    key: str,
    *,
    iat: int | None = None,
    kid: str | None = None,
    iss: str | None = None,
) -> str:
    return jwt.encode(
        {"iss": iss or config.team_id, "iat": int(time.time()) if iat is None else iat},
        key,
        algorithm="ES256",
        headers={"kid": kid or config.key_id},
    )


def la_update(*, omit: tuple[str, ...] = (), **aps: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"timestamp": int(time.time()), "event": "update", "content-state": {"home": 1}}
    body.update(aps)
    return {"aps": {key: value for key, value in body.items() if key not in omit}}


def la_start(*, omit: tuple[str, ...] = (), **aps: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "timestamp": int(time.time()),
        "event": "start",
        "attributes-type": "MatchAttributes",
        "attributes": {"matchId": "m-1"},
        "content-state": {"home": 0, "away": 0},
        "alert": {"title": "Kick-off", "body": "Home v Away"},
    }
    body.update(aps)
    return {"aps": {key: value for key, value in body.items() if key not in omit}}


@contextlib.asynccontextmanager
async def running_simulator(config: ApnsSimConfig) -> AsyncIterator[None]:
    ready = asyncio.Event()
    task = asyncio.create_task(serve(config, ready=ready))
    waiter = asyncio.create_task(ready.wait())
    await asyncio.wait({task, waiter}, timeout=15, return_when=asyncio.FIRST_COMPLETED)
    waiter.cancel()
    if task.done():
        task.result()
    assert ready.is_set(), "simulator did not become ready"
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def sim_config(data_dir: Path, **overrides: Any) -> ApnsSimConfig:
    return ApnsSimConfig(data_dir=data_dir, port=free_port(), admin_port=free_port(), **overrides)


@pytest_asyncio.fixture(scope="session")
async def sim_session(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Sim]:
    config = sim_config(tmp_path_factory.mktemp("apns-sim"))
    async with running_simulator(config):
        p8_path, _ = ensure_signing_key(config.data_dir, config.key_id)
        cert_path, _ = ensure_tls_certificate(config.data_dir, config.host)
        async with httpx.AsyncClient(base_url=f"http://{config.host}:{config.admin_port}") as admin:
            yield Sim(config, cert_path, p8_path, admin, provider_token(config, p8_path.read_text()))


@pytest_asyncio.fixture
async def sim(sim_session: Sim) -> Sim:
    """The shared simulator with an empty journal and no faults."""
    for path in ("/_sim/pushes", "/_sim/faults"):
        (await sim_session.admin.delete(path)).raise_for_status()
    return sim_session


@pytest_asyncio.fixture
async def apns(sim: Sim) -> AsyncIterator[httpx.AsyncClient]:
    """A fresh HTTP/2 connection per test, since APNs pins the provider token per connection."""
    async with httpx.AsyncClient(
        http2=True, verify=client_tls(sim.cert_path), base_url=sim.apns_url
    ) as client:
        yield client


@pytest.fixture
def token() -> str:
    return device_token()
