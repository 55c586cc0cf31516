"""`POST /v1/fixtures` and `GET /v1/fixtures/{id}/squads` over real HTTP, with real tokens."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from scoreline.accounts.store import create_desk, create_operator, revoke_operator
from scoreline.accounts.tokens import new_token
from scoreline.db.tables import fixture
from tests.accounts.bodies import draft, player


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
async def operator_token(engine: AsyncEngine) -> str:
    _, token = await create_operator(engine, "ops")
    return token


async def _fixture_count(engine: AsyncEngine) -> int:
    async with engine.connect() as conn:
        return (await conn.execute(select(func.count()).select_from(fixture))).scalar_one()


async def test_an_operator_creates_a_fixture_and_its_desk_reads_the_squads(
    api: httpx.AsyncClient, engine: AsyncEngine, operator_token: str
) -> None:
    """201 with the id and every player's id; a desk given the fixture then reads the same squads."""
    created = await api.post(
        "/v1/fixtures", json=draft(competition="Harbour Cup"), headers=bearer(operator_token)
    )
    assert created.status_code == 201, created.text
    body = created.json()
    fixture_id = body["id"]
    assert fixture_id >= 1_000_000_000_000
    assert {k: body[k] for k in ("name", "sport", "mode", "competition")} == {
        "name": "Harbour FC vs Quarry Town",
        "sport": "football",
        "mode": "desk",
        "competition": "Harbour Cup",
    }
    assert body["kickoff"] == "2026-03-14T15:00:00Z"
    assert body["home"] == {
        "id": None,
        "name": "Harbour FC",
        "short_code": "HAR",
        "players": [
            {"id": 1, "name": "Player 1", "shirt_number": 1, "starting": True},
            {"id": 2, "name": "Player 2", "shirt_number": 2, "starting": False},
        ],
    }
    assert [p["id"] for p in body["away"]["players"]] == [3]

    _, desk_token = await create_desk(engine, "north", [fixture_id])
    squads = await api.get(f"/v1/fixtures/{fixture_id}/squads", headers=bearer(desk_token))
    assert squads.status_code == 200, squads.text
    assert squads.json() == {
        "fixture_id": fixture_id,
        "sport": "football",
        "mode": "desk",
        "home": body["home"],
        "away": body["away"],
    }


async def test_squads_are_for_the_fixtures_a_desk_was_given(
    api: httpx.AsyncClient, engine: AsyncEngine, operator_token: str, provider_fixtures: tuple[int, int]
) -> None:
    """Another fixture is 403 for a desk (even an unknown one); an operator sees any, and 404 for none."""
    mine, other = provider_fixtures
    _, desk_token = await create_desk(engine, "north", [mine])
    assert (await api.get(f"/v1/fixtures/{mine}/squads", headers=bearer(desk_token))).status_code == 200
    for fixture_id in (other, 5):
        refused = await api.get(f"/v1/fixtures/{fixture_id}/squads", headers=bearer(desk_token))
        assert refused.status_code == 403
        assert refused.json()["error"]["code"] == "fixture_not_allowed"

    provider = await api.get(f"/v1/fixtures/{other}/squads", headers=bearer(operator_token))
    assert provider.status_code == 200
    assert provider.json()["home"] == {"id": 19, "name": "Leeds", "short_code": None, "players": []}
    missing = await api.get("/v1/fixtures/5/squads", headers=bearer(operator_token))
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "fixture_not_found"


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Basic b3BzOnNlY3JldA=="},
        {"Authorization": "Bearer"},
        {"Authorization": "Token sl_op_x"},
    ],
    ids=["missing", "basic", "no-token", "other-scheme"],
)
async def test_no_bearer_token_is_401_unauthorized(
    api: httpx.AsyncClient, engine: AsyncEngine, headers: dict[str, str]
) -> None:
    """Without a bearer token: 401 `unauthorized` with `WWW-Authenticate: Bearer`, and nothing written."""
    response = await api.post("/v1/fixtures", json=draft(), headers=headers)
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthorized"
    assert response.headers["www-authenticate"] == "Bearer"
    assert await _fixture_count(engine) == 0


async def test_unknown_and_revoked_tokens_are_401_invalid_token(
    api: httpx.AsyncClient, engine: AsyncEngine
) -> None:
    """A token we never issued, a well-formed but unknown one, and a revoked one: 401 `invalid_token`."""
    _, revoked = await create_operator(engine, "gone")
    await revoke_operator(engine, "gone")
    for token in ("not-a-token", new_token("operator"), revoked):
        response = await api.post("/v1/fixtures", json=draft(), headers=bearer(token))
        assert response.status_code == 401, token
        assert response.json()["error"]["code"] == "invalid_token"
    assert await _fixture_count(engine) == 0


async def test_a_desk_token_may_not_create_fixtures(
    api: httpx.AsyncClient, engine: AsyncEngine, provider_fixtures: tuple[int, int]
) -> None:
    """403 `operators_only`, and no fixture row."""
    _, desk_token = await create_desk(engine, "north", [provider_fixtures[0]])
    response = await api.post("/v1/fixtures", json=draft(), headers=bearer(desk_token))
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "operators_only"
    assert await _fixture_count(engine) == len(provider_fixtures)


@pytest.mark.parametrize(
    ("body", "path"),
    [
        (draft(sport=7), "body.sport"),
        (draft(kickoff="2026-03-14T15:00:00"), "body.kickoff"),
        (draft(kickoff=1773500400), "body.kickoff"),
        (draft(home={"name": "A", "players": [player("7")]}), "body.home.players.0.shirt_number"),
        (draft(home={"name": "A", "players": [player(7, starting="yes")]}), "body.home.players.0.starting"),
        (draft(home={"name": "A", "players": [player(7), player(7)]}), "body.home.players"),
        (draft(away={"name": "B", "players": [player(n) for n in range(12)]}), "body.away.players"),
        (draft(venue="Harbour Park"), "body.venue"),
        # Over each field's bound and under API_MAX_BODY_BYTES (a larger body is a 413 before it is read).
        (draft(home={"name": "A" * 10_000}), "body.home.name"),
        (draft(name="x" * 50_000), "body.name"),
        (
            draft(home={"name": "A", "players": [player(n, starting=False) for n in range(400)]}),
            "body.home.players",
        ),
        ([], "body"),
    ],
    ids=[
        "sport-type",
        "naive-kickoff",
        "numeric-kickoff",
        "shirt-as-text",
        "starting-as-text",
        "duplicate-shirts",
        "twelve-starters",
        "unknown-field",
        "huge-team-name",
        "huge-name",
        "huge-squad",
        "not-an-object",
    ],
)
async def test_bad_shapes_are_422_with_the_field_path_and_nothing_written(
    api: httpx.AsyncClient, engine: AsyncEngine, operator_token: str, body: Any, path: str
) -> None:
    """The app's validation body names the bad field; the fixture table stays empty."""
    response = await api.post("/v1/fixtures", json=body, headers=bearer(operator_token))
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["code"] == "validation_error"
    assert path in [field["path"] for field in error["fields"]], error
    assert await _fixture_count(engine) == 0


async def test_a_body_that_is_not_json_is_422(
    api: httpx.AsyncClient, engine: AsyncEngine, operator_token: str
) -> None:
    """Broken JSON is refused in the same error shape."""
    response = await api.post(
        "/v1/fixtures",
        content=b'{"sport": "football",',
        headers={**bearer(operator_token), "Content-Type": "application/json"},
    )
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "validation_error"
    assert await _fixture_count(engine) == 0


@pytest.mark.parametrize(
    ("home", "error_type"),
    [
        ({"name": "A", "players": [player(7), player(7)]}, "duplicate_shirt_number"),
        ({"name": "A", "players": [player(1, id=4), player(2, id=4)]}, "duplicate_player_id"),
        ({"name": "A", "players": [player(n) for n in range(12)]}, "too_many_starting"),
        ({"name": "A", "players": [player(n, starting=False) for n in range(24)]}, "too_many_on_bench"),
    ],
)
async def test_squad_rules_have_stable_error_types(
    api: httpx.AsyncClient, operator_token: str, home: dict[str, Any], error_type: str
) -> None:
    """A client can branch on the field's `type`, not on the message."""
    response = await api.post("/v1/fixtures", json=draft(home=home), headers=bearer(operator_token))
    assert response.status_code == 422
    assert [(f["path"], f["type"]) for f in response.json()["error"]["fields"]] == [
        ("body.home.players", error_type)
    ]
