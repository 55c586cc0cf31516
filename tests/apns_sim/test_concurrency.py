"""Many concurrent streams on one HTTP/2 connection, as a busy sender produces them."""

from __future__ import annotations

import asyncio
import time

from aioapns import NotificationRequest, PushType

from tests.apns_sim.conftest import Sim, device_token, la_update

PUSHES = 1000
LATENCY_MS = 300


async def test_thousand_pushes_over_one_connection_all_answered(sim: Sim) -> None:
    """1,000 concurrent aioapns pushes on one connection each get 200, while each answer is held 300 ms."""
    await sim.fault(latency_ms=LATENCY_MS, count=PUSHES)
    client = sim.aioapns_client(max_connections=1)
    requests = [
        NotificationRequest(
            device_token=device_token(),
            message=la_update(),
            push_type=PushType.LIVEACTIVITY,
            priority=5,
            apns_topic=sim.la_topic,
        )
        for _ in range(PUSHES)
    ]
    started = time.monotonic()
    try:
        results = await asyncio.wait_for(asyncio.gather(*map(client.send_notification, requests)), 60)
    finally:
        client.pool.close()
    elapsed = time.monotonic() - started

    assert [r.status for r in results] == ["200"] * PUSHES
    assert {r.notification_id for r in results} == {r.notification_id for r in requests}
    pushes = await sim.pushes(limit=PUSHES)
    assert len(pushes) == PUSHES
    assert len({p["connection_id"] for p in pushes}) == 1
    assert len({p["stream_id"] for p in pushes}) == PUSHES
    # Served one at a time this would take PUSHES * 0.3 s; overlapping streams finish in a few seconds.
    assert elapsed < PUSHES * LATENCY_MS / 1000 / 10
