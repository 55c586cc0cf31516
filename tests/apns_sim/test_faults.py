"""Fault injection through the admin API, observed on real HTTP/2 requests."""

from __future__ import annotations

import asyncio
import contextlib
import json
import ssl
import time

import httpx
import pytest
from h2.connection import H2Connection
from h2.events import ConnectionTerminated

from tests.apns_sim.conftest import Sim, client_tls, device_token, la_update


async def push(sim: Sim, apns: httpx.AsyncClient, token: str) -> httpx.Response:
    return await apns.post(f"/3/device/{token}", json=la_update(), headers=sim.la_headers())


async def goaway_after_one_push(sim: Sim, token: str) -> ConnectionTerminated:
    """Send one push with raw h2 (no ALPN, like aioapns) and return the GOAWAY that follows."""
    reader, writer = await asyncio.open_connection(
        "localhost", sim.config.port, ssl=client_tls(sim.cert_path)
    )
    connection = H2Connection()
    connection.initiate_connection()
    headers = [
        (":method", "POST"),
        (":scheme", "https"),
        (":path", f"/3/device/{token}"),
        ("host", "localhost"),
        *sim.la_headers().items(),
    ]
    connection.send_headers(1, headers)
    connection.send_data(1, json.dumps(la_update()).encode(), end_stream=True)
    writer.write(connection.data_to_send())
    try:
        while data := await asyncio.wait_for(reader.read(65536), 5):
            for event in connection.receive_data(data):
                if isinstance(event, ConnectionTerminated):
                    return event
            writer.write(connection.data_to_send())
    finally:
        writer.close()
        with contextlib.suppress(ConnectionError, ssl.SSLError):
            await writer.wait_closed()
    raise AssertionError("connection closed without GOAWAY")


@pytest.mark.parametrize(
    ("status", "reason"),
    [
        (429, "TooManyRequests"),
        (500, "InternalServerError"),
        (503, "ServiceUnavailable"),
        (400, "BadDeviceToken"),
        (403, "ExpiredProviderToken"),
        (413, "PayloadTooLarge"),
    ],
)
async def test_status_fault_for_next_n_requests(
    sim: Sim, apns: httpx.AsyncClient, token: str, status: int, reason: str
) -> None:
    """A fault with count=2 answers the next two pushes with Apple's reason, then normal service resumes."""
    await sim.fault(status=status, count=2)

    answers = [await push(sim, apns, token) for _ in range(3)]

    assert [r.status_code for r in answers] == [status, status, 200]
    assert answers[0].json() == {"reason": reason}
    assert answers[0].headers["apns-id"]


async def test_injected_410_carries_timestamp(sim: Sim, apns: httpx.AsyncClient, token: str) -> None:
    """An injected Unregistered looks like the real one, timestamp included."""
    await sim.fault(status=410)

    body = (await push(sim, apns, token)).json()

    assert body["reason"] == "Unregistered"
    assert isinstance(body["timestamp"], int)


async def test_fault_for_one_token_only(sim: Sim, apns: httpx.AsyncClient, token: str) -> None:
    """A token-scoped fault leaves other tokens alone."""
    await sim.fault(status=500, token=token, count=5)

    other = await push(sim, apns, device_token())
    mine = await push(sim, apns, token)

    assert (other.status_code, mine.status_code) == (200, 500)


async def test_fault_for_a_duration(sim: Sim, apns: httpx.AsyncClient, token: str) -> None:
    """A duration fault applies to every request until it expires."""
    await sim.fault(status=503, duration_s=0.3)

    during = [(await push(sim, apns, token)).status_code for _ in range(3)]
    await asyncio.sleep(0.35)
    after = (await push(sim, apns, token)).status_code

    assert (during, after) == ([503, 503, 503], 200)


async def test_latency_fault_delays_only_the_affected_push(
    sim: Sim, apns: httpx.AsyncClient, token: str
) -> None:
    """Latency delays the answer to that push; other streams on the connection are not held up."""
    await sim.fault(latency_ms=400, token=token)

    started = time.monotonic()
    slow = asyncio.create_task(push(sim, apns, token))
    await asyncio.sleep(0.05)
    fast = await push(sim, apns, device_token())
    fast_done = time.monotonic() - started
    slow_response = await slow
    slow_done = time.monotonic() - started

    assert (slow_response.status_code, fast.status_code) == (200, 200)
    assert fast_done < 0.4 <= slow_done
    [record] = await sim.pushes(token=token)
    assert record["latency_ms"] == 400


async def test_goaway_fault_sends_json_reason(sim: Sim, apns: httpx.AsyncClient, token: str) -> None:
    """GOAWAY carries `{"reason": ...}` as debug data and marks the triggering stream unprocessed."""
    await sim.fault(action="goaway", reason="Shutdown")

    terminated = await goaway_after_one_push(sim, token)

    assert json.loads(terminated.additional_data or b"") == {"reason": "Shutdown"}
    assert terminated.last_stream_id == 0
    with pytest.raises(httpx.RemoteProtocolError):
        await sim.fault(action="goaway")
        await push(sim, apns, token)
    first, _ = await sim.pushes(token=token)
    assert (first["status"], first["reason"]) == (None, "Shutdown")


async def test_disconnect_fault_drops_the_connection(sim: Sim, apns: httpx.AsyncClient, token: str) -> None:
    """A disconnect fault closes TCP without an answer; the client can reconnect afterwards."""
    await sim.fault(action="disconnect")

    with pytest.raises(httpx.TransportError):
        await push(sim, apns, token)
    assert (await push(sim, apns, token)).status_code == 200


async def test_fault_admin_lifecycle(sim: Sim) -> None:
    """Faults can be listed and cleared; nonsense is refused with 422."""
    created = await sim.fault(status=429, count=3)
    listed = (await sim.admin.get("/_sim/faults")).json()["faults"]
    cleared = (await sim.admin.delete("/_sim/faults")).json()
    refused = [
        await sim.admin.post("/_sim/faults", json=spec)
        for spec in ({"status": 418}, {"action": "respond"}, {"status": 500, "count": 0}, {"colour": "red"})
    ]

    assert created["reason"] == "TooManyRequests" and created["remaining"] == 3
    assert [fault["id"] for fault in listed] == [created["id"]]
    assert cleared == {"cleared": 1}
    assert [r.status_code for r in refused] == [422, 422, 422, 422]
    assert (await sim.admin.get("/_sim/faults")).json() == {"faults": []}
