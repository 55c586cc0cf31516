"""The partner's webhook API over real HTTP: its own endpoints and log only, paging, redelivery."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from scoreline.feeds.partners import create_partner, revoke_partner
from tests.readmodel.rows import MatchLog
from tests.webhooks import delivery_rows as rows

MATCH = 82_000_001
OTHER_MATCH = 82_000_002


@pytest.fixture
async def keys(engine: AsyncEngine) -> dict[str, str]:
    """Two partners' feed keys, and the matches their messages belong to."""
    _, acme = await create_partner(engine, "acme", [8])
    _, rival = await create_partner(engine, "rival", [8])
    await MatchLog.create(engine, MATCH)
    await MatchLog.create(engine, OTHER_MATCH)
    return {"acme": acme, "rival": rival}


def key(api_key: str) -> dict[str, str]:
    return {"X-Api-Key": api_key}


def error_of(response: httpx.Response) -> dict[str, Any]:
    error: dict[str, Any] = response.json()["error"]
    return error


async def owed_seqs(engine: AsyncEngine, endpoint_id: int, fixture_id: int) -> list[int]:
    async with engine.connect() as conn:
        found = await conn.execute(
            text(
                """SELECT seq FROM webhook_message WHERE endpoint_id = :e AND fixture_id = :f
                AND delivered_at IS NULL AND next_attempt_at <= now() AND attempts = 0 ORDER BY seq"""
            ),
            {"e": endpoint_id, "f": fixture_id},
        )
        return list(found.scalars())


async def test_a_partner_reads_only_its_own_log_newest_first_in_pages(
    engine: AsyncEngine, keys: dict[str, str], api: httpx.AsyncClient
) -> None:
    """Five attempts come back in pages of two, newest first, none repeated; a rival's endpoint is 404."""
    mine = await rows.endpoint(engine, "acme", "https://hooks.acme.example/scores")
    theirs = await rows.endpoint(engine, "rival", "https://rival.example/in")
    ids = [
        await rows.attempt(engine, mine, MATCH, seq, status=500 if seq == 2 else 200) for seq in range(1, 6)
    ]
    await rows.attempt(engine, theirs, MATCH, 1)

    listed = await api.get("/v1/partner/webhooks", headers=key(keys["acme"]))
    assert listed.status_code == 200
    assert [(e["id"], e["partner"], e["state"]) for e in listed.json()["endpoints"]] == [
        (mine, "acme", "active")
    ]

    seen: list[int] = []
    pages = 0
    before: int | None = None
    while True:
        params = {"limit": 2} if before is None else {"limit": 2, "before": before}
        page = await api.get(
            f"/v1/partner/webhooks/{mine}/deliveries", params=params, headers=key(keys["acme"])
        )
        assert page.status_code == 200
        seen += [attempt["id"] for attempt in page.json()["attempts"]]
        pages += 1
        before = page.json()["next"]
        if before is None:
            break
    assert (seen, pages) == (ids[::-1], 3)

    first = (await api.get(f"/v1/partner/webhooks/{mine}/deliveries", headers=key(keys["acme"]))).json()
    failed = next(attempt for attempt in first["attempts"] if attempt["seq"] == 2)
    assert failed == {
        "id": ids[1],
        "at": failed["at"],
        "fixture_id": MATCH,
        "seq": 2,
        "webhook_id": f"msg_{mine}_{MATCH}_2",
        "status": 500,
        "latency_ms": 42,
        "answer_head": '{"ok": false}',
        "error": None,
    }

    for path in (
        f"/v1/partner/webhooks/{theirs}/deliveries",
        f"/v1/partner/webhooks/{theirs + 1000}/deliveries",
    ):
        refused = await api.get(path, headers=key(keys["acme"]))
        assert (refused.status_code, error_of(refused)["code"]) == (404, "endpoint_not_found")
    redeliver = await api.post(
        f"/v1/partner/webhooks/{theirs}/redeliver",
        json={"fixture_id": MATCH, "from_seq": 1},
        headers=key(keys["acme"]),
    )
    assert redeliver.status_code == 404


async def test_redeliver_owes_the_match_again_from_the_seq_in_order_and_twice_is_harmless(
    engine: AsyncEngine, keys: dict[str, str], api: httpx.AsyncClient
) -> None:
    """From seq 3: seqs 3, 4, 5 of that match are owed and due now, 1-2 and the other match untouched."""
    mine = await rows.endpoint(engine, "acme", "https://hooks.acme.example/scores")
    await rows.messages(engine, mine, MATCH, range(1, 6), delivered=True)
    await rows.messages(engine, mine, OTHER_MATCH, range(1, 4), delivered=True)
    path = f"/v1/partner/webhooks/{mine}/redeliver"

    first = await api.post(path, json={"fixture_id": MATCH, "from_seq": 3}, headers=key(keys["acme"]))
    assert first.status_code == 202
    assert first.json() == {
        "endpoint_id": mine,
        "fixture_id": MATCH,
        "from_seq": 3,
        "owed_again": 3,
        "owed": 3,
    }
    assert await owed_seqs(engine, mine, MATCH) == [3, 4, 5]
    assert await owed_seqs(engine, mine, OTHER_MATCH) == []

    again = await api.post(path, json={"fixture_id": MATCH, "from_seq": 3}, headers=key(keys["acme"]))
    assert (again.status_code, again.json()["owed_again"], again.json()["owed"]) == (202, 0, 3)
    assert await owed_seqs(engine, mine, MATCH) == [3, 4, 5]

    state = (await api.get("/v1/partner/webhooks", headers=key(keys["acme"]))).json()["endpoints"][0]
    assert state["owed"] == 3
    assert state["lag_seconds"] >= 299, "the oldest owed message committed five minutes ago"


async def test_bad_requests_are_precise(
    engine: AsyncEngine, keys: dict[str, str], api: httpx.AsyncClient
) -> None:
    """No key 401, an unknown key 401, a revoked key 403, a seq never owed or a bad body 422 naming the field."""
    mine = await rows.endpoint(engine, "acme", "https://hooks.acme.example/scores")
    await rows.messages(engine, mine, MATCH, [1, 2], delivered=True)
    path = f"/v1/partner/webhooks/{mine}/redeliver"

    never = await api.post(path, json={"fixture_id": MATCH, "from_seq": 9}, headers=key(keys["acme"]))
    assert never.status_code == 422
    assert error_of(never)["fields"][0]["path"] == "body.from_seq"
    assert "seq 9" in error_of(never)["message"]

    for body, field in (
        ({"fixture_id": "82000001", "from_seq": 1}, "body.fixture_id"),
        ({"fixture_id": MATCH, "from_seq": 0}, "body.from_seq"),
        ({"fixture_id": MATCH}, "body.from_seq"),
    ):
        bad = await api.post(path, json=body, headers=key(keys["acme"]))
        assert (bad.status_code, error_of(bad)["fields"][0]["path"]) == (422, field)
    paging = await api.get(f"/v1/partner/webhooks/{mine}/deliveries?limit=500", headers=key(keys["acme"]))
    assert (paging.status_code, error_of(paging)["fields"][0]["path"]) == (422, "query.limit")

    missing = await api.get("/v1/partner/webhooks")
    assert (missing.status_code, error_of(missing)["code"]) == (401, "unauthorized")
    unknown = await api.get("/v1/partner/webhooks", headers=key("sl_partner_nope"))
    assert (unknown.status_code, error_of(unknown)["code"]) == (401, "invalid_api_key")
    await revoke_partner(engine, "acme")
    revoked = await api.get("/v1/partner/webhooks", headers=key(keys["acme"]))
    assert (revoked.status_code, error_of(revoked)["code"]) == (403, "api_key_revoked")
