"""Device registrations are limited per client address (`DEVICE_REGISTRATION_RATE_LIMIT` a minute).

Over real HTTP and Postgres/Redis: the clients connect from two loopback addresses (127.0.0.1 and
127.0.0.2, both this machine's), so the API sees two client addresses exactly as it would two hosts.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import asyncpg
import httpx
import pytest_asyncio

from api.app import create_app
from scoreline.devices.rate_limit import address_subject
from scoreline.settings import Settings
from tests.push.test_devices_api import registration
from tests.support.http import serve

LIMIT = 20
"""The default of `device_registration_rate_limit`, used as it ships."""


@pytest_asyncio.fixture
async def url(database_url: str, redis_url: str) -> AsyncIterator[str]:
    settings = Settings(database_url=database_url, redis_url=redis_url, log_format="json")
    assert settings.device_registration_rate_limit == LIMIT
    async with serve(create_app(settings)) as served:
        yield served


def client_from(url: str, address: str) -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url=url, transport=httpx.AsyncHTTPTransport(local_address=address))


async def test_the_registration_past_the_limit_from_one_address_is_429_and_another_address_is_not_held(
    url: str, db: asyncpg.Connection
) -> None:
    """Twenty registrations from one address in a minute are 201, the twenty-first is 429
    `too_many_requests` with `Retry-After` and stores nothing, while a client at another address
    still registers. Before the fix there was no limit (300 in a row were all 201)."""
    await _not_at_the_end_of_a_minute()
    async with client_from(url, "127.0.0.1") as busy, client_from(url, "127.0.0.2") as other:
        for n in range(LIMIT):
            created = await busy.post("/v1/devices", json=registration(install_id=f"install-busy-{n:04d}"))
            assert created.status_code == 201, (n, created.text)
        refused = await busy.post("/v1/devices", json=registration(install_id="install-busy-past-limit"))
        assert refused.status_code == 429, refused.text
        assert refused.json()["error"]["code"] == "too_many_requests"
        assert 1 <= int(refused.headers["retry-after"]) <= 60
        elsewhere = await other.post("/v1/devices", json=registration(install_id="install-elsewhere"))
        assert elsewhere.status_code == 201, elsewhere.text
    installs = {row["install_id"] for row in await db.fetch("SELECT install_id FROM device")}
    assert len(installs) == LIMIT + 1
    assert "install-busy-past-limit" not in installs and "install-elsewhere" in installs


def test_an_ipv6_client_counts_as_its_slash_64_and_a_mapped_ipv4_one_as_its_ipv4_address() -> None:
    """One host picks any address of its /64, so the /64 is what is counted; an IPv4 client seen
    on a dual-stack socket is the same client as on an IPv4 one."""
    assert (
        address_subject("2001:db8:1:2::1") == address_subject("2001:db8:1:2:ffff::9") == "2001:db8:1:2::/64"
    )
    assert address_subject("2001:db8:1:3::1") != address_subject("2001:db8:1:2::1")
    assert address_subject("::ffff:192.0.2.7") == address_subject("192.0.2.7") == "192.0.2.7"
    assert address_subject(None) == "unknown"


async def _not_at_the_end_of_a_minute() -> None:
    """The limit counts in windows of a clock minute: start early in one, so the 21 calls share it."""
    into = time.time() % 60
    if into > 50:
        await asyncio.sleep(60 - into)
