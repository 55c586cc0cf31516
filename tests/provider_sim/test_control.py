"""Auth on the data API, and the token-free health and `/_sim` endpoints."""

from __future__ import annotations

import httpx

from tests.provider_sim.conftest import BASIC_ID, TOKEN, StartSim


async def test_a_missing_or_wrong_token_is_401(start_sim: StartSim) -> None:
    """No token, a wrong `api_token` or a wrong `Authorization` all get the SportMonks-style 401."""
    sim = await start_sim(t=1000)
    url = f"{sim.base_url}/v3/football/livescores/inplay"
    async with httpx.AsyncClient() as bare:
        for response in [
            await bare.get(url),
            await bare.get(url, params={"api_token": "wrong"}),
            await bare.get(url, headers={"Authorization": "wrong"}),
            await bare.get(url, headers={"Authorization": f"Basic {TOKEN}"}),
        ]:
            assert response.status_code == 401
            assert response.json() == {"message": "Unauthenticated."}


async def test_the_token_is_accepted_as_query_raw_header_or_bearer(start_sim: StartSim) -> None:
    """`api_token=`, `Authorization: <token>` (the real API's form) and `Bearer <token>` all work."""
    sim = await start_sim(t=1000)
    url = f"{sim.base_url}/v3/football/fixtures/{BASIC_ID}"
    async with httpx.AsyncClient() as bare:
        for response in [
            await bare.get(url, params={"api_token": TOKEN}),
            await bare.get(url, headers={"Authorization": TOKEN}),
            await bare.get(url, headers={"Authorization": f"Bearer {TOKEN}"}),
        ]:
            assert response.status_code == 200
            assert response.json()["data"]["id"] == BASIC_ID


async def test_health_and_control_endpoints_need_no_token(start_sim: StartSim) -> None:
    """`/healthz`, `/readyz` and `/_sim/*` answer without a token."""
    sim = await start_sim()
    async with httpx.AsyncClient(base_url=sim.base_url) as bare:
        assert (await bare.get("/healthz")).json() == {"status": "ok"}
        ready = (await bare.get("/readyz")).json()
        assert ready == {"status": "ready", "checks": {"recordings": "ok"}, "recordings": 1, "fixtures": 1}
        for path in ("/_sim/clock", "/_sim/stats", "/_sim/faults"):
            assert (await bare.get(path)).status_code == 200, path


async def test_stats_count_requests_per_endpoint_until_reset(start_sim: StartSim) -> None:
    """Every data request counts, answered or not; `/_sim` and health calls do not; reset zeroes."""
    sim = await start_sim(t=1000)
    for _ in range(3):
        await sim.get("livescores/inplay")
    await sim.get(f"fixtures/{BASIC_ID}")
    await sim.get(f"fixtures/multi/{BASIC_ID}")
    await sim.get("fixtures/between/2020-01-01/2020-01-02")
    await sim.get("livescores/latest")
    await sim.get("livescores")
    async with httpx.AsyncClient() as bare:
        await bare.get(f"{sim.base_url}/v3/football/livescores/inplay")  # 401, still a call
    await sim.client.get("/healthz")

    stats = (await sim.client.get("/_sim/stats")).json()
    assert stats == {
        "requests": {
            "livescores/inplay": 4,
            "fixtures/{id}": 1,
            "fixtures/multi/{ids}": 1,
            "fixtures/between/{start}/{end}": 1,
            "livescores/latest": 1,
            "livescores": 1,
        },
        "total": 9,
        "faults": {},
    }
    reset = (await sim.client.post("/_sim/stats/reset")).json()
    assert reset == {"requests": {}, "total": 0, "faults": {}}
    await sim.get("livescores")
    assert (await sim.client.get("/_sim/stats")).json()["requests"] == {"livescores": 1}
