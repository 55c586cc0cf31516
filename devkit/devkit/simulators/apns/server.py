"""Runs the simulator: the APNs listener (HTTP/2 over TLS) and the admin listener, one event loop.

`serve` is for hosts that own the loop (tests, the dev-stack supervisor); `run` is the blocking
entry point for `scoreline sim apns`.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import ssl
from collections.abc import Iterator
from pathlib import Path

import uvicorn

from devkit.simulators.apns.admin import create_admin_app
from devkit.simulators.apns.config import ApnsSimConfig
from devkit.simulators.apns.faults import FaultInjector
from devkit.simulators.apns.journal import Journal
from devkit.simulators.apns.journal_file import JournalFile
from devkit.simulators.apns.keys import ensure_signing_key, ensure_tls_certificate, load_public_keys
from devkit.simulators.apns.protocol import ApnsProtocol, ConnectionRegistry
from devkit.simulators.apns.provider_token import ProviderTokenVerifier
from devkit.simulators.apns.service import PushService
from scoreline.logging import get_logger

log = get_logger("devkit.simulators.apns")


class _EmbeddedUvicorn(uvicorn.Server):
    """uvicorn that leaves SIGINT/SIGTERM to the host process and reports when it listens."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.listening = asyncio.Event()

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        # uvicorn would otherwise install its own handlers and re-raise the signal on exit,
        # taking the supervisor's shutdown away from it.
        yield

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        self.listening.set()


def tls_context(cert_path: Path, key_path: Path) -> ssl.SSLContext:
    """Server TLS as APNs offers it: TLS 1.2+, ALPN `h2` offered but not required (aioapns sends none)."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(cert_path, key_path)
    context.set_alpn_protocols(["h2"])
    return context


async def serve(config: ApnsSimConfig, *, ready: asyncio.Event | None = None) -> None:
    """Serve both listeners until cancelled; set `ready` once both accept connections.

    Key material in `config.data_dir` is created on first use and reused afterwards. On
    cancellation, open APNs connections get GOAWAY `Shutdown`, as when Apple takes a host down.
    With `config.journal_file`, every record is appended there too; the file is closed on the way out.
    """
    journal_file = None if config.journal_file is None else JournalFile(config.journal_file)
    try:
        await _serve(config, Journal(file=journal_file), ready)
    finally:
        if journal_file is not None:
            journal_file.close()


async def _serve(config: ApnsSimConfig, journal: Journal, ready: asyncio.Event | None) -> None:
    _, public_path = ensure_signing_key(config.data_dir, config.key_id)
    cert_path, key_path = ensure_tls_certificate(config.data_dir, config.host)
    keys = load_public_keys(config.data_dir)
    faults, connections = FaultInjector(), ConnectionRegistry()
    service = PushService(
        bundle_id=config.topic,
        verifier=ProviderTokenVerifier(config.team_id, keys),
        journal=journal,
        faults=faults,
        strict_payloads=config.strict_payloads,
    )
    loop = asyncio.get_running_loop()
    apns_server = await loop.create_server(
        lambda: ApnsProtocol(service, connections),
        config.host,
        config.port,
        ssl=tls_context(cert_path, key_path),
    )

    def readiness() -> dict[str, str]:
        return {
            "tls": "ok" if apns_server.is_serving() and cert_path.exists() else "listener down",
            "signing_keys": "ok" if keys else "no public keys",
        }

    app = create_admin_app(
        journal=journal, faults=faults, service=service, connections=connections, readiness=readiness
    )
    admin = _EmbeddedUvicorn(
        uvicorn.Config(
            app,
            log_config=None,
            log_level="warning",
            access_log=False,
            lifespan="off",
            timeout_graceful_shutdown=2,
        )
    )
    try:
        with _listening_socket(config.host, config.admin_port) as admin_socket:
            admin_task = loop.create_task(admin.serve(sockets=[admin_socket]))
            try:
                await _until_listening(admin, admin_task)
                log.info(
                    "apns_simulator_ready",
                    apns=f"https://{config.host}:{config.port}",
                    admin=f"http://{config.host}:{config.admin_port}",
                    cert=str(cert_path),
                    public_key=str(public_path),
                    key_ids=sorted(keys),
                    topic=config.topic,
                )
                if ready is not None:
                    ready.set()
                await asyncio.shield(admin_task)
            finally:
                admin.should_exit = True
                with contextlib.suppress(asyncio.CancelledError):
                    await admin_task
    finally:
        apns_server.close()
        connections.shut_down_all()
        await apns_server.wait_closed()
        log.info("apns_simulator_stopped")


async def _until_listening(admin: _EmbeddedUvicorn, admin_task: asyncio.Task[None]) -> None:
    listening = asyncio.get_running_loop().create_task(admin.listening.wait())
    try:
        await asyncio.wait({listening, admin_task}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        listening.cancel()
    if not admin.listening.is_set():
        admin_task.result()
        raise RuntimeError("APNs simulator admin server stopped during start-up")


def _listening_socket(host: str, port: int) -> socket.socket:
    """Bind the admin port ourselves, so a busy port raises here instead of uvicorn exiting the process.

    The socket is created with an explicit IPPROTO_TCP: asyncio only sets TCP_NODELAY on accepted
    sockets whose protocol says TCP, and without it every keep-alive admin call waits ~40 ms on
    delayed ACKs (uvicorn writes headers and body separately).
    """
    family, kind, proto, _, address = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP, flags=socket.AI_PASSIVE
    )[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    return sock


def run(config: ApnsSimConfig) -> None:
    """Serve until SIGINT or SIGTERM, then shut down cleanly. Logging is the caller's to configure."""
    asyncio.run(_serve_until_signalled(config))


async def _serve_until_signalled(config: ApnsSimConfig) -> None:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    server = loop.create_task(serve(config))
    stopping = loop.create_task(stop.wait())
    await asyncio.wait({server, stopping}, return_when=asyncio.FIRST_COMPLETED)
    stopping.cancel()
    server.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await server
