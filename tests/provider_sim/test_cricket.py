"""Cricket v2 from the simulator, over HTTP: the envelope, `api_token`, includes, times, livescores.

The builders here (`cricket_fixture`, `write_cricket`, …) are shared by the other
`test_cricket_*.py` modules. The real IPL match (`recordings/cricket-t20.jsonl.gz`) is loaded by a
few tests only: it takes a couple of seconds each time.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from devkit.simulators.provider.config import BUNDLED_RECORDINGS_DIR
from devkit.simulators.provider.cricket_timemap import format_datetime, parse_datetime
from tests.provider_sim.conftest import TOKEN, RunningSim, StartSim

T20 = BUNDLED_RECORDINGS_DIR / "cricket-t20.jsonl.gz"
T20_ID = 58328
# cricket-t20: start 2024-03-22T13:53:01Z, scheduled start 14:30:00 (t=2219), first ball t=2400,
# `Finished` from t=16368 (its last line).
T20_ORIGIN = datetime(2024, 3, 22, 13, 53, 1, tzinfo=UTC).timestamp()
T20_START_T = 2219.0
T20_FINISHED_T = 16368.0

START = "2024-04-01T12:00:00Z"
ORIGIN = datetime(2024, 4, 1, 12, tzinfo=UTC).timestamp()
FIXED_WALL = 1893499200.0  # 2030-01-01 12:00:00Z
TEAM_UPDATED = "2022-03-03T15:05:47.000000Z"


def recorded(t: float) -> str:
    """The Cricket v2 datetime `t` seconds after `START`."""
    return format_datetime(ORIGIN + t)


def score_row(score_id: int = 69, name: str = "1 Run", runs: int = 1, *, ball: bool = True) -> dict[str, Any]:
    """A `score` lookup row."""
    return {
        "resource": "scores",
        "id": score_id,
        "name": name,
        "runs": runs,
        "four": False,
        "six": False,
        "bye": 0,
        "leg_bye": 0,
        "noball": 0,
        "noball_runs": 0,
        "is_wicket": False,
        "ball": ball,
        "out": False,
    }


def team(team_id: int, name: str) -> dict[str, Any]:
    """A team object, with the provider's own (reference-data) `updated_at`."""
    return {
        "resource": "teams",
        "id": team_id,
        "name": name,
        "code": name[:3].upper(),
        "updated_at": TEAM_UPDATED,
    }


def player(player_id: int, name: str) -> dict[str, Any]:
    """A player object."""
    return {
        "resource": "players",
        "id": player_id,
        "fullname": name,
        "position": {"resource": "positions", "id": 1, "name": "Batsman"},
        "updated_at": "2023-03-22T10:36:41.000000Z",
    }


def ball(ball_id: int, over: float, updated_t: float, score: dict[str, Any] | None = None) -> dict[str, Any]:
    """A ball as `include=balls` shows it: batsman, bowler, score and team embedded."""
    row = score if score is not None else score_row()
    return {
        "resource": "balls",
        "id": ball_id,
        "fixture_id": 0,
        "team_id": 8,
        "ball": over,
        "scoreboard": "S1",
        "batsman_id": 46,
        "bowler_id": 279,
        "score_id": row["id"],
        "batsman": player(46, "Virat Kohli"),
        "bowler": player(279, "Deepak Chahar"),
        "score": row,
        "team": team(8, "Royal Challengers Bengaluru"),
        "updated_at": recorded(updated_t),
    }


def cricket_fixture(
    fixture_id: int,
    status: str,
    *,
    start_t: float = 3600.0,
    league_id: int = 1,
    balls: Sequence[dict[str, Any]] = (),
    runs_updated_t: float = 0.0,
) -> dict[str, Any]:
    """A Cricket v2 fixture with its relations embedded, starting `start_t` after `START`."""
    return {
        "resource": "fixtures",
        "id": fixture_id,
        "league_id": league_id,
        "season_id": 1484,
        "stage_id": 5219,
        "round": "1st Match",
        "localteam_id": 2,
        "visitorteam_id": 8,
        "starting_at": recorded(start_t),
        "type": "T20",
        "live": True,
        "status": status,
        "note": "",
        "venue_id": 58,
        "winner_team_id": None,
        "localteam_dl_data": {"score": None, "overs": None, "wickets_out": None},
        "visitorteam_dl_data": {"score": None, "overs": None, "wickets_out": None},
        "weather_report": [],
        "balls": [{**item, "fixture_id": fixture_id} for item in balls],
        "runs": [
            {
                "resource": "runs",
                "id": fixture_id * 10,
                "fixture_id": fixture_id,
                "team_id": 8,
                "inning": 1,
                "score": len(balls),
                "wickets": 0,
                "overs": 0.1 * len(balls),
                "updated_at": recorded(runs_updated_t),
            }
        ],
        "localteam": team(2, "Chennai Super Kings"),
        "visitorteam": team(8, "Royal Challengers Bengaluru"),
    }


def cricket_header(fixtures: Sequence[int], *, start: str = START) -> dict[str, Any]:
    """A cricket recording's header line."""
    return {"recording": 1, "sport": "cricket", "name": "test", "start": start, "fixtures": list(fixtures)}


def write_cricket(
    path: Path,
    lines: Sequence[dict[str, Any]],
    *,
    fixtures: Sequence[int] | None = None,
    start: str = START,
    compress: bool | None = None,
) -> Path:
    """Write a cricket recording (gzip when `compress`, or by default when the name ends in .gz).

    `fixtures` defaults to every fixture id in `lines`.
    """
    ids = (
        fixtures
        if fixtures is not None
        else sorted({line["fixture"]["id"] for line in lines if "fixture" in line})
    )
    text = "\n".join(json.dumps(line) for line in [cricket_header(ids, start=start), *lines]) + "\n"
    if compress if compress is not None else path.name.endswith(".gz"):
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    return path


async def cget(sim: RunningSim, path: str, **params: Any) -> httpx.Response:
    """GET a Cricket v2 endpoint (`path` below /api/v2.0) with the token."""
    return await sim.client.get(f"/api/v2.0/{path}", params=params)


def data(response: httpx.Response) -> Any:
    """The `data` of a 200 Cricket v2 answer whose body is nothing but `data`."""
    assert response.status_code == 200, response.text
    body = response.json()
    assert set(body) == {"data"}, body.keys()
    return body["data"]


async def test_fixture_by_id_carries_base_fields_and_only_the_included_relations(start_sim: StartSim) -> None:
    """The real match mid-innings: `{"data": …}` only, relations present exactly when included."""
    sim = await start_sim([T20], t=5000)
    bare = data(await cget(sim, f"fixtures/{T20_ID}"))
    assert bare["id"] == T20_ID
    assert bare["resource"] == "fixtures"
    assert bare["status"] == "1st Innings"
    assert bare["live"] is True
    # Object-valued base fields stay; every relation is absent.
    assert bare["localteam_dl_data"] == {"score": None, "overs": None, "wickets_out": None}
    assert bare["weather_report"] == []
    assert not {"balls", "runs", "localteam", "visitorteam"} & set(bare)

    recorded_balls = sim.simulator.cricket.get(T20_ID).at(5000).fixture["balls"]  # type: ignore[union-attr]
    shown = data(await cget(sim, f"fixtures/{T20_ID}", include="balls,runs"))
    assert {"balls", "runs"} <= set(shown)
    assert not {"localteam", "visitorteam"} & set(shown)
    assert [item["id"] for item in shown["balls"]] == [item["id"] for item in recorded_balls]
    assert len(shown["balls"]) > 50
    # `include=balls` alone embeds batsman, bowler, score and team, as the real API does.
    first = shown["balls"][0]
    assert first["score"]["resource"] == "scores"
    assert first["score"]["id"] == first["score_id"]
    assert first["batsman"]["fullname"] == "Virat Kohli"
    assert first["bowler"]["resource"] == "players"
    assert first["team"]["code"] == "RCB"

    nested = data(
        await cget(sim, f"fixtures/{T20_ID}", include="balls.score,balls.batsman, localteam ,visitorteam")
    )
    assert {"balls", "localteam", "visitorteam"} <= set(nested)
    assert "runs" not in nested
    assert nested["balls"][0]["score"] == first["score"]
    assert nested["localteam"]["name"] == "Chennai Super Kings"


async def test_an_unknown_fixture_is_a_404_with_a_message(tmp_path: Path, start_sim: StartSim) -> None:
    """Not the football "No result(s)" 200: a 404 with `{"message"}`."""
    path = write_cricket(tmp_path / "one.jsonl", [{"t": 0, "fixture": cricket_fixture(7, "NS")}])
    sim = await start_sim([path])
    for missing in ("fixtures/8", "fixtures/abc"):
        response = await cget(sim, missing)
        assert response.status_code == 404
        assert set(response.json()) == {"message"}
    assert data(await cget(sim, "fixtures/7"))["id"] == 7


async def test_the_token_is_the_api_token_query_parameter_only(tmp_path: Path, start_sim: StartSim) -> None:
    """Missing or wrong `api_token` is a 401; the header football accepts does not count here."""
    path = write_cricket(tmp_path / "one.jsonl", [{"t": 0, "fixture": cricket_fixture(7, "1st Innings")}])
    sim = await start_sim([path])
    async with httpx.AsyncClient(base_url=sim.base_url) as bare:
        for params, headers in (
            ({}, {}),
            ({"api_token": "wrong"}, {}),
            ({}, {"Authorization": TOKEN}),
            ({}, {"Authorization": f"Bearer {TOKEN}"}),
        ):
            for endpoint in ("livescores", "fixtures/7", "fixtures", "scores"):
                response = await bare.get(f"/api/v2.0/{endpoint}", params=params, headers=headers)
                assert response.status_code == 401, (endpoint, params, headers)
                assert response.json() == {"message": "Unauthenticated."}
        ok = await bare.get("/api/v2.0/fixtures/7", params={"api_token": TOKEN})
        assert ok.status_code == 200


async def test_times_are_mapped_onto_the_replay_clock(tmp_path: Path, start_sim: StartSim) -> None:
    """`starting_at` and balls'/runs' `updated_at` move to clock_zero + (recorded - start) / speed;
    teams' and players' reference-data `updated_at` stay as recorded."""
    lines = [
        {
            "t": 100,
            "fixture": cricket_fixture(
                7, "1st Innings", start_t=60, balls=[ball(1, 0.1, 90), ball(4, 0.2, 120)], runs_updated_t=120
            ),
        }
    ]
    path = write_cricket(tmp_path / "times.jsonl", lines)
    speed, t = 60.0, 120.0
    sim = await start_sim([path], t=t, speed=speed, wall=lambda: FIXED_WALL)
    clock_zero = (await sim.client.get("/_sim/clock")).json()["clock_zero"]
    assert clock_zero == FIXED_WALL - t / speed

    def mapped(recorded_t: float) -> str:
        return format_datetime(round(clock_zero + recorded_t / speed))

    shown = data(await cget(sim, "fixtures/7", include="balls,runs,localteam"))
    assert shown["starting_at"] == mapped(60)
    assert [item["updated_at"] for item in shown["balls"]] == [mapped(90), mapped(120)]
    assert shown["runs"][0]["updated_at"] == mapped(120)
    assert shown["balls"][0]["team"]["updated_at"] == TEAM_UPDATED
    assert shown["balls"][0]["batsman"]["updated_at"] == "2023-03-22T10:36:41.000000Z"
    assert shown["localteam"]["updated_at"] == TEAM_UPDATED
    # The ISO form of Cricket v2, and the same instant the clock is at.
    assert parse_datetime(shown["balls"][1]["updated_at"]) == round(clock_zero + 120 / speed)
    assert shown["balls"][1]["updated_at"].endswith(".000000Z")


async def test_the_real_match_starts_when_the_replay_reaches_it(start_sim: StartSim) -> None:
    """At speed 1 with `clock_zero` = the recording's start, the real times come back unchanged."""
    t = 3000.0
    sim = await start_sim([T20], t=t, wall=lambda: T20_ORIGIN + t)
    shown = data(await cget(sim, f"fixtures/{T20_ID}", include="balls"))
    assert shown["starting_at"] == "2024-03-22T14:30:00.000000Z"
    assert shown["balls"][0]["updated_at"] == "2024-03-22T14:33:01.000000Z"


async def test_livescores_lists_fixtures_by_status_not_live(tmp_path: Path, start_sim: StartSim) -> None:
    """NS/Delayed from 15 min before the start; every in-play or break status; Finished/Aban. for
    30 min after they first show; Postp./Cancl. never. `live` is true on all of them."""
    lines = [
        {"t": 0, "fixture": cricket_fixture(1, "NS", start_t=3600)},
        {"t": 0, "fixture": cricket_fixture(2, "1st Innings", start_t=-600)},
        {"t": 0, "fixture": cricket_fixture(3, "Innings Break", start_t=-3600)},
        {"t": 0, "fixture": cricket_fixture(4, "Int.", start_t=-3600, league_id=5)},
        {"t": 0, "fixture": cricket_fixture(5, "Postp.", start_t=600)},
        {"t": 0, "fixture": cricket_fixture(6, "Delayed", start_t=-60)},
        {"t": 0, "fixture": cricket_fixture(7, "2nd Innings", start_t=-7200)},
        {"t": 0, "fixture": cricket_fixture(8, "Stump Day 2", start_t=-90000)},
        {"t": 100, "fixture": cricket_fixture(7, "Finished", start_t=-7200)},
        {"t": 200, "fixture": cricket_fixture(7, "Finished", start_t=-7200)},
        {"t": 300, "fixture": cricket_fixture(9, "Aban.", start_t=-60)},
        {"t": 300, "fixture": cricket_fixture(10, "Cancl.", start_t=600)},
    ]
    path = write_cricket(tmp_path / "window.jsonl", lines)
    sim = await start_sim([path], t=50)

    async def listed() -> list[int]:
        return sorted(fixture["id"] for fixture in data(await cget(sim, "livescores")))

    assert await listed() == [2, 3, 4, 6, 7, 8, 9]
    await sim.clock(t=3600 - 15 * 60 - 1)
    assert 1 not in await listed()
    await sim.clock(t=3600 - 15 * 60)
    assert await listed() == [1, 2, 3, 4, 6, 8]
    # Fixture 9 showed Aban. from t=300 (its first line, also shown before it); 7 Finished from 100.
    await sim.clock(t=100 + 30 * 60)
    assert 7 in await listed()
    await sim.clock(t=100 + 30 * 60 + 1)
    assert 7 not in await listed()
    await sim.clock(t=300 + 30 * 60 + 1)
    assert 9 not in await listed()

    await sim.clock(t=50)
    by_league = data(await cget(sim, "livescores", **{"filter[league_id]": "5"}))
    assert [fixture["id"] for fixture in by_league] == [4]
    assert data(await cget(sim, "livescores", **{"filter[league_id]": "99"})) == []
    # Includes work on livescores too.
    assert all("balls" not in fixture for fixture in data(await cget(sim, "livescores")))
    assert all("balls" in fixture for fixture in data(await cget(sim, "livescores", include="balls")))


async def test_livescores_follows_the_real_match_through_its_day(start_sim: StartSim) -> None:
    """The IPL match: off before the window, on from 15 min before 14:30 to 30 min after Finished."""
    sim = await start_sim([T20], t=0)

    async def listed() -> bool:
        return [fixture["id"] for fixture in data(await cget(sim, "livescores"))] == [T20_ID]

    assert not await listed()
    await sim.clock(t=T20_START_T - 15 * 60)
    assert await listed()
    for t in (2400, 9000, T20_FINISHED_T, T20_FINISHED_T + 30 * 60):
        await sim.clock(t=t)
        assert await listed(), t
    await sim.clock(t=T20_FINISHED_T + 30 * 60 + 1)
    assert not await listed()
    final = data(await cget(sim, f"fixtures/{T20_ID}", include="runs"))
    assert final["status"] == "Finished"
    assert [(row["score"], row["wickets"]) for row in final["runs"]] == [(173, 6), (176, 4)]
