"""One signed POST of one message, and what came back.

Bounded in every direction a receiver could stretch: a total deadline (connect, send, answer),
redirects not followed (a 3xx is a failure: a receiver that moved must be re-registered, and a
redirect must not lead us to an address the SSRF check refused), answer headers of at most
`MAX_HEAD_BYTES`, and at most `ANSWER_HEAD_BYTES` of the answer's body read, kept for the delivery
log.

The HTTP/1.1 client is this module's own, on asyncio streams: a webhook POST needs nothing more
than a request line, a body with its length and a status back, and httpx cost ~1-5 ms of CPU a
request at our concurrency (its connection pool scans, and polls the socket of, every pooled
connection on each request and each response close), which capped one process at ~100
deliveries/s. Connections are kept alive per (address, Host, SNI): one goes back to the pool only
when its answer was read to its end and neither side asked to close; a pooled connection that the
receiver closed meanwhile is noticed before reuse, or, if the send then finds it dead before any
byte of an answer, the request goes once more on a new connection (same `webhook-id`: at least
once).
"""

from __future__ import annotations

import asyncio
import ssl
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Final
from urllib.parse import quote, urlsplit

import certifi

from scoreline.webhooks.signing import signed_headers
from scoreline.webhooks.urls import UrlPolicy, UrlRefusedError, pin

ANSWER_HEAD_BYTES: Final = 2048
MAX_HEAD_BYTES: Final = 64 * 1024
"""The status line and headers of an answer: a longer head is a failure."""
IDLE_FOR: Final = 30.0
"""A pooled connection idle longer than this is closed rather than reused."""
USER_AGENT: Final = "Scoreline-Webhooks/1"
_PATH_SAFE: Final = "/?&=%:@!$'()*+,;~-._"
"""Characters a request target keeps as they are (others, such as non-ASCII, are percent-encoded)."""


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


class AnswerError(Exception):
    """The receiver's answer was not HTTP/1.x as we can read it."""


class _StaleConnectionError(Exception):
    """A reused connection was dead before any byte of an answer came."""


_Key = tuple[str, int, bool, str | None]
"""(connect host, port, TLS, SNI name)."""


@dataclass(slots=True)
class _Connection:
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    idle_since: float = 0.0

    def usable(self) -> bool:
        return (
            not self.reader.at_eof()
            and not self.writer.is_closing()
            and time.monotonic() - self.idle_since < IDLE_FOR
        )

    def close(self) -> None:
        self.writer.close()


@dataclass(frozen=True, slots=True)
class _Reply:
    status: int
    head: str
    retry_after: str | None
    reusable: bool


class Sender:
    """POSTs over kept-alive connections; `aclose()` when done."""

    def __init__(self, policy: UrlPolicy, timeout: timedelta, max_connections: int) -> None:
        self._policy = policy
        self._timeout = timeout.total_seconds()
        self._max_idle = max_connections
        self._idle: dict[_Key, list[_Connection]] = {}
        self._idle_count = 0
        self._tls: ssl.SSLContext | None = None

    async def aclose(self) -> None:
        for connections in self._idle.values():
            for connection in connections:
                connection.close()
        self._idle.clear()
        self._idle_count = 0

    async def post(self, url: str, msg_id: str, body: bytes, signing_secrets: list[str]) -> Answer:
        started = time.perf_counter()

        def elapsed() -> int:
            return round((time.perf_counter() - started) * 1000)

        try:
            target = await pin(url, self._policy)
        except (UrlRefusedError, OSError) as error:
            return Answer(status=None, latency_ms=elapsed(), head="", error=f"refused: {error}")
        parts = urlsplit(target.url)
        tls = parts.scheme == "https"
        host = parts.hostname or ""
        port = parts.port or (443 if tls else 80)
        key: _Key = (host, port, tls, target.sni_hostname if tls else None)
        path = quote((parts.path or "/") + (f"?{parts.query}" if parts.query else ""), safe=_PATH_SAFE)
        headers = {
            "host": target.host_header or parts.netloc,
            "user-agent": USER_AGENT,
            "content-type": "application/json",
            "content-length": str(len(body)),
            **signed_headers(signing_secrets, msg_id, datetime.now(UTC), body),
        }
        request = (
            f"POST {path} HTTP/1.1\r\n"
            + "".join(f"{name}: {value}\r\n" for name, value in headers.items())
            + "\r\n"
        ).encode("latin-1") + body
        try:
            async with asyncio.timeout(self._timeout):
                try:
                    reply = await self._exchange(key, request, reuse=True)
                except _StaleConnectionError:
                    reply = await self._exchange(key, request, reuse=False)
        except (
            TimeoutError,
            OSError,
            EOFError,
            ValueError,
            asyncio.LimitOverrunError,
            AnswerError,
        ) as error:
            return Answer(status=None, latency_ms=elapsed(), head="", error=_describe(error))
        return Answer(
            status=reply.status, latency_ms=elapsed(), head=reply.head, retry_after=reply.retry_after
        )

    async def _exchange(self, key: _Key, request: bytes, *, reuse: bool) -> _Reply:
        connection = self._take(key) if reuse else None
        reused = connection is not None
        if connection is None:
            connection = await self._open(key)
        try:
            try:
                connection.writer.write(request)
                await connection.writer.drain()
                first = await connection.reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, ConnectionError) as error:
                if reused and not getattr(error, "partial", b""):
                    raise _StaleConnectionError from error
                raise
            reply = await _read_answer(connection.reader, first)
        except BaseException:
            connection.close()
            raise
        if reply.reusable and self._idle_count < self._max_idle:
            connection.idle_since = time.monotonic()
            self._idle.setdefault(key, []).append(connection)
            self._idle_count += 1
        else:
            connection.close()
        return reply

    def _take(self, key: _Key) -> _Connection | None:
        pool = self._idle.get(key)
        while pool:
            connection = pool.pop()
            self._idle_count -= 1
            if connection.usable():
                return connection
            connection.close()
        return None

    async def _open(self, key: _Key) -> _Connection:
        host, port, tls, sni = key
        context = None
        if tls:
            if self._tls is None:
                self._tls = ssl.create_default_context(cafile=certifi.where())
            context = self._tls
        reader, writer = await asyncio.open_connection(
            host, port, ssl=context, server_hostname=(sni or host) if tls else None, limit=MAX_HEAD_BYTES
        )
        return _Connection(reader, writer)


async def _read_answer(reader: asyncio.StreamReader, head: bytes) -> _Reply:
    """The answer whose head (status line and headers, with the blank line) was `head`; 1xx
    interim answers are skipped. Reads at most `ANSWER_HEAD_BYTES` of the body."""
    while True:
        status, version, fields = _parse_head(head)
        if not 100 <= status < 200:
            break
        head = await reader.readuntil(b"\r\n\r\n")
    keep = version == "HTTP/1.1" and "close" not in fields.get("connection", "").lower()
    if status in (204, 304):
        return _Reply(status, "", fields.get("retry-after"), keep)
    chunks = bytearray()
    complete = False
    if "chunked" in fields.get("transfer-encoding", "").lower():
        while len(chunks) < ANSWER_HEAD_BYTES:
            size_line = await reader.readuntil(b"\r\n")
            size = int(size_line.split(b";", 1)[0].strip(), 16)
            if size == 0:
                while await reader.readuntil(b"\r\n") != b"\r\n":
                    pass  # trailers
                complete = True
                break
            chunks += await reader.readexactly(size)
            await reader.readexactly(2)
    elif "content-length" in fields:
        length = int(fields["content-length"])
        if length < 0:
            raise AnswerError("negative content-length")
        chunks += await reader.readexactly(min(length, ANSWER_HEAD_BYTES))
        complete = length <= ANSWER_HEAD_BYTES
    else:
        # Delimited by the end of the connection: read what the log keeps, then close.
        while len(chunks) < ANSWER_HEAD_BYTES:
            chunk = await reader.read(ANSWER_HEAD_BYTES - len(chunks))
            if not chunk:
                break
            chunks += chunk
        keep = False
    text = bytes(chunks[:ANSWER_HEAD_BYTES]).decode("utf-8", errors="replace").replace("\x00", "")
    return _Reply(status, text, fields.get("retry-after"), keep and complete)


def _parse_head(head: bytes) -> tuple[int, str, dict[str, str]]:
    lines = head.decode("latin-1").split("\r\n")
    version, _, rest = lines[0].partition(" ")
    code = rest[:3]
    if not version.startswith("HTTP/1.") or len(code) != 3 or not code.isdigit():
        raise AnswerError(f"not an HTTP/1.x answer: {lines[0][:80]!r}")
    fields: dict[str, str] = {}
    for line in lines[1:]:
        if not line:
            continue
        name, sep, value = line.partition(":")
        if not sep:
            raise AnswerError(f"malformed header line: {line[:80]!r}")
        name = name.strip().lower()
        value = value.strip()
        fields[name] = f"{fields[name]}, {value}" if name in fields else value
    return int(code), version, fields


def _describe(error: BaseException) -> str:
    if isinstance(error, TimeoutError):
        return "timeout"
    if isinstance(error, asyncio.IncompleteReadError):
        return "no complete answer (connection closed)"
    if isinstance(error, asyncio.LimitOverrunError):
        return f"answer head over {MAX_HEAD_BYTES} bytes"
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
