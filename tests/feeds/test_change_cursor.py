"""`GET /v1/feeds/changes` over real HTTP: what a pulling partner sees, page after page."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from typing import Any

import httpx
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from activities.retention import RetentionActivities
from domain.retention import RetentionTable
from scoreline.feeds.partner_delay import set_partner_delay
from scoreline.settings import Settings
from tests.feeds.changes import PREMIER_LEAGUE
from tests.feeds.conftest import Keys, serving
from tests.feeds.partner_matches import match_in
from tests.retention.rows import AGES
from tests.support.waiting import eventually

CHANGES = "/v1/feeds/changes"
OTHER = PREMIER_LEAGUE + 1


async def _page(api: httpx.AsyncClient, key: str, after: str | None, limit: int) -> dict[str, Any]:
    params: dict[str, str | int] = {"limit": limit}
    if after is not None:
        params["after"] = after
    response = await api.get(CHANGES, params=params, headers={"X-Api-Key": key})
    assert response.status_code == 200, response.text
    page: dict[str, Any] = response.json()
    return page


async def _first_page(api: httpx.AsyncClient, key: str, limit: int) -> dict[str, Any]:
    """The first page that has changes (see `_drain` on why one may come empty first)."""
    return await eventually(lambda: _nonempty(api, key, limit))


async def _nonempty(api: httpx.AsyncClient, key: str, limit: int) -> dict[str, Any] | None:
    page = await _page(api, key, None, limit)
    return page if page["changes"] else None


async def _drain(
    api: httpx.AsyncClient, key: str, after: str | None, limit: int, want: int
) -> tuple[list[tuple[int, int]], str | None]:
    """Changes after `after`, page by page, as (fixture_id, seq), until `want` of them came and a
    further page is empty; and the last `next`.

    A commit is readable once every older transaction on the server ended (the outbox's xmin
    rule), so a page right after a commit may still be empty: the reader asks again, as a
    partner would.
    """
    seen: list[tuple[int, int]] = []
    deadline = time.monotonic() + 10
    while True:
        page = await _page(api, key, after, limit)
        assert len(page["changes"]) <= limit
        seen += [(change["fixture_id"], change["seq"]) for change in page["changes"]]
        if not page["changes"]:
            assert after is None or page["next"] == after
            if len(seen) >= want:
                return seen, after
            assert time.monotonic() < deadline, f"only {seen} came"
            await asyncio.sleep(0.05)
        after = page["next"]


async def test_pages_of_any_size_give_every_change_once_in_commit_order(
    engine: AsyncEngine, keys: Keys, api: httpx.AsyncClient
) -> None:
    """Limits that split commits still give each entry once, commits in order, seqs in order."""
    home = await match_in(engine, 91000001, PREMIER_LEAGUE)
    away = await match_in(engine, 91000002, PREMIER_LEAGUE)
    await home.change(entries=3, goal="home")
    await away.change(entries=2)
    await home.change(entries=1, state="half_time")
    await away.change(entries=4, goal="away")
    expected = [(91000001, 1), (91000001, 2), (91000001, 3), (91000002, 1), (91000002, 2), (91000001, 4)]
    expected += [(91000002, s) for s in (3, 4, 5, 6)]

    for limit in (1, 2, 3, 7, 1000):
        seen, _ = await _drain(api, keys.premier, None, limit, len(expected))
        assert seen == expected, limit

    change = (await _page(api, keys.premier, None, 1))["changes"][0]
    assert change["version"] == 3 and change["kind"] == "event"
    assert change["body"] == {"type": "goal", "side": "home"}
    assert change["state"] == "live_first_half" and change["score"] == {"home": 1, "away": 0}
    assert datetime.fromisoformat(change["committed_at"]) <= datetime.now(UTC)


async def test_a_partner_that_stops_resumes_with_no_gap_across_a_restart(
    engine: AsyncEngine, keys: Keys, feed_settings: Settings
) -> None:
    """Stop mid-commit, let commits land and the API restart: the saved cursor gives exactly the rest."""
    match = await match_in(engine, 91000001, PREMIER_LEAGUE)
    await match.change(entries=3)
    async with serving(feed_settings) as api:
        first = await _first_page(api, keys.premier, 2)
    assert [c["seq"] for c in first["changes"]] == [1, 2]
    await match.change(entries=2, goal="home")
    await match.change(entries=1)
    async with serving(feed_settings) as api:
        rest, last = await _drain(api, keys.premier, first["next"], 2, 4)
        assert rest == [(91000001, seq) for seq in (3, 4, 5, 6)]
        await match.change(entries=1)
        later, _ = await _drain(api, keys.premier, last, 5, 1)
    assert later == [(91000001, 7)]


async def test_competitions_scope_the_changes(
    engine: AsyncEngine, keys: Keys, api: httpx.AsyncClient
) -> None:
    """A partner sees only the matches of the competitions its key is granted."""
    ours = await match_in(engine, 91000001, PREMIER_LEAGUE)
    theirs = await match_in(engine, 91000002, OTHER)
    await theirs.change(entries=2)
    await ours.change(entries=1)
    await theirs.change(entries=1)
    assert (await _drain(api, keys.premier, None, 10, 1))[0] == [(91000001, 1)]
    assert (await _drain(api, keys.other, None, 10, 3))[0] == [(91000002, 1), (91000002, 2), (91000002, 3)]


async def test_a_cursor_older_than_retention_is_410_with_the_oldest_valid_one(
    engine: AsyncEngine, keys: Keys, api: httpx.AsyncClient
) -> None:
    """Once retention deleted the cursor's commit, the partner is told, and given where to start."""
    match = await match_in(engine, 91000001, PREMIER_LEAGUE)
    await match.change(entries=2)
    await match.change(entries=1)
    await match.change(entries=2)
    stale = (await _first_page(api, keys.premier, 1))["next"]
    async with engine.begin() as conn:
        # The first two commits are past the outbox age, and the feed builder read them.
        await conn.execute(
            text("UPDATE domain_event SET created_at = now() - interval '8 days' WHERE seq <= 3")
        )
        await conn.execute(
            text(
                """INSERT INTO feed_cursor (consumer, last_xid, last_event_id)
                SELECT consumer, xid, id FROM domain_event, unnest(ARRAY['feeds', 'webhooks']) AS consumer
                WHERE seq = 3"""
            )
        )
    batch = await RetentionActivities(engine).delete_batch(
        RetentionTable.OUTBOX, AGES.outbox_age_seconds, 100
    )
    assert batch.deleted == 2

    gone = await api.get(CHANGES, params={"after": stale}, headers={"X-Api-Key": keys.premier})
    assert gone.status_code == 410
    error = gone.json()["error"]
    assert error["code"] == "cursor_expired"
    rest, _ = await _drain(api, keys.premier, error["oldest"], 1, 2)
    assert rest == [(91000001, 4), (91000001, 5)]
    assert (await _drain(api, keys.premier, None, 10, 2))[0] == rest


async def test_junk_cursors_and_limits_are_422_and_keys_are_checked(
    keys: Keys, api: httpx.AsyncClient
) -> None:
    """Anything that is not a cursor this API issued is a 422 with the error body; no key is a 401."""
    for junk in ("x", "djEuMS4y", "djEuMDEuMi4z", "djEuLTEuMi4z", "!!!!", "a" * 101):
        response = await api.get(CHANGES, params={"after": junk}, headers={"X-Api-Key": keys.premier})
        assert response.status_code == 422, junk
        assert set(response.json()["error"]) >= {"code", "message"}
    for limit in (0, 1001, "x"):
        response = await api.get(CHANGES, params={"limit": limit}, headers={"X-Api-Key": keys.premier})
        assert response.status_code == 422, limit
    assert (await api.get(CHANGES)).status_code == 401
    assert (await api.get(CHANGES, headers={"X-Api-Key": "sl_partner_nope"})).status_code == 401


async def test_a_delayed_partner_never_sees_a_change_younger_than_its_delay(
    engine: AsyncEngine, keys: Keys, feed_settings: Settings
) -> None:
    """Every change a delayed key reads was committed at least the delay before the answer came."""
    delay = 2.0
    await set_partner_delay(engine, "premier-partner", int(delay))
    match = await match_in(engine, 91000001, PREMIER_LEAGUE)
    async with serving(feed_settings) as api:
        began = time.time()
        await match.change(entries=2)
        committed = time.time()
        after: str | None = None
        seen: list[int] = []
        while len(seen) < 2:
            page = await _page(api, keys.premier, after, 10)
            answered = time.time()
            for change in page["changes"]:
                at = datetime.fromisoformat(change["committed_at"]).timestamp()
                # The commit happened between `began` and `committed` (the test's own measurement).
                assert began <= at <= committed
                assert answered - at >= delay
                seen.append(change["seq"])
            after = page["next"]
            await asyncio.sleep(0.1)
        assert seen == [1, 2]
        assert answered >= began + delay
