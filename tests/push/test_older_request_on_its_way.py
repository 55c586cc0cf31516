"""A newer push claimed on one worker waits for an older push's request another worker has let go.

The soak of 2026-12-05 (seed 18, CI at 699bf2c): 39 phones of a desk match got a routine update
stamped 12 s before an update they had already been sent. The routine update's last look had
passed (still the newest claimed), then its requests were slow to leave their busy worker; the
other worker meanwhile claimed the newer update, looked and sent it. A look only knew of newer
claims: nothing told the newer push that an older request to the same activity was on its way
(`ClaimedHere` does, but only inside one worker).

Here two stores, senders and APNs clients stand for the two workers, and the "slow worker" is the
time the older delivery spends between its look and its request.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from functools import partial

import asyncpg
import pytest
import pytest_asyncio
from sqlalchemy.ext.asyncio import AsyncEngine

from activities.push.apns import ApnsClient, ApnsConfig
from activities.push.delivery import Delivery, Sender
from activities.push.last_look import LastLook, Standing
from activities.push.limiter import AdaptiveLimit
from activities.push.payloads import FixtureNames, build, variants
from activities.push.store import PushStore, Target
from domain.pushes import PushInput
from scoreline.settings import Settings
from tests.push import seed
from tests.push.conftest import FAST_POLICY
from tests.push.simulator import PushSim
from tests.push.test_fanout import NOW, push

pytestmark = pytest.mark.timeout(60)

ROUTINE = push(version=5, routine=True, timestamp=NOW)
NEWER = push(version=6, timestamp=NOW + 12)
SLOW_S = 0.8
"""How long the older request takes to leave after its look: within `SendPolicy.look_kept`."""
FENCE_S = 1.5
"""How long a mark nobody takes off holds a newer push back, in the test of that."""
LONG_FENCE_S = 30.0
"""Longer than any test: its marks go only when taken off."""


class Worker:
    """One push's store, last look and sender, as one worker runs them."""

    def __init__(
        self, engine: AsyncEngine, client: ApnsClient, push: PushInput, name: str, fence: float = LONG_FENCE_S
    ) -> None:
        self.push = push
        self.claimant = f"{name}/1#1"
        self.store = PushStore(engine, push, "sandbox", sending_fence=fence)
        self.last_look = LastLook(
            partial(self.store.mark_sending, self.claimant), partial(self.store.unmark_sending, self.claimant)
        )
        self.sender = Sender(client, FAST_POLICY, AdaptiveLimit(10), asyncio.Event(), kind="update")
        self.looks: list[Standing] = []

    async def claim(self) -> Target:
        batch = await self.store.load(self.store.first_cursor, limit=10)
        (target,) = (await self.store.claim(batch.targets, [], self.claimant, {"version": 0})).mine
        return target

    async def look(self, target: Target) -> Standing:
        standing = await self.last_look.look(target.live_activity_id)
        self.looks.append(standing)
        return standing

    async def deliver(
        self, target: Target, look: Callable[[], Awaitable[Standing]] | None = None
    ) -> Delivery:
        """Send to `target` after `look` (by default, this worker's), then settle it as the fan-out does."""
        bodies = variants(build(self.push, FixtureNames(seed.HOME, seed.AWAY, None), seed.FIXTURE_ID))
        delivery = await self.sender.deliver(
            target.token,
            bodies,
            priority=self.push.priority,
            expiration=self.push.timestamp + 900,
            resend_if_unknown=self.push.repeatable,
            look=look or partial(self.look, target),
            unmark=partial(self.last_look.unmark, target.live_activity_id),
        )
        await self.store.settle([(target, delivery)], self.claimant, None)
        return delivery


@pytest_asyncio.fixture
async def other_client(push_settings: Settings) -> AsyncIterator[ApnsClient]:
    """The second worker's own APNs connections."""
    client = ApnsClient(ApnsConfig.from_settings(push_settings))
    try:
        yield client
    finally:
        await client.aclose()


async def _timestamps_sent(sim: PushSim) -> list[int]:
    return [sent["payload"]["aps"]["timestamp"] for sent in await sim.pushes()]


async def test_a_newer_push_waits_for_the_older_request_another_worker_let_go(
    engine: AsyncEngine,
    apns_client: ApnsClient,
    other_client: ApnsClient,
    sim: PushSim,
    db: asyncpg.Connection,
) -> None:
    """The phone gets the routine update, then the newer one: the newer push's look finds the
    older one on its way (`behind`) until its answer is settled. Before the fix the newer update
    went out during the older request's delay, and the older one reached the phone after it."""
    await seed.fixture(db)
    await seed.running_activities(db, 1)
    slow = Worker(engine, apns_client, ROUTINE, "slow-worker")
    other = Worker(engine, other_client, NEWER, "other-worker")
    target = await slow.claim()
    newer: asyncio.Task[Delivery] | None = None

    async def look_then_stall() -> Standing:
        nonlocal newer
        standing = await slow.look(target)
        if newer is None:
            newer = asyncio.create_task(other.deliver(await other.claim()))
            await asyncio.sleep(SLOW_S)
        return standing

    routine = await slow.deliver(target, look_then_stall)
    assert newer is not None
    newest = await newer

    assert (routine.outcome, newest.outcome) == ("sent", "sent")
    assert await _timestamps_sent(sim) == [ROUTINE.timestamp, NEWER.timestamp]
    assert other.looks[0] is Standing.BEHIND and other.looks[-1] is Standing.GO


async def test_a_mark_nobody_takes_off_holds_a_newer_push_back_only_for_its_fence(
    engine: AsyncEngine,
    apns_client: ApnsClient,
    other_client: ApnsClient,
    sim: PushSim,
    db: asyncpg.Connection,
) -> None:
    """The older push's worker was SIGKILLed right after its look: no answer, no settlement. The
    newer push goes once the mark has lapsed, and is the only one sent."""
    await seed.fixture(db)
    await seed.running_activities(db, 1)
    killed = Worker(engine, apns_client, ROUTINE, "killed-worker", FENCE_S)
    other = Worker(engine, other_client, NEWER, "other-worker", FENCE_S)
    target = await killed.claim()
    assert await killed.look(target) is Standing.GO
    let_go_at = time.monotonic()

    newest = await other.deliver(await other.claim())

    assert newest.outcome == "sent"
    assert time.monotonic() - let_go_at >= FENCE_S
    assert other.looks[0] is Standing.BEHIND and other.looks[-1] is Standing.GO
    assert await _timestamps_sent(sim) == [NEWER.timestamp]


async def test_an_answer_that_did_not_deliver_lets_the_newer_push_go_at_once(
    engine: AsyncEngine,
    apns_client: ApnsClient,
    other_client: ApnsClient,
    sim: PushSim,
    db: asyncpg.Connection,
) -> None:
    """Unmarked after its answer (APNs 500, the older push backs off), the older push no longer
    holds the activity: the newer push's next look lets it go, long before the mark would lapse."""
    await seed.fixture(db)
    await seed.running_activities(db, 1)
    older = Worker(engine, apns_client, ROUTINE, "older-worker")
    other = Worker(engine, other_client, NEWER, "other-worker")
    target = await older.claim()
    assert await older.look(target) is Standing.GO
    mine = await other.claim()
    assert await other.look(mine) is Standing.BEHIND

    await older.last_look.unmark(target.live_activity_id)

    assert await other.look(mine) is Standing.GO
    assert await older.look(target) is Standing.OVERTAKEN


async def test_a_settlement_leaves_the_mark_of_another_attempt_still_sending(
    engine: AsyncEngine, apns_client: ApnsClient, db: asyncpg.Connection
) -> None:
    """Two attempts of one push (the first paused past its heartbeat timeout, the retry took its
    claim over and let its own request go): the first one's settlement took the activity's mark
    off by the push's timestamp alone, and a newer push went while the retry's request was on
    its way. The mark stays while another attempt holds the claim marked as being sent."""
    await seed.fixture(db)
    await seed.running_activities(db, 1)
    retry = Worker(engine, apns_client, ROUTINE, "retry")
    newer = Worker(engine, apns_client, NEWER, "other-worker")
    target = await retry.claim()
    assert await retry.look(target) is Standing.GO

    await retry.store.lift_marks("paused-first-attempt/1#1", [target.live_activity_id])
    mine = await newer.claim()
    assert await newer.look(mine) is Standing.BEHIND

    await retry.store.lift_marks(retry.claimant, [target.live_activity_id])
    assert await newer.look(mine) is Standing.GO
