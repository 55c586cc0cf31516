"""Text Postgres cannot store (a NUL, a lone surrogate) is refused up front with 422 naming the
field, on every route, instead of failing deep in a write (design §6)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from api.guards.storable_text import unstorable_paths
from tests.commands.harness import FOOTBALL_SQUADS, Road


def _operator(api: Road) -> dict[str, str]:
    return {"Authorization": f"Bearer {api.operator_token}", "Content-Type": "application/json"}


async def test_a_nul_in_a_desk_name_is_422_naming_the_field(api: Road) -> None:
    """Regression: `POST /v1/console/matches/{id}/desks` with a NUL in the name answered 500 (the
    insert failed in Postgres). Fails on main before the fix."""
    fixture_id = await api.fixture()

    response = await api.http.post(
        f"/v1/console/matches/{fixture_id}/desks",
        content=json.dumps({"name": "desk\u0000one"}),
        headers=_operator(api),
    )

    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["code"] == "validation_error"
    assert [field["path"] for field in error["fields"]] == ["body.name"]
    assert await api.rows("SELECT 1 FROM desk") == []


async def test_a_nul_in_a_utf16_body_is_422_naming_the_field(api: Road) -> None:
    """The JSON parser reads UTF-16 and UTF-32 too, where a NUL travels raw, not as an escape: such
    a desk name passed the guard and was a 500 again."""
    fixture_id = await api.fixture()

    response = await api.http.post(
        f"/v1/console/matches/{fixture_id}/desks",
        content=json.dumps({"name": "desk\u0000one"}).encode("utf-16-le"),
        headers=_operator(api),
    )

    assert response.status_code == 422, response.text
    assert [field["path"] for field in response.json()["error"]["fields"]] == ["body.name"]
    assert await api.rows("SELECT 1 FROM desk") == []


async def test_a_nul_in_a_new_fixture_is_422_naming_the_field(api: Road) -> None:
    """Regression: a fixture whose player name held a NUL failed in the insert (500). Fails on
    main before the fix."""
    players = [dict(player) for player in FOOTBALL_SQUADS["home"]]
    players[2]["name"] = "Bad \u0000 Name"
    draft: dict[str, Any] = {
        "sport": "football",
        "home": {"name": "Riverside", "players": players},
        "away": {"name": "Harbour", "players": FOOTBALL_SQUADS["away"]},
        "kickoff": "2026-12-01T15:00:00Z",
    }

    response = await api.http.post("/v1/fixtures", content=json.dumps(draft), headers=_operator(api))

    assert response.status_code == 422, response.text
    assert [field["path"] for field in response.json()["error"]["fields"]] == ["body.home.players.2.name"]
    assert await api.rows("SELECT 1 FROM fixture WHERE name = 'Riverside vs Harbour'") == []


async def test_a_nul_in_a_query_or_path_is_422(api: Road) -> None:
    """Regression: a `%00` in a desk name on the revoke route reached Postgres (500). Fails on main
    before the fix."""
    in_path = await api.http.post("/v1/console/desks/a%00b/revoke", headers=_operator(api))
    in_query = await api.http.get("/v1/matches", params={"state": "live\u0000"})

    assert (in_path.status_code, in_path.json()["error"]["fields"][0]["path"]) == (422, "path")
    assert (in_query.status_code, in_query.json()["error"]["fields"][0]["path"]) == (422, "query.state")


async def test_an_escaped_backslash_and_a_surrogate_pair_are_stored_text(api: Road) -> None:
    """The byte prefilter's false alarms (`\\\\u0000` is six printable characters, `\\ud83d\\ude00`
    one emoji) are looked at and let through."""
    fixture_id = await api.fixture()

    response = await api.http.post(
        f"/v1/console/matches/{fixture_id}/desks",
        content=json.dumps({"name": "desk \\u0000 \U0001f600"}),
        headers=_operator(api),
    )

    assert response.status_code == 201, response.text
    assert response.json()["name"] == "desk \\u0000 \U0001f600"


@pytest.mark.parametrize(
    ("value", "paths"),
    [
        ({"a": "fine", "b": ["x", "y\u0000"]}, ["b.1"]),
        ({"k\ud800": 1}, ["k\ud800"]),
        ([{"t": "\udfff"}, "ok", {"u": {"v": "\x00"}}], ["0.t", "2.u.v"]),
        ({"emoji": "\U0001f600", "n": 1, "f": None}, []),
    ],
)
def test_the_walk_names_every_unstorable_string(value: object, paths: list[str]) -> None:
    assert [".".join(str(part) for part in path) for path in unstorable_paths(value)] == paths
