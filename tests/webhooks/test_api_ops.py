"""The operator's webhook API over real HTTP: create (secret once), list with lag, pause, resume,
rotate, a partner key's delay, and precise errors."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from scoreline.accounts.store import create_desk, create_operator
from scoreline.feeds.partners import create_partner
from tests.readmodel.rows import MatchLog
from tests.webhooks import delivery_rows as rows

MATCH = 82_100_001
HOOK = "https://hooks.acme.example/scores"


@pytest.fixture
async def operator(engine: AsyncEngine) -> dict[str, str]:
    """An operator's bearer header, with partner `acme` and a match to owe messages of."""
    await create_partner(engine, "acme", [8])
    await MatchLog.create(engine, MATCH)
    _, token = await create_operator(engine, "ops")
    return {"Authorization": f"Bearer {token}"}


def error_of(response: httpx.Response) -> dict[str, Any]:
    error: dict[str, Any] = response.json()["error"]
    return error


async def test_an_operator_creates_an_endpoint_and_sees_its_secret_once(
    operator: dict[str, str], api: httpx.AsyncClient
) -> None:
    """201 with a `whsec_` secret; the list never shows it; a second endpoint at that URL is 409."""
    created = await api.post(
        "/v1/ops/partners/acme/webhooks", json={"url": HOOK, "delay_seconds": 45}, headers=operator
    )
    assert created.status_code == 201, created.text
    body = created.json()
    assert body["secret"].startswith("whsec_")
    assert (body["partner"], body["url"], body["state"], body["delay_seconds"], body["owed"]) == (
        "acme",
        HOOK,
        "active",
        45,
        0,
    )

    listed = (await api.get("/v1/ops/webhooks", headers=operator)).json()["endpoints"]
    assert [(e["id"], e["url"]) for e in listed] == [(body["id"], HOOK)]
    assert "secret" not in listed[0]

    again = await api.post("/v1/ops/partners/acme/webhooks", json={"url": HOOK}, headers=operator)
    assert (again.status_code, error_of(again)["code"]) == (409, "duplicate_url")
    nobody = await api.post("/v1/ops/partners/nobody/webhooks", json={"url": HOOK}, headers=operator)
    assert (nobody.status_code, error_of(nobody)["code"]) == (404, "partner_not_found")


async def test_bad_input_is_422_naming_the_field(operator: dict[str, str], api: httpx.AsyncClient) -> None:
    """A refused URL, a missing URL, a delay beyond 300 s: each a 422 whose first field is the culprit."""
    for path, method, body, field in (
        ("/v1/ops/partners/acme/webhooks", "POST", {"url": "ftp://hooks.acme.example/x"}, "body.url"),
        ("/v1/ops/partners/acme/webhooks", "POST", {"url": "http://hooks.acme.example/x"}, "body.url"),
        ("/v1/ops/partners/acme/webhooks", "POST", {"delay_seconds": 5}, "body.url"),
        ("/v1/ops/partners/acme/webhooks", "POST", {"url": HOOK, "delay_seconds": 301}, "body.delay_seconds"),
        ("/v1/ops/partners/acme/delay", "PUT", {"delay_seconds": -1}, "body.delay_seconds"),
        ("/v1/ops/partners/acme/delay", "PUT", {"delay_seconds": "30"}, "body.delay_seconds"),
    ):
        answer = await api.request(method, path, json=body, headers=operator)
        assert answer.status_code == 422, (body, answer.text)
        assert error_of(answer)["fields"][0]["path"] == field, body
    assert (await api.get("/v1/ops/webhooks", headers=operator)).json()["endpoints"] == []


async def test_the_list_shows_lag_and_an_operator_pauses_resumes_and_rotates(
    engine: AsyncEngine, operator: dict[str, str], api: httpx.AsyncClient
) -> None:
    """Owed messages 90 s old read as 90 s of lag; pause and resume flip the state; rotate gives a new secret."""
    created = (await api.post("/v1/ops/partners/acme/webhooks", json={"url": HOOK}, headers=operator)).json()
    endpoint_id = created["id"]
    await rows.messages(engine, endpoint_id, MATCH, [1], delivered=True, committed_ago=timedelta(minutes=3))
    await rows.messages(
        engine, endpoint_id, MATCH, [2, 3], delivered=False, committed_ago=timedelta(seconds=90)
    )
    await rows.attempt(engine, endpoint_id, MATCH, 1, status=200)
    await rows.attempt(engine, endpoint_id, MATCH, 2, status=500)

    [listed] = (await api.get("/v1/ops/webhooks", headers=operator)).json()["endpoints"]
    assert (listed["owed"], listed["state"], listed["last_failure"]) == (2, "active", "HTTP 500")
    assert 90 <= listed["lag_seconds"] < 150
    assert listed["last_success_at"] is not None and listed["last_failure_at"] is not None

    paused = await api.post(f"/v1/ops/webhooks/{endpoint_id}/pause", headers=operator)
    assert paused.status_code == 200
    assert (paused.json()["state"], paused.json()["paused_reason"]) == ("paused", "paused by an operator")
    resumed = await api.post(f"/v1/ops/webhooks/{endpoint_id}/resume", headers=operator)
    assert (resumed.json()["state"], resumed.json()["owed"]) == ("active", 2)

    rotated = await api.post(f"/v1/ops/webhooks/{endpoint_id}/rotate", headers=operator)
    assert rotated.status_code == 200
    assert rotated.json()["secret"].startswith("whsec_") and rotated.json()["secret"] != created["secret"]
    assert rotated.json()["previous_secret_until"] is not None

    for action in ("pause", "resume", "rotate"):
        missing = await api.post(f"/v1/ops/webhooks/{endpoint_id + 1000}/{action}", headers=operator)
        assert (missing.status_code, error_of(missing)["code"]) == (404, "endpoint_not_found")


async def test_an_operator_sets_a_partner_keys_delay(
    engine: AsyncEngine, operator: dict[str, str], api: httpx.AsyncClient
) -> None:
    """PUT stores the delay on the partner; an unknown partner is 404; a desk token is 403, none 401."""
    answer = await api.put("/v1/ops/partners/acme/delay", json={"delay_seconds": 45}, headers=operator)
    assert (answer.status_code, answer.json()) == (200, {"partner": "acme", "delay_seconds": 45})
    async with engine.connect() as conn:
        stored = (
            await conn.execute(text("SELECT delay_seconds FROM partner WHERE name = 'acme'"))
        ).scalar_one()
    assert stored == 45

    unknown = await api.put("/v1/ops/partners/nobody/delay", json={"delay_seconds": 5}, headers=operator)
    assert (unknown.status_code, error_of(unknown)["code"]) == (404, "partner_not_found")
    _, desk = await create_desk(engine, "north stand", [MATCH])
    refused = await api.get("/v1/ops/webhooks", headers={"Authorization": f"Bearer {desk}"})
    assert (refused.status_code, error_of(refused)["code"]) == (403, "operators_only")
    anonymous = await api.put("/v1/ops/partners/acme/delay", json={"delay_seconds": 5})
    assert anonymous.status_code == 401
