"""Bad command requests of every kind: a precise 4xx with a machine-readable body, nothing written,
no workflow touched."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from temporalio.client import Client
from temporalio.service import RPCError

from scoreline.temporal.match_runs import match_workflow_id
from tests.commands.harness import Road

GOOD: dict[str, Any] = {
    "key": "k-1",
    "code": "football.goal",
    "input": {"side": "home", "minute": 3, "kind": "open_play"},
    "saw": 0,
}


def _without(field: str) -> dict[str, Any]:
    return {name: value for name, value in GOOD.items() if name != field}


SHAPES: list[tuple[str, object, str]] = [
    ("missing key", _without("key"), "body.key"),
    ("key over 200 chars", {**GOOD, "key": "k" * 201}, "body.key"),
    ("key with a space", {**GOOD, "key": "my key"}, "body.key"),
    ("empty key", {**GOOD, "key": ""}, "body.key"),
    ("missing code", _without("code"), "body.code"),
    ("unknown code", {**GOOD, "code": "football.dance"}, "body.code"),
    ("huge code", {**GOOD, "code": "x" * 10_000}, "body.code"),
    ("saw as a string", {**GOOD, "saw": "3"}, "body.saw"),
    ("negative saw", {**GOOD, "saw": -1}, "body.saw"),
    ("saw as a float", {**GOOD, "saw": 1.0}, "body.saw"),
    ("input not an object", {**GOOD, "input": [1, 2]}, "body.input"),
    ("minute as a string", {**GOOD, "input": {**GOOD["input"], "minute": "3"}}, "body.input.minute"),
    ("unknown side", {**GOOD, "input": {**GOOD["input"], "side": "middle"}}, "body.input.side"),
    ("unknown input field", {**GOOD, "input": {**GOOD["input"], "xg": 0.4}}, "body.input.xg"),
    ("missing input field", {**GOOD, "input": {"side": "home", "minute": 3}}, "body.input.kind"),
    (
        "huge commentary",
        {**GOOD, "code": "match.commentary", "input": {"text": "a" * 5000}},
        "body.input.text",
    ),
    ("unknown body field", {**GOOD, "priority": 1}, "body.priority"),
    ("naive sent_at", {**GOOD, "sent_at": "2026-11-29T12:00:00"}, "body.sent_at"),
    ("body not an object", ["key"], "body"),
]


@pytest.mark.parametrize(("case", "body", "path"), SHAPES, ids=[case for case, _, _ in SHAPES])
async def test_bad_shapes_are_422_with_the_field_path(road: Road, case: str, body: object, path: str) -> None:
    fixture_id = await road.fixture()
    token = await road.desk(fixture_id)

    response = await road.post(token, fixture_id, body)

    assert response.status_code == 422, case
    error = response.json()["error"]
    assert error["code"] == "validation_error"
    assert error["fields"][0]["path"].startswith(path), error
    await _nothing_written(road, fixture_id)


async def test_not_json_is_422(road: Road) -> None:
    fixture_id = await road.fixture()
    token = await road.desk(fixture_id)

    response = await road.http.post(
        f"/v1/matches/{fixture_id}/commands",
        content=b"{not json",
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )

    assert response.status_code == 422
    assert response.json()["error"]["code"] == "validation_error"
    await _nothing_written(road, fixture_id)


async def test_credentials_and_fixtures_are_checked(road: Road, temporal_client: Client) -> None:
    fixture_id = await road.fixture()
    other_fixture = await road.fixture()
    token = await road.desk(fixture_id)

    missing = await road.http.post(f"/v1/matches/{fixture_id}/commands", json=GOOD)
    wrong = await road.post("sl_desk_not-a-real-token", fixture_id, GOOD)
    elsewhere = await road.post(token, other_fixture, GOOD)
    unknown = await road.post(road.operator_token, 999_999_999, GOOD)
    not_an_id = await road.http.post(
        "/v1/matches/abc/commands", json=GOOD, headers={"Authorization": f"Bearer {token}"}
    )

    assert (missing.status_code, missing.json()["error"]["code"]) == (401, "unauthorized")
    assert (wrong.status_code, wrong.json()["error"]["code"]) == (401, "invalid_token")
    assert (elsewhere.status_code, elsewhere.json()["error"]["code"]) == (403, "fixture_not_allowed")
    assert (unknown.status_code, unknown.json()["error"]["code"]) == (404, "not_found")
    assert not_an_id.status_code == 422
    for fixture in (fixture_id, other_fixture):
        await _nothing_written(road, fixture)
        with pytest.raises(RPCError):
            await temporal_client.get_workflow_handle(match_workflow_id(fixture)).describe()


async def _nothing_written(road: Road, fixture_id: int) -> None:
    assert await road.rows("SELECT 1 FROM command WHERE fixture_id = $1", fixture_id) == []
    assert await road.log(fixture_id) == []


async def test_a_nul_in_commentary_is_422_and_the_next_command_goes_through(road: Road) -> None:
    """Regression: a commentary holding a NUL answered 503 and every later command on the fixture
    `try_again` (Postgres refused the text, the commit was retried forever under the desk's lock);
    now it is 422 naming `body.input.text`, nothing is written, and the next command is accepted
    at once. Fails on main before the fix."""
    fixture_id = await road.fixture()
    token = await road.desk(fixture_id)
    body = {"key": road.key(), "code": "match.commentary", "input": {"text": "a\u0000b"}, "saw": 0}

    refused = await road.http.post(
        f"/v1/matches/{fixture_id}/commands",
        content=json.dumps(body),  # the NUL travels as `\u0000`, the only way JSON can carry it
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )

    assert refused.status_code == 422, refused.text
    error = refused.json()["error"]
    assert error["code"] == "validation_error"
    assert [field["path"] for field in error["fields"]] == ["body.input.text"]
    await _nothing_written(road, fixture_id)
    with anyio.fail_after(5):
        accepted = await road.send(token, fixture_id, "match.commentary", {"text": "kick-off soon"})
    assert (accepted.status_code, accepted.json()["outcome"]) == (200, "accepted")
