"""The Scoreline sender's library, aioapns 4.0, works against the simulator unmodified."""

from __future__ import annotations

import asyncio
import time

from aioapns import NotificationRequest, PushType

from tests.apns_sim.conftest import Sim, la_update


def live_activity_request(sim: Sim, token: str, **options: object) -> NotificationRequest:
    return NotificationRequest(
        device_token=token,
        message=la_update(**options),
        push_type=PushType.LIVEACTIVITY,
        priority=5,
        time_to_live=3600,
        apns_topic=sim.la_topic,
    )


async def test_live_activity_update_is_accepted_and_journaled(sim: Sim, token: str) -> None:
    """A real aioapns push gets 200 and shows up in the journal with its headers, JWT and payload."""
    client = sim.aioapns_client()
    try:
        request = live_activity_request(sim, token)
        result = await client.send_notification(request)
    finally:
        client.pool.close()

    assert (result.status, result.description) == ("200", None)
    [push] = await sim.pushes(token=token)
    assert push["status"] == 200
    assert push["apns_id"] == request.notification_id
    assert push["headers"]["apns-push-type"] == "liveactivity"
    assert push["headers"]["apns-topic"] == sim.la_topic
    assert push["headers"]["apns-priority"] == "5"
    assert int(push["headers"]["apns-expiration"]) >= int(time.time()) + 3500
    assert push["jwt"] == {"kid": sim.config.key_id, "iss": sim.config.team_id, "iat": push["jwt"]["iat"]}
    assert push["payload"] == request.message
    assert push["dropped_by_device"] is None


async def test_unregistered_token_gives_410_with_timestamp(sim: Sim, token: str) -> None:
    """aioapns sees 410 Unregistered and the millisecond timestamp the admin API set."""
    stamp = 1_760_000_000_123
    response = await sim.admin.post("/_sim/unregister", json={"token": token, "timestamp_ms": stamp})
    assert response.json() == {"token": token, "timestamp": stamp}
    client = sim.aioapns_client()
    try:
        result = await client.send_notification(live_activity_request(sim, token))
    finally:
        client.pool.close()

    assert (result.status, result.description, result.timestamp) == ("410", "Unregistered", stamp)


async def test_injected_throttle_reaches_aioapns(sim: Sim, token: str) -> None:
    """An injected 429 arrives at aioapns as status and reason; the next push goes through."""
    await sim.fault(status=429, token=token)
    client = sim.aioapns_client()
    try:
        first = await client.send_notification(live_activity_request(sim, token))
        second = await client.send_notification(live_activity_request(sim, token))
    finally:
        client.pool.close()

    assert (first.status, first.description) == ("429", "TooManyRequests")
    assert second.status == "200"


async def test_goaway_makes_aioapns_reconnect_and_resend(sim: Sim, token: str) -> None:
    """After GOAWAY `Shutdown` aioapns retries on a new connection, as it would against Apple."""
    await sim.fault(action="goaway")
    client = sim.aioapns_client()
    try:
        result = await asyncio.wait_for(client.send_notification(live_activity_request(sim, token)), 10)
    finally:
        client.pool.close()

    assert result.status == "200"
    dropped, delivered = await sim.pushes(token=token)
    assert (dropped["status"], dropped["reason"]) == (None, "Shutdown")
    assert dropped["fault_id"] is not None
    assert delivered["status"] == 200
    assert delivered["connection_id"] != dropped["connection_id"]
