"""One signed POST of one message, and what came back.

Bounded in every direction a receiver could stretch: a total deadline (connect, send, answer),
redirects not followed (a 3xx is a failure: a receiver that moved must be re-registered, and a
redirect must not lead us to an address the SSRF check refused), and at most `ANSWER_HEAD_BYTES`
of the answer read, kept for the delivery log.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Final

import httpx

from scoreline.webhooks.signing import signed_headers
from scoreline.webhooks.urls import UrlPolicy, UrlRefusedError, pin

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
    """POSTs over one shared connection pool; `aclose()` when done."""

    def __init__(self, policy: UrlPolicy, timeout: timedelta, max_connections: int) -> None:
        self._policy = policy
        self._timeout = timeout.total_seconds()
        self._client = httpx.AsyncClient(
            timeout=httpx.Timeout(self._timeout),
            follow_redirects=False,
            limits=httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections),
            headers={"user-agent": USER_AGENT},
        )

    async def aclose(self) -> None:
        await self._client.aclose()

    async def post(self, url: str, msg_id: str, body: bytes, signing_secrets: list[str]) -> Answer:
        started = time.perf_counter()

        def elapsed() -> int:
            return round((time.perf_counter() - started) * 1000)

        try:
            target = await pin(url, self._policy)
        except (UrlRefusedError, OSError) as error:
            return Answer(status=None, latency_ms=elapsed(), head="", error=f"refused: {error}")
        headers = {
            "content-type": "application/json",
            **signed_headers(signing_secrets, msg_id, datetime.now(UTC), body),
        }
        extensions = {}
        if target.host_header is not None:
            headers["host"] = target.host_header
        if target.sni_hostname is not None:
            extensions["sni_hostname"] = target.sni_hostname
        try:
            async with asyncio.timeout(self._timeout):
                request = self._client.build_request(
                    "POST", target.url, content=body, headers=headers, extensions=extensions
                )
                response = await self._client.send(request, stream=True)
                try:
                    head = await _read_head(response)
                finally:
                    await response.aclose()
        except (httpx.HTTPError, TimeoutError, OSError) as error:
            return Answer(status=None, latency_ms=elapsed(), head="", error=_describe(error))
        return Answer(
            status=response.status_code,
            latency_ms=elapsed(),
            head=head,
            retry_after=response.headers.get("retry-after"),
        )


async def _read_head(response: httpx.Response) -> str:
    """The first `ANSWER_HEAD_BYTES` of the body as text Postgres can store; the rest is never read."""
    chunks = bytearray()
    async for chunk in response.aiter_raw():
        chunks += chunk
        if len(chunks) >= ANSWER_HEAD_BYTES:
            break
    return bytes(chunks[:ANSWER_HEAD_BYTES]).decode("utf-8", errors="replace").replace("\x00", "")


def _describe(error: BaseException) -> str:
    if isinstance(error, TimeoutError | httpx.TimeoutException):
        return "timeout"
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
