"""One signed POST of one message, and what came back.

Bounded in every direction a receiver could stretch: a total deadline (connect, send, answer),
redirects not followed (a 3xx is a failure: a receiver that moved must be re-registered, and a
redirect must not lead us to an address the SSRF check refused), and at most `ANSWER_HEAD_BYTES`
of the answer's body read, kept for the delivery log; a connection whose answer was not read to
its end is closed, not reused.

The client is aiohttp's, not httpx (the project's HTTP client elsewhere): httpx's pool scans, and
polls the socket of, every pooled connection on each request and each answer, ~1-5 ms of CPU a
POST at 50-250 kept-alive connections, which holds one feeds process to ~100 deliveries/s; aiohttp
keeps connections alive per host for ~0.12 ms a POST (both measured against one local receiver).
A kept-alive connection the receiver closed meanwhile fails the send before any answer: it goes
once more on a new connection (same `webhook-id`: at least once).
"""

from __future__ import annotations

import asyncio
import ssl
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Final

import aiohttp
import certifi

from scoreline.webhooks.signing import signed_headers
from scoreline.webhooks.urls import Target, UrlPolicy, UrlRefusedError, pin

ANSWER_HEAD_BYTES: Final = 2048
USER_AGENT: Final = "Scoreline-Webhooks/1"


@dataclass(frozen=True, slots=True)
class Answer:
    """What one attempt got: a status (None when no answer came), or why not."""

    status: int | None
    latency_ms: int
    head: str
    error: str | None = None
    retry_after: str | None = None

    @property
    def delivered(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


class Sender:
    """POSTs over kept-alive connections; `aclose()` when done."""

    def __init__(self, policy: UrlPolicy, timeout: timedelta, max_connections: int) -> None:
        self._policy = policy
        self._timeout = timeout.total_seconds()
        self._max_connections = max_connections
        self._session: aiohttp.ClientSession | None = None
        """Made at the first send: an aiohttp session belongs to the running event loop."""

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def post(self, url: str, msg_id: str, body: bytes, signing_secrets: list[str]) -> Answer:
        started = time.perf_counter()

        def elapsed() -> int:
            return round((time.perf_counter() - started) * 1000)

        try:
            async with asyncio.timeout(self._timeout):  # the DNS look-up included: a lease ends
                try:
                    target = await pin(url, self._policy)
                except (UrlRefusedError, OSError) as error:
                    return Answer(status=None, latency_ms=elapsed(), head="", error=f"refused: {error}")
                headers = {
                    "content-type": "application/json",
                    **signed_headers(signing_secrets, msg_id, datetime.now(UTC), body),
                }
                if target.host_header is not None:
                    headers["host"] = target.host_header
                try:
                    status, head, retry_after = await self._send(target, headers, body)
                except aiohttp.ServerDisconnectedError:
                    status, head, retry_after = await self._send(target, headers, body)
        except (TimeoutError, aiohttp.ClientError, OSError, ValueError) as error:
            return Answer(status=None, latency_ms=elapsed(), head="", error=_describe(error))
        return Answer(status=status, latency_ms=elapsed(), head=head, retry_after=retry_after)

    async def _send(
        self, target: Target, headers: dict[str, str], body: bytes
    ) -> tuple[int, str, str | None]:
        async with self._client().post(
            target.url,
            data=body,
            headers=headers,
            allow_redirects=False,
            server_hostname=target.sni_hostname,
        ) as response:
            head = await _read_head(response.content)
            return response.status, head, response.headers.get("retry-after")

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None:
            tls = ssl.create_default_context(cafile=certifi.where())
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=self._max_connections, ssl=tls),
                headers={"user-agent": USER_AGENT},
                auto_decompress=False,
            )
        return self._session


async def _read_head(content: aiohttp.StreamReader) -> str:
    """The first `ANSWER_HEAD_BYTES` of the body as text Postgres can store; the rest is never
    read (the connection is then closed as the answer is released)."""
    chunks = bytearray()
    while len(chunks) < ANSWER_HEAD_BYTES:
        chunk = await content.read(ANSWER_HEAD_BYTES - len(chunks))
        if not chunk:
            break
        chunks += chunk
    return bytes(chunks).decode("utf-8", errors="replace").replace("\x00", "")


def _describe(error: BaseException) -> str:
    if isinstance(error, TimeoutError):
        return "timeout"
    if isinstance(error, aiohttp.ServerDisconnectedError):
        return "no complete answer (connection closed)"
    if isinstance(error, aiohttp.ClientResponseError):
        first = (error.message or "").strip().splitlines()
        return f"not an HTTP/1.x answer: {first[0] if first else error.status}"
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
