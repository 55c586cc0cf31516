"""Endpoint URL rules and the send-time address check (SSRF)."""

from __future__ import annotations

import ipaddress
import socket

import pytest

from scoreline.webhooks.urls import Target, UrlPolicy, UrlRefusedError, check_url, forbidden, pin

pytestmark = pytest.mark.unit

DEV = UrlPolicy(development=True)
PROD = UrlPolicy(development=False)


@pytest.mark.parametrize(
    "url", ["https://hooks.example.com/in", "https://93.184.216.34:8443/x?y=1", "https://[2606:4700::1111]/"]
)
def test_public_https_is_accepted_everywhere(url: str) -> None:
    assert check_url(url, PROD) == url
    assert check_url(url, DEV) == url


@pytest.mark.parametrize("url", ["http://127.0.0.1:9000/hook", "http://localhost/hook", "http://[::1]:80/"])
def test_plain_http_only_to_loopback_in_development(url: str) -> None:
    assert check_url(url, DEV) == url
    with pytest.raises(UrlRefusedError):
        check_url(url, PROD)


@pytest.mark.parametrize(
    "url",
    [
        "http://hooks.example.com/in",
        "http://10.0.0.5/in",
        "ftp://hooks.example.com/",
        "https:///nohost",
        "https://user:pw@hooks.example.com/",
        "https://hooks.example.com/" + "x" * 3000,
    ],
)
def test_refused_everywhere(url: str) -> None:
    with pytest.raises(UrlRefusedError):
        check_url(url, DEV)


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1",
        "10.1.2.3",
        "172.16.0.1",
        "192.168.1.1",
        "169.254.169.254",
        "100.64.0.1",
        "0.0.0.0",
        "224.0.0.1",
        "240.0.0.1",
        "[::1]",
        "[fe80::1]",
        "[fc00::1]",
        "[::ffff:127.0.0.1]",
        "localhost",
    ],
)
def test_non_public_addresses_are_refused_outside_development(host: str) -> None:
    with pytest.raises(UrlRefusedError):
        check_url(f"https://{host}/hook", PROD)
    check_url(f"https://{host}/hook", DEV)


def test_forbidden_covers_mapped_and_special_ranges() -> None:
    assert forbidden(ipaddress.ip_address("::ffff:10.0.0.1"))
    assert forbidden(ipaddress.ip_address("198.18.0.1"))
    assert not forbidden(ipaddress.ip_address("8.8.8.8"))


def test_a_6to4_address_of_a_private_one_is_refused() -> None:
    """6to4 addresses carry an IPv4 one in their bits and reach it through a relay; one carrying
    loopback or the cloud metadata address passed the check."""
    assert forbidden(ipaddress.ip_address("2002:7f00:1::"))  # 127.0.0.1
    assert forbidden(ipaddress.ip_address("2002:a9fe:a9fe::"))  # 169.254.169.254
    assert not forbidden(ipaddress.ip_address("2002:808:808::"))  # 8.8.8.8


async def test_a_name_is_checked_again_at_send_time() -> None:
    """This machine's own name resolves (through /etc/hosts) to a loopback or private address: a
    name the registration check cannot judge, refused when sending in production."""
    host = socket.gethostname()
    addresses = {info[4][0] for info in socket.getaddrinfo(host, 443, type=socket.SOCK_STREAM)}
    if not any(forbidden(ipaddress.ip_address(str(address))) for address in addresses):
        pytest.skip(f"{host} resolves to a public address here")
    assert check_url(f"https://{host}/hook", PROD)
    with pytest.raises(UrlRefusedError, match="not a public address"):
        await pin(f"https://{host}/hook", PROD)
    assert await pin("http://127.0.0.1:9/hook", DEV) == Target("http://127.0.0.1:9/hook")
