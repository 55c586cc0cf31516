"""Apple's request rules over a real HTTP/2 connection: status, reason and headers as APNs sends them."""

from __future__ import annotations

import json
import re
import time
from typing import Any

import httpx
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from tests.apns_sim.conftest import Sim, la_start, la_update

UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$")


def assert_rejected(response: httpx.Response, status: int, reason: str) -> None:
    assert response.http_version == "HTTP/2"
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    assert response.json() == {"reason": reason}
    assert response.headers["apns-id"]


async def test_success_is_empty_200_with_generated_ids(sim: Sim, apns: httpx.AsyncClient, token: str) -> None:
    """200 has no body, a fresh lowercase apns-id when none was sent, and a sandbox apns-unique-id."""
    response = await apns.post(f"/3/device/{token}", json=la_update(), headers=sim.la_headers())

    assert (response.http_version, response.status_code, response.content) == ("HTTP/2", 200, b"")
    assert UUID.match(response.headers["apns-id"])
    assert UUID.match(response.headers["apns-unique-id"])


async def test_apns_id_is_echoed(sim: Sim, apns: httpx.AsyncClient, token: str) -> None:
    """The request's apns-id comes back on success and on error alike."""
    apns_id = "0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0"
    headers = sim.la_headers(**{"apns-id": apns_id})
    ok = await apns.post(f"/3/device/{token}", json=la_update(), headers=headers)
    bad = await apns.post("/3/device/nothex", json=la_update(), headers=headers)

    assert ok.headers["apns-id"] == bad.headers["apns-id"] == apns_id


@pytest.mark.parametrize(
    ("make_token", "reason"),
    [
        (lambda sim: None, "MissingProviderToken"),
        (lambda sim: sim.provider_token(iat=int(time.time()) - 3601), "ExpiredProviderToken"),
        (lambda sim: sim.provider_token(key=other_key_pem()), "InvalidProviderToken"),
        (lambda sim: sim.provider_token(kid="UNKNOWNKEY"), "InvalidProviderToken"),
        (lambda sim: sim.provider_token(iss="OTHERTEAM1"), "InvalidProviderToken"),
        (lambda sim: "not.a.jwt", "InvalidProviderToken"),
    ],
    ids=["missing", "expired", "bad-signature", "unknown-kid", "wrong-team", "garbage"],
)
async def test_provider_token_rejections(
    sim: Sim, apns: httpx.AsyncClient, token: str, make_token: Any, reason: str
) -> None:
    """Each way a provider JWT can be wrong gets 403 with Apple's reason."""
    headers = sim.la_headers()
    jwt_value = make_token(sim)
    if jwt_value is None:
        del headers["authorization"]
    else:
        headers["authorization"] = f"bearer {jwt_value}"

    response = await apns.post(f"/3/device/{token}", json=la_update(), headers=headers)

    assert_rejected(response, 403, reason)


async def test_token_may_not_change_twice_within_20_minutes(
    sim: Sim, apns: httpx.AsyncClient, token: str
) -> None:
    """A second, different valid JWT on the same connection gets 429 TooManyProviderTokenUpdates."""
    first = await apns.post(f"/3/device/{token}", json=la_update(), headers=sim.la_headers())
    newer = sim.provider_token(iat=int(time.time()) - 5)
    second = await apns.post(
        f"/3/device/{token}", json=la_update(), headers=sim.la_headers(authorization=f"bearer {newer}")
    )

    assert first.status_code == 200
    assert_rejected(second, 429, "TooManyProviderTokenUpdates")


@pytest.mark.parametrize(
    ("overrides", "status", "reason"),
    [
        ({"apns-push-type": "banana"}, 400, "InvalidPushType"),
        ({"apns-topic": "com.scoreline.app"}, 400, "DeviceTokenNotForTopic"),
        ({"apns-push-type": "alert"}, 400, "DeviceTokenNotForTopic"),
        ({"apns-topic": "com.other.app.push-type.liveactivity"}, 400, "TopicDisallowed"),
        ({"apns-topic": ""}, 400, "MissingTopic"),
        ({"apns-priority": "7"}, 400, "BadPriority"),
        ({"apns-expiration": "tomorrow"}, 400, "BadExpirationDate"),
        ({"apns-id": "not-a-uuid"}, 400, "BadMessageId"),
        ({"apns-collapse-id": "x" * 65}, 400, "BadCollapseId"),
    ],
)
async def test_header_rejections(
    sim: Sim, apns: httpx.AsyncClient, token: str, overrides: dict[str, str], status: int, reason: str
) -> None:
    """Wrong push type, topic or header syntax gets Apple's 400 reasons."""
    headers = sim.la_headers(**overrides)
    if headers["apns-topic"] == "":
        del headers["apns-topic"]

    response = await apns.post(f"/3/device/{token}", json=la_update(), headers=headers)

    assert_rejected(response, status, reason)


async def test_duplicate_headers(sim: Sim, apns: httpx.AsyncClient, token: str) -> None:
    """A repeated apns-* header is 400 DuplicateHeaders."""
    headers = [*sim.la_headers().items(), ("apns-priority", "5")]

    response = await apns.post(f"/3/device/{token}", json=la_update(), headers=headers)

    assert_rejected(response, 400, "DuplicateHeaders")


@pytest.mark.parametrize(
    ("method", "path", "status", "reason"),
    [
        ("POST", "/3/device/xyz", 400, "BadDeviceToken"),
        ("POST", "/3/device/abc", 400, "BadDeviceToken"),
        ("POST", "/3/device/", 400, "MissingDeviceToken"),
        ("POST", "/4/broadcasts/apps/com.scoreline.app", 404, "BadPath"),
        ("GET", "/3/device/" + "ab" * 32, 405, "MethodNotAllowed"),
    ],
)
async def test_routing_and_token_format(
    sim: Sim, apns: httpx.AsyncClient, method: str, path: str, status: int, reason: str
) -> None:
    """Path, method and token syntax are checked before anything else."""
    response = await apns.request(method, path, json=la_update(), headers=sim.la_headers())

    assert_rejected(response, status, reason)


@pytest.mark.parametrize(
    ("push_type", "topic_suffix", "size", "status"),
    [
        ("liveactivity", ".push-type.liveactivity", 4096, 200),
        ("liveactivity", ".push-type.liveactivity", 4097, 413),
        ("alert", "", 4097, 413),
        ("voip", ".voip", 5120, 200),
        ("voip", ".voip", 5121, 413),
    ],
)
async def test_payload_size_limits(
    sim: Sim, apns: httpx.AsyncClient, token: str, push_type: str, topic_suffix: str, size: int, status: int
) -> None:
    """4096 bytes is the limit (Live Activities included); VoIP gets 5120; above is 413."""
    body = la_update(**{"content-state": {"pad": ""}})
    padding = size - len(json.dumps(body).encode())
    body["aps"]["content-state"]["pad"] = "x" * padding
    content = json.dumps(body).encode()
    assert len(content) == size
    headers = sim.la_headers(**{"apns-push-type": push_type, "apns-topic": sim.config.topic + topic_suffix})

    response = await apns.post(f"/3/device/{token}", content=content, headers=headers)

    assert response.status_code == status
    if status == 413:
        assert_rejected(response, 413, "PayloadTooLarge")


async def test_empty_payload(sim: Sim, apns: httpx.AsyncClient, token: str) -> None:
    """No body is 400 PayloadEmpty."""
    response = await apns.post(f"/3/device/{token}", headers=sim.la_headers())

    assert_rejected(response, 400, "PayloadEmpty")


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        (la_start(omit=("attributes",)), "MissingAttributes"),
        (la_start(**{"attributes-type": ""}), "MissingAttributesType"),
        (la_start(omit=("alert",)), "MissingAlert"),
        (la_update(omit=("timestamp",)), "MissingTimestamp"),
        (la_update(timestamp=int(time.time() * 1000)), "BadTimestamp"),
        (la_update(event="pause"), "BadEvent"),
        (la_update(omit=("content-state",)), "MissingContentState"),
        (la_update(**{"stale-date": "soon"}), "BadDate"),
        ({"data": 1}, "MissingAps"),
        ("not json", "InvalidPayload"),
    ],
)
async def test_undeliverable_live_activity_payloads_are_rejected_in_strict_mode(
    sim: Sim, apns: httpx.AsyncClient, token: str, payload: Any, reason: str
) -> None:
    """In strict mode a payload ActivityKit would drop is 400 with the simulator's reason for it."""
    content = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()

    response = await apns.post(f"/3/device/{token}", content=content, headers=sim.la_headers())

    assert_rejected(response, 400, reason)


@pytest.mark.parametrize(
    "payload",
    [la_start(), la_update(), {"aps": {"timestamp": int(time.time()), "event": "end", "dismissal-date": 0}}],
    ids=["start", "update", "end"],
)
async def test_well_formed_live_activity_events(
    sim: Sim, apns: httpx.AsyncClient, token: str, payload: dict[str, Any]
) -> None:
    """start (with attributes and alert), update and end are accepted."""
    response = await apns.post(f"/3/device/{token}", json=payload, headers=sim.la_headers())

    assert response.status_code == 200, response.text


async def test_out_of_order_update_is_accepted_but_marked_dropped(
    sim: Sim, apns: httpx.AsyncClient, token: str
) -> None:
    """Like APNs, an older update gets 200; the journal notes the device would discard it."""
    now = int(time.time())
    for timestamp in (now, now - 10):
        response = await apns.post(
            f"/3/device/{token}", json=la_update(timestamp=timestamp), headers=sim.la_headers()
        )
        assert response.status_code == 200

    newer, older = await sim.pushes(token=token)
    assert (newer["dropped_by_device"], older["dropped_by_device"]) == (None, "StaleTimestamp")


async def test_unregistered_token(sim: Sim, apns: httpx.AsyncClient, token: str) -> None:
    """A token marked unregistered answers 410 with reason and millisecond timestamp."""
    before = int(time.time() * 1000)
    await sim.admin.post("/_sim/unregister", json={"token": token})

    response = await apns.post(f"/3/device/{token}", json=la_update(), headers=sim.la_headers())

    assert response.status_code == 410
    body = response.json()
    assert body["reason"] == "Unregistered"
    assert before <= body["timestamp"] <= int(time.time() * 1000)


def other_key_pem() -> str:
    key = ec.generate_private_key(ec.SECP256R1())
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
