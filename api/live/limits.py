"""Connection caps for live screens: per client address and in total, per API process.

A live connection holds a queue, a subscription and a socket for as long as the client likes, so
one careless or hostile client could otherwise take the whole process. Each SSE stream and
WebSocket takes a slot before it subscribes or reads anything (a refused client costs no query) and
gives it back however it ends: the client leaving, the server dropping it as too slow, or an error.

A client is its address as the device registrations' limit counts it (`address_subject`: an IPv4
address or an IPv6 /64), as uvicorn reports it: behind a proxy, the forwarded address only when the
proxy is one of `FORWARDED_ALLOW_IPS`, else every client is the proxy. Refusals are counted by
transport and reason for `/metrics`.
"""

from __future__ import annotations

from typing import Literal

from starlette.requests import HTTPConnection

from scoreline.devices.rate_limit import address_subject

Transport = Literal["sse", "websocket"]
Reason = Literal["client", "total"]

RETRY_AFTER_SECONDS = 5
"""What a refused client is told to wait: long enough for a slot to free, short for a screen."""


class TooManyConnectionsError(Exception):
    """The client (`reason` "client") or the process ("total") holds all the connections it may."""

    def __init__(self, reason: Reason, limit: int) -> None:
        where = "from one client address" if reason == "client" else "on this server"
        super().__init__(f"at most {limit} live connections {where}; try again later")
        self.reason: Reason = reason


class Slot:
    """One admitted connection's place; `release` is idempotent, so every way out may call it."""

    def __init__(self, limits: ConnectionLimits, client: str) -> None:
        self._limits = limits
        self._client = client
        self._held = True

    def release(self) -> None:
        if self._held:
            self._held = False
            self._limits._free(self._client)


class ConnectionLimits:
    def __init__(self, total: int, per_client: int) -> None:
        self.total = total
        self.per_client = per_client
        self._open: dict[str, int] = {}
        self._count = 0
        self._refused: dict[tuple[Transport, Reason], int] = {
            (transport, reason): 0 for transport in ("sse", "websocket") for reason in ("client", "total")
        }

    def admit(self, connection: HTTPConnection, transport: Transport) -> Slot:
        """A slot for this connection's client.

        Raises:
            TooManyConnectionsError: the client, or else the process, is at its cap.
        """
        client = address_subject(connection.client.host if connection.client is not None else None)
        held = self._open.get(client, 0)
        if held >= self.per_client:
            self._refused[transport, "client"] += 1
            raise TooManyConnectionsError("client", self.per_client)
        if self._count >= self.total:
            self._refused[transport, "total"] += 1
            raise TooManyConnectionsError("total", self.total)
        self._open[client] = held + 1
        self._count += 1
        return Slot(self, client)

    @property
    def open(self) -> int:
        """Connections holding a slot now (for tests and the bench)."""
        return self._count

    def refusals(self) -> dict[tuple[Transport, Reason], int]:
        """Refused connections so far by transport and reason; a copy, safe from `/metrics`' thread."""
        return dict(self._refused)

    def _free(self, client: str) -> None:
        self._count -= 1
        left = self._open[client] - 1
        if left:
            self._open[client] = left
        else:
            del self._open[client]
