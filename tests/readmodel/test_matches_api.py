"""`/v1/matches` and `/v1/matches/{id}` from Postgres: the view's shape, filters and error bodies."""

from __future__ import annotations

from datetime import timedelta

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.readmodel.rows import KICKOFF, NO_CRICKET, MatchLog


async def test_match_view_joins_fixture_and_scoreboard(api: httpx.AsyncClient, match: MatchLog) -> None:
    """The view carries the fixture's facts, and state, score, minute and version from the scoreboard."""
    await match.event(1, "goal", 23, player=(7, "Saka"))
    await match.board("live_first_half", 1, 0, minute=23)

    response = await api.get("/v1/matches/81000001")

    assert response.status_code == 200
    assert response.headers["cache-control"] == "no-cache"
    body = response.json()
    updated_at = body.pop("updated_at")
    assert updated_at.endswith(("Z", "+00:00"))
    assert body == {
        "fixture": {
            "id": 81000001,
            "name": "Arsenal vs Chelsea",
            "sport": "football",
            "kickoff": "2026-03-14T15:00:00Z",
            "home": {"id": 19, "name": "Arsenal", "short_code": "ARS", "image": "https://img/19.png"},
            "away": {"id": 18, "name": "Chelsea", "short_code": "CHE", "image": "https://img/18.png"},
            "competition": {"id": 8, "name": "Premier League"},
            "league_id": 8,
            "season_id": 23614,
        },
        "state": "live_first_half",
        "score": {"home": 1, "away": 0},
        "minute": 23,
        "version": 1,
        **NO_CRICKET,
    }


async def test_match_without_scoreboard_is_version_zero(api: httpx.AsyncClient, engine: AsyncEngine) -> None:
    """Before its first log entry a match shows the fixture's state, 0-0, no minute and version 0."""
    await MatchLog.create(engine, 5, state="scheduled", kickoff=None, competition=None)

    body = (await api.get("/v1/matches/5")).json()

    assert (body["state"], body["score"], body["minute"], body["version"]) == (
        "scheduled",
        {"home": 0, "away": 0},
        None,
        0,
    )
    assert body["fixture"]["kickoff"] is None
    assert body["fixture"]["competition"] is None


async def test_unknown_match_is_404_with_error_body(api: httpx.AsyncClient) -> None:
    """An unknown fixture answers 404 with the stable code `match_not_found`, for the match and its events."""
    for path in ("/v1/matches/424242", "/v1/matches/424242/events"):
        response = await api.get(path)
        assert response.status_code == 404
        error = response.json()["error"]
        assert error["code"] == "match_not_found"
        assert "424242" in error["message"]


@pytest.fixture
async def season(engine: AsyncEngine) -> None:
    """Six fixtures in several states, kick-offs deliberately out of id order."""
    for fixture_id, state, hours in [
        (1, "finished", -3),
        (2, "live_second_half", -1),
        (3, "half_time", -2),
        (4, "scheduled", 2),
        (5, "delayed", 1),
        (6, "suspended", -4),
    ]:
        log = await MatchLog.create(engine, fixture_id, state=state, kickoff=KICKOFF + timedelta(hours=hours))
        if state != "scheduled":
            await log.state_entry(state)
            await log.board(state, 0, 0)


@pytest.mark.usefixtures("season")
@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("", [6, 1, 3, 2, 5, 4]),
        ("?state=live", [6, 3, 2]),
        ("?state=LIVE", [6, 3, 2]),
        ("?state=finished", [1]),
        ("?state=scheduled", [4]),
        ("?state=delayed,scheduled", [5, 4]),
        ("?state=live,finished", [6, 1, 3, 2]),
        ("?state=penalties", []),
        ("?limit=2", [6, 1]),
        ("?state=live&limit=1", [6]),
    ],
)
async def test_list_filters_by_state_and_orders_by_kickoff(
    api: httpx.AsyncClient, query: str, expected: list[int]
) -> None:
    """`state` takes the `live` group, exact names or a comma list; the list is in kick-off order."""
    response = await api.get(f"/v1/matches{query}")

    assert response.status_code == 200
    assert response.headers["cache-control"] == "no-cache"
    assert [m["fixture"]["id"] for m in response.json()["matches"]] == expected


@pytest.mark.parametrize(
    ("path", "field"),
    [
        ("/v1/matches?state=nonsense", "query.state"),
        ("/v1/matches?state=live,bogus", "query.state"),
        ("/v1/matches?limit=0", "query.limit"),
        ("/v1/matches?limit=501", "query.limit"),
        ("/v1/matches?limit=many", "query.limit"),
        ("/v1/matches/not-a-number", "path.fixture_id"),
        ("/v1/matches/81000001/events?limit=0", "query.limit"),
        ("/v1/matches/81000001/events?limit=501", "query.limit"),
        ("/v1/matches/81000001/events?before=not-a-cursor", "query.before"),
        ("/v1/matches/81000001/events?before=WzEsMiwzXQ", "query.before"),
    ],
)
@pytest.mark.usefixtures("match")
async def test_bad_query_is_422_with_error_body(api: httpx.AsyncClient, path: str, field: str) -> None:
    """A bad filter, limit, id or cursor is 422 `validation_error` naming the field, never a 500."""
    response = await api.get(path)

    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "validation_error"
    assert [f["path"] for f in error["fields"]] == [field]
