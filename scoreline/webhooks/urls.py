"""Which URLs an endpoint may have, and which addresses a delivery may reach (SSRF).

An endpoint URL is `https://`; plain `http://` only for a loopback host (`localhost`, 127/8, ::1)
and never in production. Outside development a URL whose host is, or resolves to, an address that
is not globally routable (private, loopback, link-local, multicast, reserved, unspecified, shared
CGNAT, IPv4-mapped forms of these) is refused: a partner must not make our servers call into our
own network.

The check is made twice: when the URL is registered (`check_url`) and again at every send
(`pin`), because DNS can change after registration. `pin` resolves the name once, refuses if any
answer is forbidden, and connects to the checked address itself (Host header and TLS SNI keep the
name, so the certificate is still verified against it): a name that answers a public address to the
check and a private one to the connection (DNS rebinding) gets nowhere.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from dataclasses import dataclass
from typing import Final
from urllib.parse import urlsplit, urlunsplit

MAX_URL_LENGTH: Final = 2048
LOOPBACK_NAMES: Final = frozenset({"localhost"})

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class UrlRefusedError(ValueError):
    """An endpoint URL, or the address it resolves to, that we will not call (the message says why)."""


@dataclass(frozen=True, slots=True)
class UrlPolicy:
    """What this deployment allows: development allows loopback `http://` and private addresses."""

    development: bool


@dataclass(frozen=True, slots=True)
class Target:
    """Where one send connects: the URL to request, and the name for Host and SNI when pinned."""

    url: str
    host_header: str | None = None
    sni_hostname: str | None = None


def forbidden(address: IPAddress) -> bool:
    """Not a public unicast address a partner's receiver could legitimately have."""
    if isinstance(address, ipaddress.IPv6Address):
        # An IPv6 address that carries an IPv4 one reaches that one: judged as it.
        carried = address.ipv4_mapped or address.sixtofour or (address.teredo or (None, None))[1]
        if carried is not None and forbidden(carried):
            return True
    return (
        address.is_private
        or address.is_loopback
        or address.is_link_local
        or address.is_multicast
        or address.is_reserved
        or address.is_unspecified
        or not address.is_global
    )


def _literal(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def _is_loopback_host(host: str) -> bool:
    literal = _literal(host)
    return host in LOOPBACK_NAMES if literal is None else literal.is_loopback


def check_url(url: str, policy: UrlPolicy) -> str:
    """`url` if an endpoint may have it, else `UrlRefusedError` saying why."""
    if len(url) > MAX_URL_LENGTH:
        raise UrlRefusedError(f"a webhook URL has at most {MAX_URL_LENGTH} characters")
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if not host:
        raise UrlRefusedError("a webhook URL needs a host: https://host/path")
    if parts.username is not None or parts.password is not None:
        raise UrlRefusedError("a webhook URL may not carry credentials")
    if parts.scheme == "http":
        if not (policy.development and _is_loopback_host(host)):
            raise UrlRefusedError("a webhook URL is https:// (plain http:// only to loopback in development)")
    elif parts.scheme != "https":
        raise UrlRefusedError("a webhook URL is https://")
    literal = _literal(host)
    if not policy.development and (host in LOOPBACK_NAMES or (literal is not None and forbidden(literal))):
        raise UrlRefusedError(f"{host} is not a public address")
    return url


async def pin(url: str, policy: UrlPolicy) -> Target:
    """Where to connect for `url` now, after checking what its name resolves to.

    In development the URL is used as it is (loopback receivers, private test networks).
    """
    check_url(url, policy)
    if policy.development:
        return Target(url)
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    addresses = [ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in infos]
    if not addresses:
        raise UrlRefusedError(f"{host} does not resolve")
    refused = [str(address) for address in addresses if forbidden(address)]
    if refused:
        raise UrlRefusedError(f"{host} resolves to {', '.join(refused)}, not a public address")
    chosen = addresses[0]
    literal = f"[{chosen}]" if chosen.version == 6 else str(chosen)
    netloc = literal if parts.port is None else f"{literal}:{parts.port}"
    host_header = parts.netloc.rsplit("@", 1)[-1]
    return Target(
        urlunsplit((parts.scheme, netloc, parts.path or "/", parts.query, "")),
        host_header=host_header,
        sni_hostname=host,
    )
