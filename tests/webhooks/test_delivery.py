"""Delivery end to end: real Postgres, real commits and NOTIFYs, real HTTP receivers on 127.0.0.1."""

from __future__ import annotations

import asyncio
import itertools
import json
from datetime import timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine
from starlette.responses import Response

from activities.ingest.store import IngestStore
from activities.provider.normaliser import normalise_fixture
from scoreline.settings import Settings
from scoreline.webhooks.endpoints import get_endpoint, resume_endpoint, rotate_secret
from tests.feeds.partner_matches import match_in
from tests.support.waiting import eventually
from tests.webhooks.conftest import LEAGUE, OTHER_LEAGUE, endpoint_at, running
from tests.webhooks.receivers import Receiver, receiver

RECORDINGS = Path(__file__).resolve().parents[2] / "recordings"
MATCH_A = 93000001
MATCH_B = 93000002
ELSEWHERE = 93000003


def _in_order_without_gaps(seen: Receiver, fixture_id: int, last: int) -> None:
    """Every seq 1..last delivered exactly once, and the receiver was never sent a seq before the
    previous one had been answered 2xx (arrivals never go back, never skip ahead)."""
    assert seen.delivered_keys(fixture_id) == [(fixture_id, seq) for seq in range(1, last + 1)]
    arrivals = [r.key[1] for r in seen.journal if r.key[0] == fixture_id]
    assert arrivals == sorted(arrivals)
    for earlier, later in itertools.pairwise(arrivals):
        assert later in (earlier, earlier + 1)


def _ids_repeat_only_while_unanswered(seen: Receiver) -> None:
    """A `webhook-id` arrives again only as a retry of a message that had no 2xx yet."""
    delivered: set[str] = set()
    for request in seen.journal:
        msg_id = request.headers["webhook-id"]
        assert msg_id not in delivered, f"{msg_id} sent again after a 2xx"
        if 200 <= request.answered < 300:
            delivered.add(msg_id)


async def _all_delivered(seen: Receiver, expected: int, within: float = 20) -> None:
    async def done() -> bool:
        return len(seen.delivered()) >= expected

    await eventually(done, within=within)


async def test_every_change_arrives_once_signed_in_seq_order_per_endpoint(
    engine: AsyncEngine, webhook_settings: Settings, partner: str
) -> None:
    async with receiver() as first, receiver() as second:
        first_endpoint, first_secret = await endpoint_at(engine, first.url)
        second_endpoint, second_secret = await endpoint_at(engine, second.url)
        a = await match_in(engine, MATCH_A, LEAGUE)
        b = await match_in(engine, MATCH_B, LEAGUE)
        elsewhere = await match_in(engine, ELSEWHERE, OTHER_LEAGUE)
        async with running(engine, webhook_settings):
            await a.change(entries=3, goal="home")
            await b.change(entries=1)
            await elsewhere.change(entries=2)
            await a.change(entries=2, state="live_second_half")
            await b.change(entries=4, goal="away")
            for seen in (first, second):
                await _all_delivered(seen, 10)
        for seen, endpoint_id, secret in (
            (first, first_endpoint.id, first_secret),
            (second, second_endpoint.id, second_secret),
        ):
            assert len(seen.journal) == 10
            _in_order_without_gaps(seen, MATCH_A, 5)
            _in_order_without_gaps(seen, MATCH_B, 5)
            for request in seen.journal:
                body = request.verify(secret)
                assert body["type"] == "match.change"
                fixture_id, seq = request.key
                assert request.headers["webhook-id"] == f"msg_{endpoint_id}_{fixture_id}_{seq}"
            # Matches are independent: B's last change need not be the last to arrive.
            last = next(request.body for request in seen.journal if request.key == (MATCH_B, 5))
            assert (last["fixture_id"], last["seq"], last["version"], last["score"]) == (
                MATCH_B,
                5,
                5,
                {"home": 0, "away": 1},
            )


async def test_a_replayed_match_arrives_whole_in_order(
    engine: AsyncEngine, webhook_settings: Settings, partner: str
) -> None:
    """The real ingest, line by line, with the feeds process already running."""
    lines = (RECORDINGS / "football-basic.jsonl").read_text().splitlines()[1:]
    snapshots = [normalise_fixture(json.loads(line)["fixture"]) for line in lines if '"fixture"' in line]
    store = IngestStore(engine)
    async with receiver() as seen:
        _, secret = await endpoint_at(engine, seen.url)
        async with running(engine, webhook_settings):
            for snapshot in snapshots:
                await store.ingest(snapshot, "live")
            async with engine.connect() as conn:
                logged = (
                    await conn.execute(text("SELECT fixture_id, max(seq) FROM timeline_item GROUP BY 1"))
                ).all()
            assert len(logged) == 1, logged
            fixture_id, last = logged[0]
            await _all_delivered(seen, last)
        _in_order_without_gaps(seen, fixture_id, last)
        _ids_repeat_only_while_unanswered(seen)
        for request in seen.journal:
            request.verify(secret)


async def test_a_receiver_down_then_timing_out_gets_everything_after_it_recovers(
    engine: AsyncEngine, webhook_settings: Settings, partner: str
) -> None:
    """500s, then timeouts, each for far longer than the 0.2 s backoff cap; then 200s."""
    async with receiver() as seen:
        await endpoint_at(engine, seen.url)
        a = await match_in(engine, MATCH_A, LEAGUE)
        async with running(engine, webhook_settings):
            seen.behaviour = lambda _body: Response("down", status_code=500, headers={"retry-after": "0"})
            for _ in range(3):
                await a.change(entries=2)

            async def retried(times: int) -> bool:
                return len(seen.journal) >= times

            await eventually(lambda: retried(8), within=10)
            seen.behaviour = lambda _body: None
            seen.hang = 1.0
            already = len(seen.journal)
            await eventually(lambda: retried(already + 2), within=10)
            await a.change(entries=1)
            seen.hang = 0.0
            await _all_delivered(seen, 7, within=20)
        _in_order_without_gaps(seen, MATCH_A, 7)
        _ids_repeat_only_while_unanswered_or_timed_out(seen)


def _ids_repeat_only_while_unanswered_or_timed_out(seen: Receiver) -> None:
    """Repeats are of one message at a time: every request before a seq's last arrival is that seq
    or an earlier one (a timed-out request may have been answered 200 after we gave up)."""
    arrivals = [r.headers["webhook-id"] for r in seen.journal]
    repeated = {msg_id for msg_id in arrivals if arrivals.count(msg_id) > 1}
    for msg_id in repeated:
        first = arrivals.index(msg_id)
        last = len(arrivals) - 1 - arrivals[::-1].index(msg_id)
        assert set(arrivals[first : last + 1]) == {msg_id}


async def test_one_failing_match_or_endpoint_never_holds_another(
    engine: AsyncEngine, webhook_settings: Settings, partner: str
) -> None:
    async with receiver() as picky, receiver() as stuck:
        await endpoint_at(engine, picky.url)
        await endpoint_at(engine, stuck.url)
        picky.behaviour = lambda body: Response(status_code=503) if body["fixture_id"] == MATCH_A else None
        stuck.hang = 5.0
        a = await match_in(engine, MATCH_A, LEAGUE)
        b = await match_in(engine, MATCH_B, LEAGUE)
        async with running(engine, webhook_settings):
            await a.change(entries=2)
            for _ in range(5):
                await b.change(entries=2)
            await _all_delivered(picky, 10, within=5)
            stuck.hang = 0.0
        assert picky.delivered_keys(MATCH_B) == [(MATCH_B, seq) for seq in range(1, 11)]
        assert {r.key for r in picky.journal if r.key[0] == MATCH_A} == {(MATCH_A, 1)}


async def test_a_message_failing_past_retry_for_pauses_the_endpoint_and_resume_continues(
    engine: AsyncEngine, webhook_settings: Settings, partner: str
) -> None:
    settings = webhook_settings.model_copy(update={"webhook_retry_for": timedelta(seconds=1)})
    async with receiver() as seen:
        endpoint, _ = await endpoint_at(engine, seen.url)
        seen.behaviour = lambda _body: Response(status_code=500)
        a = await match_in(engine, MATCH_A, LEAGUE)
        async with running(engine, settings):
            await a.change(entries=2)

            async def paused() -> bool:
                return (await get_endpoint(engine, endpoint.id)).paused_at is not None

            await eventually(paused, within=10)
            reason = (await get_endpoint(engine, endpoint.id)).paused_reason
            assert reason is not None and f"fixture {MATCH_A} seq 1" in reason
            attempts = len(seen.journal)
            await a.change(entries=2)
            await asyncio.sleep(0.5)
            assert len(seen.journal) == attempts, "a paused endpoint is sent nothing"
            assert {r.key for r in seen.journal} == {(MATCH_A, 1)}
            seen.behaviour = lambda _body: None
            await resume_endpoint(engine, endpoint.id)
            await _all_delivered(seen, 4)

            async def every_request_logged() -> bool:
                async with engine.connect() as conn:
                    logged = await conn.execute(text("SELECT count(*) FROM webhook_attempt"))
                    return logged.scalar_one() == len(seen.journal)

            await eventually(every_request_logged, within=10)
        _in_order_without_gaps(seen, MATCH_A, 4)


async def test_after_a_rotation_both_secrets_sign(
    engine: AsyncEngine, webhook_settings: Settings, partner: str
) -> None:
    async with receiver() as seen:
        endpoint, old = await endpoint_at(engine, seen.url)
        new = await rotate_secret(engine, endpoint.id)
        assert new != old
        a = await match_in(engine, MATCH_A, LEAGUE)
        async with running(engine, webhook_settings):
            await a.change(entries=1)
            await _all_delivered(seen, 1)
        request = seen.journal[0]
        assert len(request.headers["webhook-signature"].split(" ")) == 2
        request.verify(old)
        request.verify(new)


async def test_a_redirect_is_a_failure_and_is_not_followed(
    engine: AsyncEngine, webhook_settings: Settings, partner: str
) -> None:
    async with receiver() as target, receiver() as mover:
        mover.behaviour = lambda _body: Response(status_code=307, headers={"location": target.url})
        await endpoint_at(engine, mover.url)
        a = await match_in(engine, MATCH_A, LEAGUE)
        async with running(engine, webhook_settings):
            await a.change(entries=1)

            async def logged() -> list[Any]:
                async with engine.connect() as conn:
                    return list((await conn.execute(text("SELECT status, seq FROM webhook_attempt"))).all())

            rows = await eventually(logged)
        assert rows[0].status == 307
        assert target.journal == []
        async with engine.connect() as conn:
            delivered = (await conn.execute(text("SELECT delivered_at FROM webhook_message"))).scalar_one()
        assert delivered is None


async def test_an_endpoint_is_owed_only_what_commits_after_its_creation(
    engine: AsyncEngine, webhook_settings: Settings, partner: str
) -> None:
    a = await match_in(engine, MATCH_A, LEAGUE)
    await a.change(entries=2)
    async with receiver() as seen:
        await endpoint_at(engine, seen.url)
        async with running(engine, webhook_settings):
            await a.change(entries=1)
            await _all_delivered(seen, 1)
        assert seen.delivered_keys() == [(MATCH_A, 3)]
