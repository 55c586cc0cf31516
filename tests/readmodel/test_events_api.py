"""`/v1/matches/{id}/events`: match-time order, correction flags and keyset pagination."""

from __future__ import annotations

import random
from typing import Any

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from scoreline.readmodel.ordering import sort_key
from scoreline.readmodel.queries import load_events
from tests.readmodel.rows import MatchLog


async def _events(api: httpx.AsyncClient, query: str = "") -> dict[str, Any]:
    response = await api.get(f"/v1/matches/81000001/events{query}")
    assert response.status_code == 200, response.text
    assert response.headers["cache-control"] == "no-cache"
    body: dict[str, Any] = response.json()
    return body


async def test_late_backfilled_event_lands_in_match_time_order(
    api: httpx.AsyncClient, match: MatchLog
) -> None:
    """An event logged late (higher seq, earlier minute) sits at its minute; no-minute events go last."""
    await match.event(1, "goal", 10, player=(7, "Saka"))
    await match.event(2, "yellow_card", 45, extra_minute=2, side="away")
    await match.event(3, "other", None, side=None)
    await match.event(4, "substitution", 45, side="away", sort_order=2)
    await match.event(5, "goal", 90, extra_minute=3, side="away")
    await match.event(6, "corner", 45, sort_order=1)
    # The backfill: the provider adds a 20' card after everything above was logged.
    await match.event(7, "yellow_card", 20, side="away")

    page = await _events(api)

    assert [(e["provider_event_id"], e["seq"]) for e in page["events"]] == [
        (1, 1),
        (7, 7),
        (6, 6),
        (4, 4),
        (2, 2),
        (5, 5),
        (3, 3),
    ]
    assert page["next_before"] is None


async def test_event_view_shape(api: httpx.AsyncClient, match: MatchLog) -> None:
    """Each event carries its provider identity, minute, side, players, result and info."""
    await match.event(
        55,
        "substitution",
        61,
        extra_minute=None,
        sort_order=3,
        side="away",
        stream="timeline",
        player=(9, "Palmer"),
        related=(10, "Mudryk"),
        result=None,
        info="tactical",
    )
    await match.event(56, "goal", 62, player=(7, "Saka"), result="1-0")

    events = (await _events(api))["events"]

    assert events[0] == {
        "seq": 1,
        "stream": "timeline",
        "provider_event_id": 55,
        "type": "substitution",
        "provider_type_id": 14,
        "minute": 61,
        "extra_minute": None,
        "sort_order": 3,
        "side": "away",
        "player": {"id": 9, "name": "Palmer"},
        "related_player": {"id": 10, "name": "Mudryk"},
        "result": None,
        "info": "tactical",
        "retracted": False,
        "amended": False,
        "ball": None,
    }
    assert events[1]["related_player"] is None
    assert events[1]["result"] == "1-0"


async def test_retracted_and_amended_flags(api: httpx.AsyncClient, match: MatchLog) -> None:
    """A retracted event stays in the list, flagged; an amended one shows its new values; seq never moves."""
    goal = await match.event(1, "goal", 30, player=(7, "Saka"))
    card = await match.event(2, "yellow_card", 35, side="away")
    await match.event(3, "corner", 40)
    await match.retract(goal)
    await match.amend(card, info="dissent", player_id=11, player_name="James")

    events = {e["provider_event_id"]: e for e in (await _events(api))["events"]}

    assert (events[1]["retracted"], events[1]["amended"], events[1]["seq"]) == (True, False, 1)
    assert (events[2]["retracted"], events[2]["amended"], events[2]["seq"]) == (False, True, 2)
    assert events[2]["info"] == "dissent"
    assert events[2]["player"] == {"id": 11, "name": "James"}
    assert (events[3]["retracted"], events[3]["amended"]) == (False, False)


async def test_default_page_is_the_latest_hundred(api: httpx.AsyncClient, match: MatchLog) -> None:
    """Without a cursor the page is the last 100 events in match time, oldest first."""
    for provider_id in range(1, 131):
        await match.event(provider_id, "other", provider_id % 90, sort_order=provider_id)

    page = await _events(api)

    minutes = [e["minute"] for e in page["events"]]
    assert len(minutes) == 100
    assert minutes == sorted(minutes)
    assert minutes[-1] == 89
    assert page["next_before"] is not None


@pytest.fixture
async def crowded(match: MatchLog) -> list[int]:
    """37 events with tied minutes, NULL extra minutes, sort orders and minutes, logged in random order.

    Returns provider ids in the expected match-time order.
    """
    rng = random.Random(7)
    specs = []
    for provider_id in range(1, 38):
        minute = rng.choice([None, 1, 45, 45, 45, 90, 90, 12])
        extra = rng.choice([None, None, 1, 3]) if minute in (45, 90) else None
        order = rng.choice([None, 1, 2, 2])
        specs.append((provider_id, minute, extra, order))
    rng.shuffle(specs)
    ids = {}
    for provider_id, minute, extra, order in specs:
        ids[provider_id] = await match.event(
            provider_id, "other", minute, extra_minute=extra, sort_order=order
        )
    expected = sorted(specs, key=lambda s: sort_key(s[1], s[2], s[3], ids[s[0]]))
    return [s[0] for s in expected]


@pytest.mark.parametrize("limit", [1, 2, 5, 36, 37, 100])
async def test_pagination_walks_everything_once(
    api: httpx.AsyncClient, crowded: list[int], limit: int
) -> None:
    """Following `next_before` from the latest page visits every event exactly once, in order."""
    pages: list[list[int]] = []
    query = f"?limit={limit}"
    while True:
        page = await _events(api, query)
        pages.append([e["provider_event_id"] for e in page["events"]])
        if page["next_before"] is None:
            break
        query = f"?limit={limit}&before={page['next_before']}"
        assert len(pages) <= 40, "pagination does not terminate"

    walked = [provider_id for page in reversed(pages) for provider_id in page]
    assert walked == crowded
    assert all(len(page) == limit for page in pages[:-1])
    assert 1 <= len(pages[-1]) <= limit


async def test_new_events_do_not_shift_older_pages(
    api: httpx.AsyncClient, engine: AsyncEngine, match: MatchLog
) -> None:
    """A cursor keeps pointing at the same place when events are added after it was issued."""
    for provider_id in range(1, 11):
        await match.event(provider_id, "other", provider_id * 5)
    first = await _events(api, "?limit=4")
    await match.event(99, "goal", 88)
    await match.event(98, "goal", 3)

    older = await _events(api, f"?limit=4&before={first['next_before']}")

    assert [e["minute"] for e in first["events"]] == [35, 40, 45, 50]
    # The 3' backfill sits before the cursor, so it appears in the older pages; nothing is skipped.
    assert [e["minute"] for e in older["events"]] == [15, 20, 25, 30]
    async with engine.connect() as conn:
        everything = await load_events(conn, 81000001, limit=500)
    assert [e.minute for e in everything.events] == [3, 5, 10, 15, 20, 25, 30, 35, 40, 45, 50, 88]


async def test_known_match_with_no_events_is_an_empty_page(api: httpx.AsyncClient, match: MatchLog) -> None:
    """A fixture with no events yet answers 200 with an empty list, not 404."""
    assert await _events(api) == {"events": [], "next_before": None}
    assert await _events(api, "?before=WzEsbnVsbCxudWxsLDFd") == {"events": [], "next_before": None}
