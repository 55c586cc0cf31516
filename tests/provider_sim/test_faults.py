"""Every fault kind, scripted in a recording and posted live, as a client sees it on the wire."""

from __future__ import annotations

import asyncio
import json
import re
import time
from pathlib import Path

import httpx
import pytest

from tests.provider_sim.conftest import BASIC_ID, StartSim, with_faults

FIXTURE = f"fixtures/{BASIC_ID}"


async def assert_ok(response: httpx.Response) -> None:
    """A normal data answer."""
    assert response.status_code == 200
    assert response.json()["data"]


async def test_scripted_status_lasts_its_duration_of_replay_time(tmp_path: Path, start_sim: StartSim) -> None:
    """A 503 from t=1000 for 60 s: fine just before, 503 inside, fine again at its end."""
    path = with_faults(tmp_path, [(1000, {"kind": "status", "status": 503, "duration": 60})])
    sim = await start_sim([path], t=999)
    await assert_ok(await sim.get(FIXTURE))
    await sim.clock(t=1000)
    response = await sim.get(FIXTURE)
    assert response.status_code == 503
    assert response.json() == {"message": "Service Unavailable"}
    await sim.clock(t=1059.9)
    assert (await sim.get("livescores/inplay")).status_code == 503
    await sim.clock(t=1060)
    await assert_ok(await sim.get(FIXTURE))


async def test_live_status_until_cleared(start_sim: StartSim) -> None:
    """A posted fault without bounds lasts until `DELETE /_sim/faults`."""
    sim = await start_sim(t=1000)
    await sim.fault(kind="status", status=500)
    assert (await sim.get(FIXTURE)).status_code == 500
    assert (await sim.get(FIXTURE)).status_code == 500
    assert (await sim.client.delete("/_sim/faults")).json() == {"cleared": 1}
    await assert_ok(await sim.get(FIXTURE))


async def test_a_fault_can_be_limited_to_some_endpoints(tmp_path: Path, start_sim: StartSim) -> None:
    """`endpoints` confines a fault; the other endpoints answer normally."""
    path = with_faults(
        tmp_path, [(500, {"kind": "status", "status": 502, "endpoints": ["livescores/inplay"]})]
    )
    sim = await start_sim([path], t=1000)
    assert (await sim.get("livescores/inplay")).status_code == 502
    await assert_ok(await sim.get(FIXTURE))
    await sim.fault(kind="status", status=504, endpoints=["fixtures/{id}"])
    assert (await sim.get(FIXTURE)).status_code == 504
    await assert_ok(await sim.get(f"fixtures/multi/{BASIC_ID}"))


async def test_scripted_rate_limit_counts_down_resets_in_seconds(tmp_path: Path, start_sim: StartSim) -> None:
    """429 with SportMonks' body; `rate_limit.resets_in_seconds` is the time left, counting down."""
    path = with_faults(tmp_path, [(1000, {"kind": "rate_limit", "duration": 300})])
    sim = await start_sim([path], t=1000)
    response = await sim.get("livescores/inplay")
    assert response.status_code == 429
    body = response.json()
    assert body["message"] == "You have reached your rate limit"
    assert body["code"] == 5005
    assert body["link"] == "https://docs.sportmonks.com/football/api/response-codes/other-exceptions"
    assert re.fullmatch(r"[0-9a-f]{32}", body["reset_code"])
    assert body["rate_limit"] == {"resets_in_seconds": 300, "remaining": 0, "requested_entity": "Fixture"}
    await sim.clock(advance=100)
    assert (await sim.get("livescores/inplay")).json()["rate_limit"]["resets_in_seconds"] == 200
    await sim.clock(advance=200)
    await assert_ok(await sim.get("livescores/inplay"))


async def test_live_rate_limit_reports_real_seconds_at_speed(start_sim: StartSim) -> None:
    """At speed 10, 300 replay seconds are 30 real ones, and that is what the client is told."""
    sim = await start_sim(t=1000, speed=10)
    await sim.fault(kind="rate_limit", duration=300)
    response = await sim.get(FIXTURE)
    assert response.status_code == 429
    assert response.json()["rate_limit"]["resets_in_seconds"] == 30


async def test_malformed_spoils_the_next_count_responses(tmp_path: Path, start_sim: StartSim) -> None:
    """Scripted `count: 2`: two answers that are not JSON, then normal ones; nothing before `t`."""
    path = with_faults(tmp_path, [(1000, {"kind": "malformed", "count": 2})])
    sim = await start_sim([path], t=999)
    await assert_ok(await sim.get(FIXTURE))
    await sim.clock(t=1000)
    for _ in range(2):
        response = await sim.get(FIXTURE)
        assert response.status_code == 200
        assert response.headers["content-type"] == "application/json"
        with pytest.raises(json.JSONDecodeError):
            json.loads(response.content)
    await assert_ok(await sim.get(FIXTURE))


async def test_truncated_bodies_break_on_the_wire(tmp_path: Path, start_sim: StartSim) -> None:
    """Headers promise the whole body, half arrives, the connection closes: a broken read."""
    path = with_faults(tmp_path, [(1000, {"kind": "truncated", "count": 1})])
    sim = await start_sim([path], t=1000)
    async with sim.client.stream("GET", f"/v3/football/{FIXTURE}") as response:
        assert response.status_code == 200
        promised = int(response.headers["content-length"])
        with pytest.raises(httpx.RemoteProtocolError, match=f"expected {promised}"):
            await response.aread()
    await sim.fault(kind="truncated", count=1)
    with pytest.raises(httpx.RemoteProtocolError):
        await sim.get("livescores/inplay")
    await assert_ok(await sim.get(FIXTURE))


async def test_reset_is_a_transport_error_not_a_response(tmp_path: Path, start_sim: StartSim) -> None:
    """Scripted and live resets drop the TCP connection: httpx raises, no status is seen."""
    path = with_faults(tmp_path, [(1000, {"kind": "reset", "count": 2})])
    sim = await start_sim([path], t=1000)
    for _ in range(2):
        with pytest.raises(httpx.TransportError):
            await sim.get(FIXTURE)
    await assert_ok(await sim.get(FIXTURE))
    await sim.fault(kind="reset", count=1, endpoints=["livescores"])
    with pytest.raises(httpx.TransportError):
        await sim.get("livescores")
    stats = (await sim.client.get("/_sim/stats")).json()
    assert stats["faults"] == {"reset": 3}
    assert stats["requests"] == {"fixtures/{id}": 3, "livescores": 1}


async def test_scripted_hang_holds_requests_until_its_duration_ends(
    tmp_path: Path, start_sim: StartSim
) -> None:
    """A request in a hang gets no answer (client timeout); once the clock passes its end, answers resume."""
    path = with_faults(tmp_path, [(1000, {"kind": "hang", "duration": 120})])
    sim = await start_sim([path], t=1000)
    with pytest.raises(httpx.ReadTimeout):
        await sim.client.get(f"/v3/football/{FIXTURE}", timeout=0.3)
    await sim.clock(t=1120)
    await assert_ok(await sim.get(FIXTURE))


async def test_a_request_abandoned_in_a_hang_uses_no_other_fault(start_sim: StartSim) -> None:
    """The client gives up during the hang; the malformed answer is kept for the next request."""
    sim = await start_sim(t=1000)
    await sim.fault(kind="hang", count=1)
    await sim.fault(kind="malformed", count=1)
    with pytest.raises(httpx.ReadTimeout):
        await sim.client.get(f"/v3/football/{FIXTURE}", timeout=0.2)
    await asyncio.sleep(0.15)  # the server notices the disconnect within its 50 ms poll
    with pytest.raises(json.JSONDecodeError):
        json.loads((await sim.get(FIXTURE)).content)


async def test_a_hung_request_is_answered_once_the_fault_is_cleared(start_sim: StartSim) -> None:
    """A live hang holds the request; `DELETE /_sim/faults` releases it with a normal answer."""
    sim = await start_sim(t=1000)
    await sim.fault(kind="hang")
    pending = asyncio.create_task(sim.get(FIXTURE))
    await asyncio.sleep(0.2)
    assert not pending.done()
    await sim.client.delete("/_sim/faults")
    await assert_ok(await asyncio.wait_for(pending, timeout=2))


async def test_drop_include_silently_omits_the_relation(tmp_path: Path, start_sim: StartSim) -> None:
    """`events` is left out although requested; other includes stay; no request for it, no use."""
    path = with_faults(tmp_path, [(1000, {"kind": "drop_include", "include": "events", "duration": 180})])
    sim = await start_sim([path], t=1000)
    plain = await sim.get(FIXTURE, include="scores")
    assert "scores" in plain.json()["data"]
    fixture = (await sim.get(FIXTURE, include="events;scores")).json()["data"]
    assert "events" not in fixture
    assert "scores" in fixture
    faults = (await sim.client.get("/_sim/faults")).json()
    assert [(f["source"], f["used"]) for f in faults] == [("recording", 1)]
    await sim.clock(t=1180)
    assert "events" in (await sim.get(FIXTURE, include="events")).json()["data"]


async def test_drop_include_of_a_nested_relation(start_sim: StartSim) -> None:
    """`events.type` drops only the nested type."""
    sim = await start_sim(t=1000)
    await sim.fault(kind="drop_include", include="events.type")
    events = (await sim.get(FIXTURE, include="events.type")).json()["data"]["events"]
    assert events
    assert all("type" not in event for event in events)


async def test_latency_delays_answers_while_it_lasts(start_sim: StartSim) -> None:
    """Each affected answer waits `seconds` of real time; past `duration` answers are quick again."""
    sim = await start_sim(t=1000)
    await sim.fault(kind="latency", seconds=0.3, duration=60)
    started = time.monotonic()
    await assert_ok(await sim.get(FIXTURE))
    assert time.monotonic() - started >= 0.3
    await sim.clock(advance=60)
    await assert_ok(await sim.get(FIXTURE))
    faults = (await sim.client.get("/_sim/faults")).json()
    assert [(f["used"], f["in_force"]) for f in faults] == [(1, False)]


async def test_live_faults_are_listed_and_validated(start_sim: StartSim) -> None:
    """`GET /_sim/faults` shows each fault's progress; a bad fault is a 422."""
    sim = await start_sim(t=1000)
    added = await sim.fault(kind="malformed", count=1)
    assert added["in_force"] is True
    await sim.get(FIXTURE)
    listed = (await sim.client.get("/_sim/faults")).json()
    assert listed == [
        {
            "id": added["id"],
            "source": "live",
            "start_t": 1000.0,
            "used": 1,
            "in_force": False,
            "fault": {"kind": "malformed", "count": 1},
        }
    ]
    for bad in (
        {"kind": "explode"},
        {"kind": "status", "status": 200},
        {"kind": "latency"},
        {"kind": "reset", "endpoints": ["nowhere"]},
    ):
        assert (await sim.client.post("/_sim/faults", json=bad)).status_code == 422, bad
