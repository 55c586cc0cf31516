"""A request whose look is older than `SendPolicy.look_kept` when it is about to start looks again.

The soak of 2026-12-04 (seed 19): a worker was SIGSTOPped past its heartbeat timeout after a
routine update's last look and before its requests. Meanwhile the other worker sent the match's
newer alert, and one phone's token died (APNs answered the alert 410). Resumed, the paused worker
sent what it had looked at before the pause: the routine update reached 89 phones 7 s after the
newer alert (out of timestamp order) and the dead token once more. Here the "pause" is the time
the delivery spends between its look and its request, while the newer push is claimed or the
token switched off.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import replace
from functools import partial

import asyncpg
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from activities.push.apns import ApnsClient
from activities.push.delivery import Delivery, Sender, SendPolicy
from activities.push.last_look import LastLook, Standing
from activities.push.limiter import AdaptiveLimit
from activities.push.payloads import FixtureNames, build, variants
from activities.push.store import PushStore, Target
from tests.push import seed
from tests.push.conftest import FAST_POLICY
from tests.push.simulator import PushSim
from tests.push.test_fanout import NOW, push

ROUTINE = push(version=5, routine=True, timestamp=NOW)
NEWER = push(version=6, priority=10, alert=True, timestamp=NOW + 20)
POLICY = replace(FAST_POLICY, look_kept=1.0)
PAUSE_S = 1.5
"""Longer than the look is kept."""

Meanwhile = Callable[[AsyncEngine, asyncpg.Connection, int], Awaitable[None]]


async def _claimed(engine: AsyncEngine, db: asyncpg.Connection, claimant: str) -> tuple[Target, LastLook]:
    """One running activity, the routine update claimed on it by `claimant`, and that claimant's
    last look."""
    await seed.fixture(db)
    await seed.running_activities(db, 1)
    store = PushStore(engine, ROUTINE, "sandbox")
    batch = await store.load(store.first_cursor, limit=10)
    (target,) = (await store.claim(batch.targets, [], claimant, {"version": 5})).mine
    last_look = LastLook(partial(store.mark_sending, claimant), partial(store.unmark_sending, claimant))
    return target, last_look


async def _deliver(
    apns_client: ApnsClient, policy: SendPolicy, target: Target, look: Callable[[], Awaitable[Standing]]
) -> Delivery:
    """The routine update to `target`, each request after `look`."""
    sender = Sender(apns_client, policy, AdaptiveLimit(10), asyncio.Event(), kind="update")
    bodies = variants(build(ROUTINE, FixtureNames(seed.HOME, seed.AWAY, None), seed.FIXTURE_ID))
    return await sender.deliver(
        target.token,
        bodies,
        priority=5,
        expiration=ROUTINE.timestamp + 900,
        resend_if_unknown=True,
        look=look,
    )


async def _newer_push_claimed(engine: AsyncEngine, db: asyncpg.Connection, live_activity_id: int) -> None:
    """The other worker claims the newer alert (its request follows)."""
    store = PushStore(engine, NEWER, "sandbox")
    batch = await store.load(store.first_cursor, limit=10)
    assert (await store.claim(batch.targets, [], "other-worker/1#1", {"version": 6})).mine


async def _token_switched_off(engine: AsyncEngine, db: asyncpg.Connection, live_activity_id: int) -> None:
    """The other worker's push got the token's 410 and wrote it."""
    await db.execute("UPDATE live_activity SET push_token_active = false WHERE id = $1", live_activity_id)


@pytest.mark.parametrize(
    ("meanwhile", "outcome"), [(_newer_push_claimed, "stale"), (_token_switched_off, "dead")]
)
async def test_a_request_paused_after_its_look_looks_again(
    engine: AsyncEngine,
    apns_client: ApnsClient,
    sim: PushSim,
    db: asyncpg.Connection,
    meanwhile: Meanwhile,
    outcome: str,
) -> None:
    """Nothing is sent: the second look finds the newer claim (`stale`) or the dead token
    (`dead`). Before the fix the request went out on the look taken before the pause."""
    target, last_look = await _claimed(engine, db, "paused-worker/1#1")
    looks: list[Standing] = []

    async def look_then_pause() -> Standing:
        standing = await last_look.look(target.live_activity_id)
        looks.append(standing)
        if len(looks) == 1:
            await meanwhile(engine, db, target.live_activity_id)
            await asyncio.sleep(PAUSE_S)
        return standing

    delivery = await _deliver(apns_client, POLICY, target, look_then_pause)

    assert delivery.outcome == outcome
    assert looks[0] is Standing.GO and len(looks) == 2
    assert await sim.pushes() == []


async def test_a_request_soon_after_its_look_needs_no_second_one(
    engine: AsyncEngine, apns_client: ApnsClient, sim: PushSim, db: asyncpg.Connection
) -> None:
    """The usual case costs nothing more: one look, one request (with the look kept as long as
    in production: the first request also opens the connection)."""
    target, last_look = await _claimed(engine, db, "worker/1#1")
    looks = 0

    async def look() -> Standing:
        nonlocal looks
        looks += 1
        return await last_look.look(target.live_activity_id)

    delivery = await _deliver(apns_client, FAST_POLICY, target, look)

    assert (delivery.outcome, looks) == ("sent", 1)
    assert len(await sim.pushes()) == 1
