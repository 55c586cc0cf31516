"""The replay clock and the mapping of recorded times onto it."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from devkit.simulators.provider.timemap import format_datetime, parse_datetime
from tests.provider_sim.conftest import (
    BASIC,
    BASIC_ID,
    BASIC_ORIGIN,
    StartSim,
    recording_lines,
    write_recording,
)

FIXED_WALL = 1893499200.0  # 2030-01-01 12:00:00Z


async def test_start_in_puts_t0_that_many_real_seconds_ahead(start_sim: StartSim) -> None:
    """Before `t = 0` every fixture shows its first line, with kick-off mapped after the start delay."""
    sim = await start_sim(own_clock=True, start_in=30, speed=1)
    status = (await sim.client.get("/_sim/clock")).json()
    # Generous bounds: only the time since start (well under 5 s) separates them.
    assert -30 <= status["t"] < -25
    assert status["started"] is False
    assert 25 < status["clock_zero"] - time.time() <= 30

    fixture = (await sim.get(f"fixtures/{BASIC_ID}", include="state")).json()["data"]
    assert fixture["state"]["developer_name"] == "NS"
    # Kick-off is 120 s into the recording: 30 + 120 s after the start.
    assert fixture["starting_at_timestamp"] == round(status["clock_zero"] + 120)
    assert fixture["starting_at"] == format_datetime(fixture["starting_at_timestamp"])


async def test_speed_compresses_both_the_wait_and_the_mapped_times(start_sim: StartSim) -> None:
    """At speed 10 the clock starts at -start_in x 10 and recorded gaps shrink tenfold."""
    sim = await start_sim(own_clock=True, start_in=30, speed=10)
    status = (await sim.client.get("/_sim/clock")).json()
    assert -300 <= status["t"] < -250
    assert status["speed"] == 10
    assert 25 < status["clock_zero"] - time.time() <= 30
    fixture = (await sim.get(f"fixtures/{BASIC_ID}")).json()["data"]
    assert fixture["starting_at_timestamp"] == round(status["clock_zero"] + 120 / 10)


async def test_every_time_field_is_mapped_including_nested_periods(
    tmp_path: Path, start_sim: StartSim
) -> None:
    """`starting_at(_timestamp)`, `periods[].started/ended` and nested period objects all move together."""
    kickoff = BASIC_ORIGIN + 120
    period = {"id": 7, "started": kickoff, "ended": kickoff + 2820, "ticking": False}
    fixture = {
        "id": BASIC_ID,
        "state_id": 22,
        "starting_at": format_datetime(kickoff),
        "starting_at_timestamp": kickoff,
        "periods": [period, {"id": 8, "started": kickoff + 3720, "ended": None, "ticking": True}],
        "currentperiod": {"id": 8, "started": kickoff + 3720, "ended": None},
        "events": [{"id": 1, "minute": 12, "period": dict(period)}],
    }
    path = write_recording(tmp_path / "nested.jsonl", [{"t": 0, "fixture": fixture}])
    sim = await start_sim([path], t=4000, speed=2, wall=lambda: FIXED_WALL)
    zero: float = (await sim.client.get("/_sim/clock")).json()["clock_zero"]
    assert zero == FIXED_WALL - 4000 / 2

    def mapped(recorded: float) -> int:
        return round(zero + (recorded - BASIC_ORIGIN) / 2)

    shown = (await sim.get(f"fixtures/{BASIC_ID}", include="periods;currentPeriod;events.period")).json()[
        "data"
    ]
    assert shown["starting_at_timestamp"] == mapped(kickoff)
    assert parse_datetime(shown["starting_at"]) == mapped(kickoff)
    assert [(p["started"], p["ended"]) for p in shown["periods"]] == [
        (mapped(kickoff), mapped(kickoff + 2820)),
        (mapped(kickoff + 3720), None),
    ]
    assert shown["currentperiod"]["started"] == mapped(kickoff + 3720)
    assert shown["events"][0]["period"]["ended"] == mapped(kickoff + 2820)
    assert shown["events"][0]["minute"] == 12


async def test_a_recorded_kickoff_is_shown_at_the_moment_the_replay_reaches_it(start_sim: StartSim) -> None:
    """When the replay is at the kick-off line, the mapped kick-off is the replay's current moment."""
    sim = await start_sim(t=120, speed=5, wall=lambda: FIXED_WALL)
    fixture = (await sim.get(f"fixtures/{BASIC_ID}", include="periods;state")).json()["data"]
    assert fixture["state"]["developer_name"] == "INPLAY_1ST_HALF"
    assert fixture["starting_at_timestamp"] == FIXED_WALL
    assert fixture["periods"][0]["started"] == FIXED_WALL
    clock = (await sim.client.get("/_sim/clock")).json()
    assert clock["now"] == format_datetime(FIXED_WALL)


async def test_a_set_clock_keeps_running_at_speed(start_sim: StartSim) -> None:
    """After `{"t": ...}` a running clock carries on from there at its speed."""
    sim = await start_sim(own_clock=True, speed=10)
    assert (await sim.clock(t=1000))["t"] >= 1000
    await asyncio.sleep(0.2)
    t = (await sim.client.get("/_sim/clock")).json()["t"]
    assert 1002 <= t < 1030


async def test_freeze_advance_and_resume(start_sim: StartSim) -> None:
    """`freeze` stops the clock, `advance` moves it, `freeze: false` lets it run again."""
    sim = await start_sim(own_clock=True, speed=10)
    frozen = await sim.clock(t=500, freeze=True)
    assert frozen["t"] == 500
    assert frozen["frozen"] is True
    await asyncio.sleep(0.05)
    assert (await sim.client.get("/_sim/clock")).json()["t"] == 500
    assert (await sim.clock(advance=60))["t"] == 560
    assert (await sim.clock(advance=-10))["t"] == 550
    resumed = await sim.clock(freeze=False)
    assert resumed["frozen"] is False
    await asyncio.sleep(0.1)
    assert (await sim.client.get("/_sim/clock")).json()["t"] > 550.5


async def test_clock_reports_the_end_of_the_replay(start_sim: StartSim) -> None:
    """`end_t` is the last recorded line; `finished` turns true past it."""
    sim = await start_sim()
    last_t = recording_lines(BASIC)[-1]["t"]
    status = await sim.clock(t=last_t)
    assert status["end_t"] == last_t
    assert status["finished"] is False
    assert (await sim.clock(advance=1))["finished"] is True


async def test_a_clock_change_must_be_one_move(start_sim: StartSim) -> None:
    """`t` and `advance` together are rejected, as are unknown keys."""
    sim = await start_sim()
    assert (await sim.client.post("/_sim/clock", json={"t": 1, "advance": 2})).status_code == 422
    assert (await sim.client.post("/_sim/clock", json={"speed": 2})).status_code == 422
