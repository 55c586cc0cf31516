"""A match's consecutive due changes go in one task: leased together, sent in order, the rest released."""

from __future__ import annotations

import itertools
import time
from typing import Any

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine
from starlette.responses import Response

from scoreline.settings import Settings
from scoreline.webhooks import delivery
from tests.feeds.partner_matches import match_in
from tests.support.waiting import eventually
from tests.webhooks.conftest import LEAGUE, endpoint_at, running
from tests.webhooks.receivers import receiver

MATCH = 93000501
ENTRIES = 30


async def test_consecutive_changes_of_a_match_need_no_claim_each(
    engine: AsyncEngine, webhook_settings: Settings, partner: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each seq of a match used to wait for its predecessor's answer to be recorded and then for a
    claim of its own (two round trips a message, ~1,400 deliveries/s at most in the bench): now one
    claim leases a match's due messages and one task sends them in order."""
    claims: list[int] = []
    real_claim = delivery.claim

    async def counted(*args: Any, **kwargs: Any) -> list[delivery.Claimed]:
        claimed = await real_claim(*args, **kwargs)
        if claimed:
            claims.append(len(claimed))
        return claimed

    monkeypatch.setattr(delivery, "claim", counted)
    async with receiver() as seen:
        await endpoint_at(engine, seen.url)
        match = await match_in(engine, MATCH, LEAGUE)
        async with running(engine, webhook_settings):
            await match.change(entries=ENTRIES)

            async def done() -> bool:
                return len(seen.delivered()) >= ENTRIES

            await eventually(done, within=20)
        assert seen.delivered_keys() == [(MATCH, seq) for seq in range(1, ENTRIES + 1)]
        assert len(seen.journal) == ENTRIES
        assert len(claims) <= 2, claims


async def test_leased_followers_not_sent_are_released_not_left_to_their_lease(
    engine: AsyncEngine, webhook_settings: Settings, partner: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Followers leased with a head but not sent (the head failed, or the task ran out of
    `CHAIN_FOR`, here at once after each send) are released: each goes as soon as it is the head,
    not when its lease (30 s here) runs out; in order, none before its predecessor's 2xx."""
    monkeypatch.setattr(delivery, "CHAIN_FOR", 0.0)
    async with receiver() as seen:
        await endpoint_at(engine, seen.url)
        match = await match_in(engine, MATCH, LEAGUE)
        refuse = {"seq": 3}

        def behaviour(body: dict[str, Any]) -> Response | None:
            return Response("no", status_code=500) if body["seq"] >= refuse["seq"] else None

        seen.behaviour = behaviour
        async with running(engine, webhook_settings):
            await match.change(entries=10)

            async def refused(times: int) -> bool:
                return sum(1 for r in seen.journal if r.key == (MATCH, 3)) >= times

            await eventually(lambda: refused(3), within=10)
            refuse["seq"] = 10**9
            recovered = time.monotonic()

            async def done() -> bool:
                return len(seen.delivered()) >= 10

            await eventually(done, within=20)
            assert time.monotonic() - recovered < 5
        assert seen.delivered_keys() == [(MATCH, seq) for seq in range(1, 11)]
        arrivals = [r.key[1] for r in seen.journal]
        assert arrivals == sorted(arrivals)
        for earlier, later in itertools.pairwise(arrivals):
            assert later in (earlier, earlier + 1)
