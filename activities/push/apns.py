"""The APNs client: a small pool of HTTP/2 connections, provider-token auth, one request per call.

Configured from settings (`APNS_URL`, `APNS_CA_FILE`, `APNS_TEAM_ID`, `APNS_KEY_ID`,
`APNS_KEY_PATH`, `APNS_TOPIC`, `APNS_MAX_CONNECTIONS`, `APNS_REQUEST_TIMEOUT`); tests and the dev
stack point `APNS_URL` at the simulator and `APNS_CA_FILE` at its self-signed certificate.

Why not aioapns (4.0), the usual asyncio APNs client. It does the easy parts (custom
`ssl_context`, `PushType.LIVEACTIVITY`, a host override by subclassing its protocol class), but not
what exactly-once delivery and Apple's token rules need:

- it resends in-flight requests by itself when a connection closes (GOAWAY, a reset, a protocol
  error), even those APNs may already have processed: a goal alert can arrive twice, and the
  attempt never reaches our log;
- it has no per-request timeout, and cancelling a send to add one breaks the connection: the late
  answer calls `set_result` on the cancelled future inside `data_received`, the connection drops,
  and every other request on it is resent;
- it never acknowledges received data, so after about 64 KB of error bodies (a 410 or 429 storm)
  the connection dies with `FlowControlError`, and it sends without
  waiting for flow-control window (a `FlowControlError` then costs a one-second sleep);
- it mints a JWT per connection, re-mints every 30 minutes, and has no hook for 403
  `ExpiredProviderToken`; and its pool busy-polls every 10 ms when full.

So this module and `connection` are about 300 lines on `h2` (already a dependency) that say, for
every request, whether APNs can have processed it (`NotSent` / `MaybeSent`), keep one provider token
per connection, and never retry on their own: retries are the caller's decision (`drain`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import ssl
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from activities.push.connection import ApnsConnection
from activities.push.provider_token import ProviderToken, ProviderTokens
from scoreline.logging import get_logger
from scoreline.settings import Settings

LIVE_ACTIVITY_SUFFIX = ".push-type.liveactivity"
CONNECT_TIMEOUT_S = 10.0
STREAMS_PER_CONNECTION = 128
CLOSE_WAIT = 1.0
"""Seconds `aclose` waits for the connections' transports to finish closing."""

log = get_logger(__name__)


@dataclass(frozen=True)
class ApnsConfig:
    """Where APNs is and who we are to it."""

    host: str
    port: int
    bundle_id: str
    team_id: str
    key_id: str
    key_path: Path
    ca_file: Path | None = None
    environment: Literal["sandbox", "production"] = "sandbox"
    max_connections: int = 4
    request_timeout: float = 10.0

    @classmethod
    def from_settings(cls, settings: Settings) -> ApnsConfig:
        if settings.apns_key_path is None:
            raise RuntimeError("APNS_KEY_PATH is not set (the .p8 signing key for provider tokens)")
        url = urlsplit(settings.apns_url)
        if url.scheme != "https" or not url.hostname:
            raise RuntimeError(f"APNS_URL must be https://host[:port], got {settings.apns_url!r}")
        return cls(
            host=url.hostname,
            port=url.port or 443,
            bundle_id=settings.apns_topic,
            team_id=settings.apns_team_id,
            key_id=settings.apns_key_id,
            key_path=settings.apns_key_path,
            ca_file=settings.apns_ca_file,
            environment=settings.apns_environment,
            max_connections=settings.apns_max_connections,
            request_timeout=settings.apns_request_timeout.total_seconds(),
        )

    @property
    def topic(self) -> str:
        """`apns-topic` for Live Activity pushes: the bundle id plus `.push-type.liveactivity`."""
        return self.bundle_id + LIVE_ACTIVITY_SUFFIX

    def tls(self) -> ssl.SSLContext:
        """TLS 1.2+, ALPN h2, trusting `ca_file` (the simulator's certificate) when set."""
        context = ssl.create_default_context(cafile=str(self.ca_file) if self.ca_file else None)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.set_alpn_protocols(["h2"])
        return context


@dataclass(frozen=True)
class ApnsAnswer:
    """APNs' answer to one request."""

    status: int
    reason: str | None
    apns_id: str
    timestamp_ms: int | None
    """On 410: when APNs learnt the token was dead (ms since epoch)."""
    latency_ms: float
    token: ProviderToken
    """The provider token the request carried (for a refresh after `ExpiredProviderToken`)."""


class ApnsClient:
    """Sends Live Activity pushes; one instance per worker process, shared by every activity."""

    def __init__(self, config: ApnsConfig, tokens: ProviderTokens | None = None) -> None:
        self.config = config
        self.tokens = tokens or ProviderTokens(config.key_path.read_text(), config.key_id, config.team_id)
        self._tls = config.tls()
        self._connections: list[ApnsConnection] = []
        self._opening = asyncio.Lock()

    @classmethod
    def from_settings(cls, settings: Settings) -> ApnsClient:
        return cls(ApnsConfig.from_settings(settings))

    async def send(
        self,
        device_token: str,
        body: bytes,
        *,
        priority: int,
        expiration: int,
        go: Callable[[], bool] | None = None,
    ) -> ApnsAnswer:
        """POST one Live Activity push; every answer is returned, never retried here. `go`: asked
        right before the request's first byte (`ApnsConnection.request`).

        Raises:
            Withheld: `go` said no.
            NotSent: APNs cannot have processed it (no connection, GOAWAY, refused stream).
            MaybeSent: It went out and no answer came back.
        """
        connection = await self._connection()
        apns_id = str(uuid.uuid4())
        headers = [
            (":path", f"/3/device/{device_token}"),
            ("authorization", connection.token.header),
            ("apns-id", apns_id),
            ("apns-topic", self.config.topic),
            ("apns-push-type", "liveactivity"),
            ("apns-priority", str(priority)),
            ("apns-expiration", str(expiration)),
        ]
        started = time.perf_counter()
        response = await connection.request(headers, body, self.config.request_timeout, go)
        latency_ms = (time.perf_counter() - started) * 1000
        reason, timestamp = _error_body(response.body) if response.status != 200 else (None, None)
        if response.status == 429 and reason == "TooManyProviderTokenUpdates":
            # The connection is unusable for a while (Apple, forum thread 675879): use another.
            connection.retire()
        return ApnsAnswer(
            status=response.status,
            reason=reason,
            apns_id=response.headers.get("apns-id", apns_id),
            timestamp_ms=timestamp,
            latency_ms=latency_ms,
            token=connection.token,
        )

    def refresh_token(self, rejected: ProviderToken) -> bool:
        """After 403 `ExpiredProviderToken`; see `ProviderTokens.refresh`. Old connections retire on next use."""
        return self.tokens.refresh(rejected)

    async def aclose(self) -> None:
        connections, self._connections = list(self._connections), []
        for connection in connections:
            connection.close()
        # Until each transport has closed (at most CLOSE_WAIT): a loop shut down sooner leaves
        # uvloop's TLS handles open.
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(CLOSE_WAIT):
                await asyncio.gather(*(connection.wait_closed() for connection in connections))

    async def _connection(self) -> ApnsConnection:
        """The least busy connection carrying the current token; a new one when all are busy.

        "Busy" is `STREAMS_PER_CONNECTION` requests, far below APNs' limit: h2 counts a
        connection's open streams by walking them for every request, so a few connections with a
        hundred streams each cost much less CPU than one with five hundred.
        """
        token = self.tokens.current()
        best = self._pick(token)
        if best is not None and self._good_enough(best):
            return best
        async with self._opening:
            best = self._pick(token)
            if best is not None and self._good_enough(best):
                return best
            connection = await ApnsConnection.open(
                self.config.host, self.config.port, self._tls, token, self._forget, CONNECT_TIMEOUT_S
            )
            self._connections.append(connection)
            log.info("apns.connected", connections=len(self._connections), token_iat=token.issued_at)
            return connection

    def _good_enough(self, connection: ApnsConnection) -> bool:
        at_most = len(self._connections) >= self.config.max_connections
        return at_most or (connection.has_room and connection.in_flight < STREAMS_PER_CONNECTION)

    def _pick(self, token: ProviderToken) -> ApnsConnection | None:
        for connection in self._connections:
            if connection.token != token:
                # A connection keeps its token for life: a new token goes out on a new connection.
                connection.retire()
        self._connections = [connection for connection in self._connections if connection.usable]
        return min(self._connections, key=lambda connection: connection.in_flight, default=None)

    def _forget(self, connection: ApnsConnection) -> None:
        if connection in self._connections:
            self._connections.remove(connection)


def _error_body(body: bytes) -> tuple[str | None, int | None]:
    """`reason` and (on 410) `timestamp` from an error body; tolerant of junk."""
    try:
        document = json.loads(body) if body else {}
    except ValueError:
        return body[:100].decode("utf-8", "replace") or None, None
    if not isinstance(document, dict):
        return None, None
    reason = document.get("reason")
    timestamp = document.get("timestamp")
    return (
        str(reason) if reason is not None else None,
        int(timestamp) if isinstance(timestamp, int | float) and not isinstance(timestamp, bool) else None,
    )
