"""`/_sim/rate-limit`: a test sets the simulator's hourly budget (calls per window, and the window)
and reads how it is spent, including the 429s it answered; both APIs, fresh counts on each set."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.provider_sim.conftest import BASIC, BASIC_ID, StartSim
from tests.provider_sim.test_cricket import cget
from tests.provider_sim.test_cricket_faults import one_match


async def test_a_set_limit_is_enforced_per_window_and_its_429s_are_counted(start_sim: StartSim) -> None:
    """N calls per W seconds: N are answered (counting down in `rate_limit`), the next is a 429 and
    counted as refused; once W real seconds have passed the window opens again."""
    sim = await start_sim(t=1000)
    status = (await sim.client.post("/_sim/rate-limit", json={"limit": 3, "window_seconds": 0.5})).json()
    assert status == {"sport": "football", "limit": 3, "window_seconds": 0.5, "refused": 0, "entities": {}}
    remaining = [
        (await sim.get(path)).json()["rate_limit"]["remaining"]
        for path in ("livescores/inplay", f"fixtures/{BASIC_ID}", f"fixtures/multi/{BASIC_ID}")
    ]
    assert remaining == [2, 1, 0]
    throttled = await sim.get("livescores/inplay")
    assert throttled.status_code == 429
    assert throttled.json()["rate_limit"]["resets_in_seconds"] == 1  # what is left of 0.5 s, rounded up
    status = (await sim.client.get("/_sim/rate-limit")).json()
    assert status["refused"] == 1
    assert status["entities"] == {"Fixture": {"used": 3, "remaining": 0, "resets_in_seconds": 1}}
    await asyncio.sleep(0.6)
    assert (await sim.get("livescores/inplay")).json()["rate_limit"]["remaining"] == 2
    assert (await sim.client.get("/_sim/rate-limit")).json()["refused"] == 1, "refusals are not per window"


async def test_setting_a_limit_starts_every_count_afresh(start_sim: StartSim) -> None:
    """A window used up and its refusals are forgotten when a new limit is set; the stats stay."""
    sim = await start_sim(t=1000)
    await sim.client.post("/_sim/rate-limit", json={"limit": 1, "window_seconds": 60})
    assert (await sim.get("livescores/inplay")).status_code == 200
    assert (await sim.get("livescores/inplay")).status_code == 429
    status = (await sim.client.post("/_sim/rate-limit", json={"limit": 2, "window_seconds": 60})).json()
    assert (status["limit"], status["refused"], status["entities"]) == (2, 0, {})
    assert (await sim.get("livescores/inplay")).json()["rate_limit"]["remaining"] == 1
    assert (await sim.client.get("/_sim/stats")).json()["requests"] == {"livescores/inplay": 3}


async def test_the_default_is_the_hourly_5000(start_sim: StartSim) -> None:
    """Unset, the budget is SportMonks' top plan: 5,000 calls per entity per hour."""
    sim = await start_sim(t=1000)
    await sim.get("livescores/inplay")
    status = (await sim.client.get("/_sim/rate-limit")).json()
    assert (status["limit"], status["window_seconds"], status["refused"]) == (5000, 3600.0, 0)
    assert status["entities"]["Fixture"]["used"] == 1
    assert 3590 < status["entities"]["Fixture"]["resets_in_seconds"] <= 3600


async def test_cricket_has_its_own_limit_per_endpoint(tmp_path: Path, start_sim: StartSim) -> None:
    """`"sport": "cricket"` limits each Cricket v2 endpoint and leaves football's budget alone."""
    sim = await start_sim([BASIC, one_match(tmp_path)], t=1000)
    await sim.client.post("/_sim/rate-limit", json={"limit": 1, "window_seconds": 60, "sport": "cricket"})
    assert (await cget(sim, "livescores")).status_code == 200
    assert (await cget(sim, "fixtures/7")).status_code == 200
    assert (await cget(sim, "livescores")).status_code == 429
    assert (await sim.get("livescores/inplay")).status_code == 200
    cricket = (await sim.client.get("/_sim/rate-limit", params={"sport": "cricket"})).json()
    assert cricket["limit"] == 1
    assert cricket["refused"] == 1
    assert {name: use["used"] for name, use in cricket["entities"].items()} == {
        "cricket/livescores": 1,
        "cricket/fixtures/{id}": 1,
    }
    football = (await sim.client.get("/_sim/rate-limit")).json()
    assert (football["limit"], football["refused"]) == (5000, 0)


async def test_a_limit_must_be_a_positive_count_per_positive_window(start_sim: StartSim) -> None:
    """Zero calls, a window that is not positive, an unknown sport or field: 422, nothing changed."""
    sim = await start_sim(t=1000)
    for change in (
        {"limit": 0, "window_seconds": 60},
        {"limit": 10, "window_seconds": 0},
        {"limit": 10},
        {"limit": 10, "window_seconds": 60, "sport": "tennis"},
        {"limit": 10, "window_seconds": 60, "per": "hour"},
    ):
        response = await sim.client.post("/_sim/rate-limit", json=change)
        assert response.status_code == 422, change
    assert (await sim.client.get("/_sim/rate-limit")).json()["limit"] == 5000
