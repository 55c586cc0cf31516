"""Faults, stats and the hourly budget on Cricket v2 endpoints; football and cricket in one process."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from devkit.simulators.provider.ratelimit import RateLimiter
from tests.provider_sim.conftest import BASIC, BASIC_ID, StartSim
from tests.provider_sim.test_cricket import ball, cget, cricket_fixture, data, write_cricket


def one_match(tmp_path: Path, *faults: tuple[float, dict[str, object]]) -> Path:
    lines: list[dict[str, object]] = [
        {"t": 0, "fixture": cricket_fixture(7, "1st Innings", balls=[ball(1, 0.1, 0), ball(4, 0.2, 0)])}
    ]
    lines += [{"t": t, "fault": fault} for t, fault in faults]
    return write_cricket(tmp_path / "match.jsonl", lines, fixtures=[7])


async def test_a_status_fault_limited_to_a_cricket_endpoint(tmp_path: Path, start_sim: StartSim) -> None:
    """`endpoints: ["cricket/livescores"]` hits that endpoint only, not football's `livescores`."""
    sim = await start_sim([BASIC, one_match(tmp_path)], t=1000)
    await sim.fault(kind="status", status=503, endpoints=["cricket/livescores"], duration=60)
    response = await cget(sim, "livescores")
    assert response.status_code == 503
    assert response.json() == {"message": "Service Unavailable"}
    assert (await cget(sim, "fixtures/7")).status_code == 200
    assert (await sim.get("livescores")).status_code == 200
    await sim.clock(advance=60)
    assert (await cget(sim, "livescores")).status_code == 200


async def test_a_rate_limit_fault_is_a_bare_429_with_retry_after(tmp_path: Path, start_sim: StartSim) -> None:
    """Cricket's 429 has a message and no rate-limit block; `Retry-After` counts down in real seconds."""
    path = one_match(tmp_path, (1000, {"kind": "rate_limit", "duration": 300}))
    sim = await start_sim([path], t=1000, speed=2)
    response = await cget(sim, "fixtures/7")
    assert response.status_code == 429
    assert response.json() == {"message": "Too Many Attempts."}
    assert response.headers["retry-after"] == "150"
    await sim.clock(advance=100)
    assert (await cget(sim, "scores")).headers["retry-after"] == "100"
    await sim.clock(advance=200)
    assert (await cget(sim, "fixtures/7")).status_code == 200


async def test_a_cricket_recordings_fault_stays_on_the_cricket_api(
    tmp_path: Path, start_sim: StartSim
) -> None:
    """A scripted fault without `endpoints` acts on its own recording's API only."""
    path = one_match(tmp_path, (500, {"kind": "status", "status": 500}))
    sim = await start_sim([BASIC, path], t=600)
    for endpoint in ("livescores", "fixtures", "fixtures/7", "scores"):
        assert (await cget(sim, endpoint)).status_code == 500, endpoint
    assert (await sim.get(f"fixtures/{BASIC_ID}")).status_code == 200
    # A live fault without `endpoints` hits both APIs.
    await sim.fault(kind="status", status=502, count=2)
    assert (await sim.get(f"fixtures/{BASIC_ID}")).status_code == 502


async def test_drop_include_removes_a_nested_relation(tmp_path: Path, start_sim: StartSim) -> None:
    """`balls.score` dropped: the balls come without their score; `runs` dropped: no runs at all."""
    sim = await start_sim([one_match(tmp_path)])
    await sim.fault(kind="drop_include", include="balls.score", count=1)
    shown = data(await cget(sim, "fixtures/7", include="balls,runs"))
    assert len(shown["balls"]) == 2
    assert all("score" not in item and "batsman" in item for item in shown["balls"])
    assert all("score" in item for item in data(await cget(sim, "fixtures/7", include="balls"))["balls"])
    await sim.fault(kind="drop_include", include="runs", endpoints=["cricket/livescores"])
    assert "runs" not in data(await cget(sim, "livescores", include="balls,runs"))[0]
    assert "runs" in data(await cget(sim, "fixtures/7", include="runs"))


async def test_malformed_truncated_and_reset_on_cricket(tmp_path: Path, start_sim: StartSim) -> None:
    """The body-level and connection faults work on cricket endpoints like on football's."""
    sim = await start_sim([one_match(tmp_path)])
    await sim.fault(kind="malformed", count=1, endpoints=["cricket/fixtures/{id}"])
    garbled = await cget(sim, "fixtures/7")
    assert garbled.status_code == 200
    with pytest.raises(json.JSONDecodeError):
        json.loads(garbled.content)
    await sim.fault(kind="truncated", count=1, endpoints=["cricket/scores"])
    with pytest.raises(httpx.TransportError):
        await cget(sim, "scores")
    await sim.fault(kind="reset", count=1, endpoints=["cricket/fixtures"])
    with pytest.raises(httpx.TransportError):
        await cget(sim, "fixtures")
    assert data(await cget(sim, "fixtures/7"))["id"] == 7


async def test_stats_count_cricket_requests_per_endpoint(tmp_path: Path, start_sim: StartSim) -> None:
    """Every cricket request counts under its `cricket/…` name, refused ones included."""
    sim = await start_sim([BASIC, one_match(tmp_path)])
    await cget(sim, "livescores")
    await cget(sim, "livescores")
    await cget(sim, "fixtures/7")
    await cget(sim, "fixtures/999")
    await cget(sim, "fixtures")
    await cget(sim, "scores")
    await cget(sim, "scores/17")
    await sim.get("livescores")
    async with httpx.AsyncClient(base_url=sim.base_url) as bare:
        assert (await bare.get("/api/v2.0/scores")).status_code == 401
    stats = (await sim.client.get("/_sim/stats")).json()
    assert stats["requests"] == {
        "cricket/livescores": 2,
        "cricket/fixtures/{id}": 2,
        "cricket/fixtures": 1,
        "cricket/scores": 2,
        "cricket/scores/{id}": 1,
        "livescores": 1,
    }
    assert stats["total"] == 9
    await sim.fault(kind="status", status=500, count=1, endpoints=["cricket/scores"])
    await cget(sim, "scores")
    assert (await sim.client.get("/_sim/stats")).json()["faults"] == {"status": 1}


async def test_the_hourly_budget_is_per_cricket_endpoint(tmp_path: Path, start_sim: StartSim) -> None:
    """Once an endpoint's budget is spent it answers 429 until the window resets; others go on."""
    sim = await start_sim([one_match(tmp_path)])
    sim.simulator.cricket_rate_limiter = RateLimiter(limit=2)
    assert (await cget(sim, "livescores")).status_code == 200
    assert (await cget(sim, "livescores")).status_code == 200
    refused = await cget(sim, "livescores")
    assert refused.status_code == 429
    assert refused.json() == {"message": "Too Many Attempts."}
    assert 3590 <= int(refused.headers["retry-after"]) <= 3600
    assert (await cget(sim, "fixtures/7")).status_code == 200
    # Football's budget is its own.
    assert sim.simulator.rate_limiter.peek("Fixture").remaining == 5000


async def test_football_and_cricket_are_served_together(tmp_path: Path, start_sim: StartSim) -> None:
    """One process, one clock: each API lists only its own sport's fixtures."""
    sim = await start_sim([BASIC, one_match(tmp_path)], t=1000)
    football = (await sim.get("livescores")).json()["data"]
    assert [fixture["id"] for fixture in football] == [BASIC_ID]
    assert [fixture["id"] for fixture in data(await cget(sim, "livescores"))] == [7]
    assert (await cget(sim, f"fixtures/{BASIC_ID}")).status_code == 404
    assert "message" in (await sim.get("fixtures/7")).json()
    ready = (await sim.client.get("/readyz")).json()
    assert (ready["recordings"], ready["fixtures"]) == (2, 2)
    clock = (await sim.client.get("/_sim/clock")).json()
    assert clock["end_t"] == sim.simulator.replay.end_t
