"""The device API over real HTTP: registration and rotation, auth, precise 4xx, and nothing stored on error.

Re-registration without the device's token and chunked bodies: `test_device_registration.py`.
"""

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

INSTALL = "install-5b0c1a7e"


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


async def register(api: httpx.AsyncClient, **overrides: Any) -> tuple[str, dict[str, str]]:
    response = await api.post("/v1/devices", json=registration(**overrides))
    assert response.status_code in (200, 201), response.text
    body = response.json()
    return body["id"], {"authorization": f"Bearer {body['token']}"}


async def follow(api: httpx.AsyncClient, device: str, auth: dict[str, str]) -> None:
    """The device follows `seed.FIXTURE_ID`: only a follower's Live Activity token is taken."""
    response = await api.post(
        f"/v1/devices/{device}/follows", json={"fixture_id": seed.FIXTURE_ID}, headers=auth
    )
    assert response.status_code == 201, response.text


async def count(db: asyncpg.Connection, table: str) -> int:
    return int(await db.fetchval(f"SELECT count(*) FROM {table}"))


async def test_register_stores_a_hashed_secret_and_reregistering_rotates_it(
    api: httpx.AsyncClient, db: asyncpg.Connection
) -> None:
    """201 with id and token (sha-256 stored); the same install again with that token: 200, same id,
    new token, old one dead."""
    created = await api.post("/v1/devices", json=registration())
    assert created.status_code == 201
    first = created.json()
    stored = await db.fetchrow(
        "SELECT token_hash, push_to_start_active, locale FROM device WHERE id = $1::uuid", first["id"]
    )
    assert stored["token_hash"] == hashlib.sha256(first["token"].encode()).hexdigest()
    assert (stored["push_to_start_active"], stored["locale"]) == (True, "en-GB")

    again = await api.post(
        "/v1/devices",
        json=registration(app_version="2.5.0"),
        headers={"authorization": f"Bearer {first['token']}"},
    )
    assert again.status_code == 200
    second = again.json()
    assert second["id"] == first["id"] and second["token"] != first["token"]
    old = await api.get(
        f"/v1/devices/{first['id']}/live-activities", headers={"authorization": f"Bearer {first['token']}"}
    )
    assert (old.status_code, old.json()["error"]["code"]) == (401, "invalid_token")
    new = await api.get(
        f"/v1/devices/{first['id']}/live-activities", headers={"authorization": f"Bearer {second['token']}"}
    )
    assert new.status_code == 200
    assert await count(db, "device") == 1


BAD_REGISTRATIONS: list[tuple[dict[str, Any], str]] = [
    ({"push_to_start_token": "zz" * 40}, "body.push_to_start_token"),
    ({"push_to_start_token": "ab" * 31}, "body.push_to_start_token"),
    ({"push_to_start_token": "ab" * 101}, "body.push_to_start_token"),
    ({"push_to_start_token": "abc" * 31}, "body.push_to_start_token"),
    ({"install_id": "x" * 129}, "body.install_id"),
    ({"install_id": "has spaces in it"}, "body.install_id"),
    ({"platform": "android"}, "body.platform"),
    ({"environment": "staging"}, "body.environment"),
    ({"app_version": "1" * 33}, "body.app_version"),
    ({"locale": "not a locale"}, "body.locale"),
    ({"shoe_size": 44}, "body.shoe_size"),
]
"""Non-hex, too short, too long and odd-length APNs tokens; oversized and malformed fields; extras."""


async def test_bad_registration_is_a_precise_422_and_stores_nothing(
    api: httpx.AsyncClient, db: asyncpg.Connection
) -> None:
    for overrides, field in BAD_REGISTRATIONS:
        response = await api.post("/v1/devices", json=registration(**overrides))
        assert response.status_code == 422, overrides
        error = response.json()["error"]
        assert error["code"] == "validation_error"
        assert [f["path"] for f in error["fields"]] == [field]
    assert await count(db, "device") == 0


async def test_oversized_body_is_413_unread(api: httpx.AsyncClient, db: asyncpg.Connection) -> None:
    """A registration past the API's one body limit (`API_MAX_BODY_BYTES`) is refused unread."""
    too_long = "x" * (Settings().api_max_body_bytes + 1)
    response = await api.post("/v1/devices", json=registration(locale=too_long))
    assert (response.status_code, response.json()["error"]["code"]) == (413, "payload_too_large")
    assert await count(db, "device") == 0


async def test_auth_is_per_device(api: httpx.AsyncClient) -> None:
    """No header or a malformed one: 401 unauthorized; a token we never issued: 401; another device's: 403."""
    mine, my_auth = await register(api)
    theirs, _ = await register(api, install_id="install-other-device")
    path = f"/v1/devices/{mine}/live-activities"
    missing = await api.get(path)
    assert (missing.status_code, missing.json()["error"]["code"]) == (401, "unauthorized")
    assert missing.headers["www-authenticate"] == "Bearer"
    assert (await api.get(path, headers={"authorization": "Basic abc"})).status_code == 401
    forged = my_auth["authorization"][:-4] + "AAAA"
    bad = await api.get(path, headers={"authorization": forged})
    assert (bad.status_code, bad.json()["error"]["code"]) == (401, "invalid_token")
    junk = await api.get(path, headers={"authorization": "Bearer sl_dev_nonsense"})
    assert junk.status_code == 401
    other = await api.get(f"/v1/devices/{theirs}/live-activities", headers=my_auth)
    assert (other.status_code, other.json()["error"]["code"]) == (403, "other_device")


async def test_follow_and_unfollow(api: httpx.AsyncClient, db: asyncpg.Connection) -> None:
    """Unknown fixture: 404 and no row; follow 201, again 200; unfollow 204 (also when not followed)."""
    await seed.fixture(db)
    device, auth = await register(api)
    unknown = await api.post(f"/v1/devices/{device}/follows", json={"fixture_id": 99}, headers=auth)
    assert (unknown.status_code, unknown.json()["error"]["code"]) == (404, "fixture_not_found")
    assert await count(db, "follow") == 0
    bad = await api.post(f"/v1/devices/{device}/follows", json={"fixture_id": -1}, headers=auth)
    assert bad.status_code == 422

    follows = f"/v1/devices/{device}/follows"
    assert (await api.post(follows, json={"fixture_id": seed.FIXTURE_ID}, headers=auth)).status_code == 201
    assert (await api.post(follows, json={"fixture_id": seed.FIXTURE_ID}, headers=auth)).status_code == 200
    assert await count(db, "follow") == 1
    assert (await api.delete(f"{follows}/{seed.FIXTURE_ID}", headers=auth)).status_code == 204
    assert (await api.delete(f"{follows}/{seed.FIXTURE_ID}", headers=auth)).status_code == 204
    assert await count(db, "follow") == 0


async def test_push_to_start_token_update_reactivates_it(
    api: httpx.AsyncClient, db: asyncpg.Connection
) -> None:
    device, auth = await register(api)
    await db.execute("UPDATE device SET push_to_start_active = false")
    path = f"/v1/devices/{device}/push-to-start-token"
    bad = await api.put(path, json={"push_to_start_token": "not-hex"}, headers=auth)
    assert bad.status_code == 422
    assert await db.fetchval("SELECT push_to_start_active FROM device") is False
    token = seed.apns_token().upper()
    assert (await api.put(path, json={"push_to_start_token": token}, headers=auth)).status_code == 204
    row = await db.fetchrow("SELECT push_to_start_token, push_to_start_active FROM device")
    assert (row["push_to_start_token"], row["push_to_start_active"]) == (token.lower(), True)


async def test_reporting_an_activity_token_makes_the_activity_active(
    api: httpx.AsyncClient, db: asyncpg.Connection
) -> None:
    """pending → active with the update token; unknown fixture 404, bad token 422, all listed; a report after the end is taken and the activity stays ended."""
    await seed.fixture(db)
    device, auth = await register(api)
    await follow(api, device, auth)
    await db.execute(
        "INSERT INTO live_activity (device_id, fixture_id, started_at) VALUES ($1::uuid, $2, now())",
        device,
        seed.FIXTURE_ID,
    )
    base = f"/v1/devices/{device}/live-activities"
    unknown = await api.put(f"{base}/99", json={"push_token": seed.apns_token()}, headers=auth)
    assert (unknown.status_code, unknown.json()["error"]["code"]) == (404, "fixture_not_found")
    malformed = await api.put(f"{base}/{seed.FIXTURE_ID}", json={"push_token": "12"}, headers=auth)
    assert malformed.status_code == 422
    assert await db.fetchval("SELECT push_token FROM live_activity") is None

    token = seed.apns_token()
    reported = await api.put(f"{base}/{seed.FIXTURE_ID}", json={"push_token": token}, headers=auth)
    assert reported.status_code == 200
    assert reported.json()["status"] == "active" and reported.json()["has_push_token"] is True
    assert await db.fetchval("SELECT push_token FROM live_activity") == token

    listed = (await api.get(base, headers=auth)).json()["live_activities"]
    assert [(a["fixture_id"], a["status"], a["push_token_active"]) for a in listed] == [
        (seed.FIXTURE_ID, "active", True)
    ]
    await db.execute("UPDATE live_activity SET status = 'ended'")
    after_the_end = seed.apns_token()
    ended = await api.put(f"{base}/{seed.FIXTURE_ID}", json={"push_token": after_the_end}, headers=auth)
    assert ended.status_code == 200, "a token reported after the end is owed the end"
    assert ended.json()["status"] == "ended"
    assert await db.fetchval("SELECT push_token FROM live_activity") == after_the_end
