"""The SportMonks endpoints: what each lists, includes, pagination and the real API's quirks."""

from __future__ import annotations

from typing import Any

import httpx

from devkit.simulators.provider.envelope import NO_RESULTS_MESSAGE
from devkit.simulators.provider.ratelimit import RateLimiter
from tests.provider_sim.conftest import (
    BASIC,
    BASIC_ID,
    CORRECTION,
    CORRECTION_ID,
    THREE_MATCHES,
    StartSim,
)

FIXED_WALL = 1893499200.0  # 2030-01-01 12:00:00Z
RELATIONS = {"participants", "state", "scores", "periods", "events", "timeline"}


def assert_no_results(response: httpx.Response) -> None:
    """The real API's empty answer: 200, a message, the usual blocks, and no `data` key."""
    assert response.status_code == 200
    body = response.json()
    assert "data" not in body
    assert body["message"] == NO_RESULTS_MESSAGE
    assert body["timezone"] == "UTC"
    assert body["rate_limit"]["requested_entity"] == "Fixture"
    assert isinstance(body["subscription"], list)


def ids(response: httpx.Response) -> list[int]:
    """The fixture ids in a list answer."""
    return [fixture["id"] for fixture in response.json()["data"]]


def event_ids(fixture: dict[str, Any]) -> set[int]:
    """The ids in a fixture's `events`."""
    return {event["id"] for event in fixture["events"]}


async def test_inplay_before_kickoff_is_the_no_results_quirk(start_sim: StartSim) -> None:
    """Nothing live is HTTP 200 with the "No result(s)" message and no `data` key."""
    sim = await start_sim(t=60)
    assert_no_results(await sim.get("livescores/inplay"))


async def test_inplay_lists_live_fixtures_with_the_envelope(start_sim: StartSim) -> None:
    """A live fixture is listed in `data` with `subscription`, `rate_limit` and `timezone`."""
    sim = await start_sim(t=1000)
    body = (await sim.get("livescores/inplay")).json()
    assert [fixture["id"] for fixture in body["data"]] == [BASIC_ID]
    assert body["timezone"] == "UTC"
    assert body["subscription"][0]["plans"][0]["sport"] == "Football"
    assert set(body["rate_limit"]) == {"resets_in_seconds", "remaining", "requested_entity"}
    assert "pagination" not in body


async def test_rate_limit_remaining_counts_down(start_sim: StartSim) -> None:
    """Each answered request spends one call of the hourly budget."""
    sim = await start_sim(t=1000)
    first = (await sim.get("livescores/inplay")).json()["rate_limit"]
    second = (await sim.get(f"fixtures/{BASIC_ID}")).json()["rate_limit"]
    assert second["remaining"] == first["remaining"] - 1
    assert 0 < second["resets_in_seconds"] <= 3600


async def test_an_exhausted_hourly_budget_is_a_429(start_sim: StartSim) -> None:
    """Once `remaining` reaches 0 the next call gets SportMonks' rate-limit body."""
    sim = await start_sim(t=1000)
    sim.simulator.rate_limiter = RateLimiter(limit=2)
    assert (await sim.get("livescores/inplay")).json()["rate_limit"]["remaining"] == 1
    assert (await sim.get(f"fixtures/{BASIC_ID}")).json()["rate_limit"]["remaining"] == 0
    response = await sim.get("livescores")
    assert response.status_code == 429
    assert response.json()["code"] == 5005
    assert response.json()["rate_limit"]["remaining"] == 0


async def test_each_line_replaces_the_fixture_so_removed_events_disappear(start_sim: StartSim) -> None:
    """A VAR-cancelled goal vanishes with the next line; an amended event shows its new fields."""
    sim = await start_sim([CORRECTION], t=2179)
    path = f"fixtures/{CORRECTION_ID}"
    before = (await sim.get(path, include="events;scores")).json()["data"]
    assert 510002 in event_ids(before)
    await sim.clock(t=2180)
    after = (await sim.get(path, include="events;scores")).json()["data"]
    assert 510002 not in event_ids(after)
    assert {row["score"]["goals"] for row in after["scores"] if row["description"] == "CURRENT"} == {0, 1}

    await sim.clock(t=4399)
    booked = (await sim.get(path, include="events")).json()["data"]["events"]
    assert next(e for e in booked if e["id"] == 510004)["player_name"] == "Jack Dunn"
    await sim.clock(t=4400)
    amended = (await sim.get(path, include="events")).json()["data"]["events"]
    assert next(e for e in amended if e["id"] == 510004)["player_name"] == "Leo Grant"


async def test_without_include_only_base_fields_are_sent(start_sim: StartSim) -> None:
    """No `include`: none of the recorded relations appear."""
    sim = await start_sim(t=1000)
    fixture = (await sim.get(f"fixtures/{BASIC_ID}")).json()["data"]
    assert not RELATIONS & set(fixture)
    assert fixture["state_id"] == 2


async def test_include_brings_only_the_requested_relations(start_sim: StartSim) -> None:
    """`participants;events` gives exactly those two, and events without their `type`."""
    sim = await start_sim(t=1000)
    fixture = (await sim.get(f"fixtures/{BASIC_ID}", include="participants;events")).json()["data"]
    assert RELATIONS & set(fixture) == {"participants", "events"}
    assert fixture["events"]
    assert all("type" not in event for event in fixture["events"])
    # A relation's own object-valued fields are not relations.
    assert fixture["participants"][0]["meta"]["location"] == "home"


async def test_nested_includes_and_field_selection(start_sim: StartSim) -> None:
    """`events.type` nests the type; `participants:name` keeps only `id` and `name`; case is ignored."""
    sim = await start_sim(t=7000)
    response = await sim.get(f"fixtures/{BASIC_ID}", include="Events.Type;participants:name;scores;nosuch")
    fixture = response.json()["data"]
    assert RELATIONS & set(fixture) == {"events", "participants", "scores"}
    assert all(event["type"]["id"] == event["type_id"] for event in fixture["events"])
    assert fixture["participants"] == [
        {"id": 9001, "name": "Riverside FC"},
        {"id": 9002, "name": "Harbour United"},
    ]
    assert all("score" in row for row in fixture["scores"])


async def test_livescores_lists_fixtures_from_15_minutes_before_to_15_after(start_sim: StartSim) -> None:
    """Kick-off is t=120 and full time t=6780; the window is 900 s either side."""
    sim = await start_sim(t=120 - 901)
    assert_no_results(await sim.get("livescores"))
    for t in (120 - 899, 3000, 6780 + 899):
        await sim.clock(t=t)
        assert ids(await sim.get("livescores")) == [BASIC_ID], t
    await sim.clock(t=6780 + 901)
    assert_no_results(await sim.get("livescores"))


async def test_latest_lists_only_tracked_field_changes_of_the_last_10_seconds(start_sim: StartSim) -> None:
    """A state change shows for 10 s; a goal (scores and events only) does not show at all."""
    sim = await start_sim(t=125)  # kick-off line at t=120 changes state_id
    assert ids(await sim.get("livescores/latest")) == [BASIC_ID]
    await sim.clock(t=130.5)
    assert_no_results(await sim.get("livescores/latest"))
    await sim.clock(t=835)  # goal at t=830
    assert_no_results(await sim.get("livescores/latest"))
    await sim.clock(t=2945)  # half time at t=2940
    assert ids(await sim.get("livescores/latest")) == [BASIC_ID]


async def test_fixture_by_unknown_id_is_the_no_results_quirk(start_sim: StartSim) -> None:
    """An id no recording has (or not an id at all) is the empty answer, not a 404."""
    sim = await start_sim()
    assert_no_results(await sim.get("fixtures/123"))
    assert_no_results(await sim.get("fixtures/abc"))


async def test_several_recordings_replay_side_by_side(start_sim: StartSim) -> None:
    """Two recordings share the clock; `multi` returns fixtures in the order asked, skipping unknowns."""
    sim = await start_sim([BASIC, CORRECTION], t=1000)
    assert ids(await sim.get("livescores/inplay")) == [BASIC_ID, CORRECTION_ID]
    response = await sim.get(f"fixtures/multi/{CORRECTION_ID},999,{BASIC_ID},{CORRECTION_ID}")
    assert ids(response) == [CORRECTION_ID, BASIC_ID]
    assert (await sim.client.get("/readyz")).json()["fixtures"] == 2


async def test_multi_rejects_more_than_50_ids(start_sim: StartSim) -> None:
    """51 ids is a 400 with a SportMonks error body (message and link, no data)."""
    sim = await start_sim()
    response = await sim.get("fixtures/multi/" + ",".join(str(BASIC_ID + n) for n in range(51)))
    assert response.status_code == 400
    body = response.json()
    assert "50" in body["message"]
    assert body["link"].startswith("https://docs.sportmonks.com/")
    assert "data" not in body
    fifty = await sim.get("fixtures/multi/" + ",".join(str(BASIC_ID + n) for n in range(50)))
    assert ids(fifty) == [BASIC_ID]


async def test_between_maps_dates_to_real_time_and_pages_by_page(start_sim: StartSim) -> None:
    """Kick-offs map to the replay's real dates; `page` gets `next_page` URLs until the last page."""
    sim = await start_sim([THREE_MATCHES], wall=lambda: FIXED_WALL)
    first = (await sim.get("fixtures/between/2030-01-01/2030-01-01", per_page=2, page=1)).json()
    # Kick-offs at +120 s, +300 s and +9090 s (81000002 keeps its recorded 17:31:30 kick-off).
    assert [f["id"] for f in first["data"]] == [81000001, 81000003]
    assert first["pagination"] == {
        "count": 2,
        "per_page": 2,
        "current_page": 1,
        "next_page": first["pagination"]["next_page"],
        "has_more": True,
    }
    next_page = httpx.URL(first["pagination"]["next_page"])
    assert next_page.params["page"] == "2"
    # The URL carries every parameter (token included). Followed with a client that has default
    # params, httpx 0.28 would replace its query string, so use a plain one.
    async with httpx.AsyncClient() as plain:
        second = (await plain.get(next_page)).json()
    assert [f["id"] for f in second["data"]] == [81000002]
    assert second["pagination"]["next_page"] is None
    assert second["pagination"]["has_more"] is False
    assert_no_results(await sim.get("fixtures/between/2030-01-02/2030-01-05"))


async def test_between_pages_by_cursor(start_sim: StartSim) -> None:
    """Without `page` the answer carries `next_cursor`, and following it walks every row once."""
    sim = await start_sim([THREE_MATCHES], wall=lambda: FIXED_WALL)
    seen: list[int] = []
    params: dict[str, Any] = {"per_page": 1}
    while True:
        body = (await sim.get("fixtures/between/2029-12-31/2030-01-02", **params)).json()
        seen += [fixture["id"] for fixture in body["data"]]
        assert "next_page" not in body["pagination"]
        if not body["pagination"]["has_more"]:
            assert body["pagination"]["next_cursor"] is None
            break
        params["cursor"] = body["pagination"]["next_cursor"]
    assert seen == [81000001, 81000003, 81000002]


async def test_between_validates_its_parameters(start_sim: StartSim) -> None:
    """Bad dates, reversed ranges, bad pages and cursors are 400s; `per_page` is capped at 50."""
    sim = await start_sim([THREE_MATCHES], wall=lambda: FIXED_WALL)
    for path, params in [
        ("fixtures/between/2030-13-01/2030-01-02", {}),
        ("fixtures/between/2030-01-02/2030-01-01", {}),
        ("fixtures/between/2030-01-01/2030-01-01", {"page": "0"}),
        ("fixtures/between/2030-01-01/2030-01-01", {"per_page": "x"}),
        ("fixtures/between/2030-01-01/2030-01-01", {"cursor": "not-a-cursor"}),
    ]:
        assert (await sim.get(path, **params)).status_code == 400, (path, params)
    capped = (await sim.get("fixtures/between/2030-01-01/2030-01-01", per_page=500)).json()
    assert capped["pagination"]["per_page"] == 50


async def test_an_unknown_endpoint_is_a_sportmonks_404(start_sim: StartSim) -> None:
    """Paths the API does not have answer 404 with its message."""
    sim = await start_sim()
    response = await sim.get("teams/1")
    assert response.status_code == 404
    assert response.json() == {"message": "The requested endpoint does not exist"}
