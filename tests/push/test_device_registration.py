"""Registering again needs the device's own token, and the body limit counts the bytes really sent."""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import httpx
import pytest_asyncio

from api.app import create_app
from scoreline.settings import Settings
from tests.push import seed
from tests.support.http import serve

INSTALL = "install-9f3e77c2"


@pytest_asyncio.fixture
async def api(database_url: str, redis_url: str) -> AsyncIterator[httpx.AsyncClient]:
    settings = Settings(database_url=database_url, redis_url=redis_url, log_format="json")
    async with serve(create_app(settings)) as url, httpx.AsyncClient(base_url=url) as client:
        yield client


def registration(**overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "install_id": INSTALL,
        "platform": "ios",
        "environment": "sandbox",
        "push_to_start_token": seed.apns_token(),
        "app_version": "2.4.1",
        "locale": "en-GB",
    }
    body.update(overrides)
    return body


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


async def test_reregistering_without_the_device_token_is_refused_and_changes_nothing(
    api: httpx.AsyncClient, db: asyncpg.Connection
) -> None:
    """Regression: anyone who knew an install_id got a fresh token and the owner's stopped working
    (account takeover); now no token, a forged or another device's token is 409 `install_registered`,
    the row is untouched and the owner's token still works. Fails on main before the fix."""
    first = (await api.post("/v1/devices", json=registration())).json()
    other = (await api.post("/v1/devices", json=registration(install_id="install-someone-else"))).json()
    before = await device_row_of(db, first["id"])

    forged = first["token"][:-4] + "AAAA"
    for headers in ({}, bearer(other["token"]), bearer(forged)):
        takeover = await api.post(
            "/v1/devices",
            json=registration(push_to_start_token=seed.apns_token(), app_version="6.6.6"),
            headers=headers,
        )
        assert takeover.status_code == 409, takeover.text
        assert takeover.json()["error"]["code"] == "install_registered"
        assert "token" not in takeover.json()

    assert await device_row_of(db, first["id"]) == before
    owner = await api.get(f"/v1/devices/{first['id']}/live-activities", headers=bearer(first["token"]))
    assert owner.status_code == 200


async def test_reregistering_with_the_device_token_rotates_it_and_refreshes_the_fields(
    api: httpx.AsyncClient, db: asyncpg.Connection
) -> None:
    """The owner's current token: 200, same id, a new token (the old one is dead), fields refreshed."""
    first = (await api.post("/v1/devices", json=registration())).json()
    new_push_token = seed.apns_token()

    again = await api.post(
        "/v1/devices",
        json=registration(push_to_start_token=new_push_token, app_version="2.5.0", locale="fr-FR"),
        headers=bearer(first["token"]),
    )

    assert again.status_code == 200, again.text
    second = again.json()
    assert second["id"] == first["id"] and second["token"] != first["token"]
    row = await device_row_of(db, first["id"])
    assert row["token_hash"] == hashlib.sha256(second["token"].encode()).hexdigest()
    assert (row["push_to_start_token"], row["app_version"], row["locale"]) == (
        new_push_token,
        "2.5.0",
        "fr-FR",
    )
    path = f"/v1/devices/{first['id']}/live-activities"
    old = await api.get(path, headers=bearer(first["token"]))
    assert (old.status_code, old.json()["error"]["code"]) == (401, "invalid_token")
    assert (await api.get(path, headers=bearer(second["token"]))).status_code == 200
    # The rotated-away token cannot re-register either.
    stale = await api.post("/v1/devices", json=registration(), headers=bearer(first["token"]))
    assert (stale.status_code, stale.json()["error"]["code"]) == (409, "install_registered")


async def test_a_malformed_authorization_on_registration_is_401(
    api: httpx.AsyncClient, db: asyncpg.Connection
) -> None:
    """A header that is not `Bearer <token>` is refused as on every device route, and stores nothing."""
    response = await api.post("/v1/devices", json=registration(), headers={"authorization": "Basic abc"})
    assert (response.status_code, response.json()["error"]["code"]) == (401, "unauthorized")
    assert await db.fetchval("SELECT count(*) FROM device") == 0


async def test_a_chunked_body_over_the_limit_is_413_and_stores_nothing(
    api: httpx.AsyncClient, db: asyncpg.Connection
) -> None:
    """Regression: the limit trusted Content-Length, so a chunked body (no Content-Length) of any
    size was read and stored; now the bytes read are counted (by the API's one body limit,
    `API_MAX_BODY_BYTES`). Failed on main before the devices-only limit counted them."""
    # Valid JSON and a valid registration, only padded with whitespace past the limit.
    data = f'{{"install_id": "{INSTALL}", "platform": "ios", "environment": "sandbox"}}'.encode()
    data += b" " * (Settings().api_max_body_bytes + 1024)

    async def chunks() -> AsyncIterator[bytes]:
        for start in range(0, len(data), 1024):
            yield data[start : start + 1024]

    response = await api.post("/v1/devices", content=chunks(), headers={"content-type": "application/json"})

    assert response.request.headers["transfer-encoding"] == "chunked"
    assert "content-length" not in response.request.headers
    assert (response.status_code, response.json()["error"]["code"]) == (413, "payload_too_large")
    assert await db.fetchval("SELECT count(*) FROM device") == 0


async def test_a_small_chunked_body_is_read(api: httpx.AsyncClient, db: asyncpg.Connection) -> None:
    """Chunked encoding itself is fine: a body under the limit registers the device."""

    async def chunks() -> AsyncIterator[bytes]:
        yield b'{"install_id": "' + INSTALL.encode() + b'", '
        yield b'"platform": "ios", "environment": "sandbox"}'

    response = await api.post("/v1/devices", content=chunks(), headers={"content-type": "application/json"})

    assert response.status_code == 201, response.text
    assert await db.fetchval("SELECT count(*) FROM device") == 1


async def device_row_of(db: asyncpg.Connection, device_id: str) -> asyncpg.Record:
    row = await db.fetchrow(
        """SELECT token_hash, push_to_start_token, push_to_start_active, app_version, locale, updated_at
        FROM device WHERE id = $1::uuid""",
        device_id,
    )
    assert row is not None
    return row
