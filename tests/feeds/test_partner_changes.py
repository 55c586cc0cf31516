"""`changes_after`: every entry of every commit once, in commit order, with the match after it."""

from __future__ import annotations

import asyncio
import time
from datetime import timedelta

from sqlalchemy.ext.asyncio import AsyncEngine

from scoreline.feeds.change_cursor import START
from scoreline.feeds.partner_changes import PartnerChange, changes_after
from tests.feeds.partner_matches import match_in

LEAGUE = 8
OTHER = 9


async def _all(engine: AsyncEngine, limit: int, want: int) -> list[PartnerChange]:
    """Pages from the start until `want` changes came and a further page is empty.

    A commit is readable once every older transaction on the server ended (the xmin rule), so a
    page may come empty before then: the reader asks again.
    """
    seen: list[PartnerChange] = []
    cursor = START
    deadline = time.monotonic() + 10
    async with engine.connect() as conn:
        while True:
            page = await changes_after(conn, cursor, {LEAGUE}, limit)
            await conn.rollback()  # a new snapshot for the next read
            assert len(page.changes) <= limit
            seen += page.changes
            cursor = page.cursor
            if not page.changes:
                if len(seen) >= want:
                    return seen
                assert time.monotonic() < deadline, f"only {len(seen)} came"
                await asyncio.sleep(0.05)


async def test_every_entry_once_in_commit_order_whatever_the_page_size(engine: AsyncEngine) -> None:
    """Pages of any size, split inside commits or not, give the same entries in commit order."""
    first = await match_in(engine, 91000001, LEAGUE)
    second = await match_in(engine, 91000002, LEAGUE)
    elsewhere = await match_in(engine, 91000003, OTHER)
    await first.change(entries=3, goal="home")
    await elsewhere.change(entries=2)
    await second.change(entries=1, state="live_second_half")
    await first.change(entries=2, goal="away")
    expected = [(91000001, s, 3) for s in (1, 2, 3)] + [(91000002, 1, 1)] + [(91000001, s, 5) for s in (4, 5)]

    for limit in (1, 2, 4, 1000):
        seen = await _all(engine, limit, len(expected))
        assert [(c.fixture_id, c.seq, c.version) for c in seen] == expected, limit

    seen = await _all(engine, 1000, len(expected))
    assert seen[0].kind == "event" and seen[0].body == {"type": "goal", "side": "home"}
    assert seen[0].score is not None and (seen[0].score.home, seen[0].score.away) == (1, 0)
    assert seen[3].state == "live_second_half"
    assert seen[5].score is not None and (seen[5].score.home, seen[5].score.away) == (1, 1)
    assert "position" not in seen[0].model_dump(mode="json")


async def test_a_delay_shows_nothing_younger_than_it(engine: AsyncEngine) -> None:
    """A read with a delay longer than the commits' age returns none of them."""
    match = await match_in(engine, 91000001, LEAGUE)
    await match.change(entries=2)
    assert [c.seq for c in await _all(engine, 10, 2)] == [1, 2]
    async with engine.connect() as conn:
        assert (await changes_after(conn, START, {LEAGUE}, 10, delay=timedelta(seconds=60))).changes == []
