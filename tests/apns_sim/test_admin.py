"""The admin API: health, journal queries and statistics."""

from __future__ import annotations

import httpx

from tests.apns_sim.conftest import Sim, device_token, la_update


async def test_health_and_readiness(sim: Sim) -> None:
    """/healthz answers ok; /readyz reports ready with its checks."""
    health = await sim.admin.get("/healthz")
    ready = await sim.admin.get("/readyz")

    assert (health.status_code, health.json()["status"]) == (200, "ok")
    assert ready.status_code == 200
    assert ready.json() == {"status": "ready", "checks": {"tls": "ok", "signing_keys": "ok"}}


async def test_journal_filter_limit_order_and_clear(sim: Sim, apns: httpx.AsyncClient) -> None:
    """Pushes come back newest last, filtered by token and limited; DELETE empties the journal."""
    first, second = device_token(), device_token()
    for token, n in [(first, 1), (second, 2), (first, 3), (first, 4)]:
        body = la_update(**{"content-state": {"n": n}})
        await apns.post(f"/3/device/{token}", json=body, headers=sim.la_headers())

    only_first = await sim.pushes(token=first, limit=2)
    everything = await sim.pushes()
    cleared = (await sim.admin.delete("/_sim/pushes")).json()

    assert [p["payload"]["aps"]["content-state"]["n"] for p in only_first] == [3, 4]
    assert [p["payload"]["aps"]["content-state"]["n"] for p in everything] == [1, 2, 3, 4]
    assert everything[0]["seq"] < everything[-1]["seq"]
    assert "authorization" not in everything[0]["headers"]
    assert cleared == {"cleared": 4}
    assert await sim.pushes() == []


async def test_stats_count_by_status_and_reason(sim: Sim, apns: httpx.AsyncClient) -> None:
    """Stats count answers by status and reason and report a push rate and connections."""
    token = device_token()
    await apns.post(f"/3/device/{token}", json=la_update(), headers=sim.la_headers())
    await apns.post(f"/3/device/{token}", json=la_update(), headers=sim.la_headers())
    await apns.post("/3/device/zz", json=la_update(), headers=sim.la_headers())
    await apns.post(f"/3/device/{token}", json=la_update(), headers={"apns-topic": sim.la_topic})

    stats = (await sim.admin.get("/_sim/stats")).json()

    assert stats["pushes"]["total"] == 4
    assert stats["pushes"]["by_status"] == {"200": 2, "400": 1, "403": 1}
    assert stats["pushes"]["by_reason"] == {"BadDeviceToken": 1, "MissingProviderToken": 1}
    assert stats["pushes"]["pushes_per_second_last_10s"] > 0
    assert stats["connections"]["open"] >= 1
    assert stats["active_faults"] == 0
