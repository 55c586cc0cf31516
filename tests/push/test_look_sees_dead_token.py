"""The last look refuses a token Postgres switched off after the fan-out read its targets.

The soak of 2026-12-02 (seed 16): a phone followed two fixtures. Fixture 16's push-to-start got
a 410 on worker 2, which wrote it to Postgres just before Postgres restarted; Redis was down, so
the other workers never heard of the death. Worker 1's start fan-out of fixture 12 had read the
same phone's token before that commit, waited out the restart, and sent it a push-to-start 15 s
after its 410. The look before each request now also asks whether the token is still live.
"""

from __future__ import annotations

import asyncio
from functools import partial

import asyncpg
from sqlalchemy.ext.asyncio import AsyncEngine

from activities.push.apns import ApnsClient
from activities.push.delivery import Delivery, Sender
from activities.push.last_look import LastLook, Marks
from activities.push.limiter import AdaptiveLimit
from activities.push.payloads import FixtureNames, build, variants
from activities.push.store import PushStore, Target
from domain.moments import KeyMoment
from tests.push import seed
from tests.push.conftest import FAST_POLICY
from tests.push.simulator import PushSim
from tests.push.test_fanout import push
from tests.push.test_start_in_doubt import KICKOFF

CLAIMANT = "lane-1/1#1"
GOAL = push(version=3, priority=10, alert=True, moment=KeyMoment(kind="goal", side="home", minute=23))
BODIES = variants(build(KICKOFF, FixtureNames(seed.HOME, seed.AWAY, "Premier League"), seed.FIXTURE_ID))


async def _deliver_all(store: PushStore, targets: list[Target], apns_client: ApnsClient) -> list[Delivery]:
    """Each target through a `Sender` whose look is the store's, as a fan-out sends them."""
    sender = Sender(apns_client, FAST_POLICY, AdaptiveLimit(10), asyncio.Event(), kind="start")
    last_look = LastLook(partial(store.mark_sending, CLAIMANT), partial(store.unmark_sending, CLAIMANT))
    return list(
        await asyncio.gather(
            *(
                sender.deliver(
                    target.token,
                    BODIES,
                    priority=10,
                    expiration=KICKOFF.timestamp + 900,
                    resend_if_unknown=False,
                    look=partial(last_look.look, target.live_activity_id),
                    read_at=target.read_at,
                )
                for target in targets
            )
        )
    )


async def test_a_push_to_start_whose_token_another_worker_switched_off_is_not_sent(
    engine: AsyncEngine, apns_client: ApnsClient, sim: PushSim, db: asyncpg.Connection
) -> None:
    """Before the fix the look marked the claim and the start went to the dead token."""
    await seed.fixture(db)
    followers = await seed.followers(db, 3)
    store = PushStore(engine, KICKOFF, "sandbox")
    batch = await store.load(store.first_cursor, limit=100)
    claimed = (await store.claim(batch.targets, [], CLAIMANT, state={"version": 1})).mine
    dead = followers[0]
    # Another fixture's fan-out, on another worker, settles this token's 410.
    await db.execute("UPDATE device SET push_to_start_active = false WHERE id = $1", dead.device_id)
    stamp_before = await db.fetchval("SELECT updated_at FROM device WHERE id = $1", dead.device_id)

    deliveries = await _deliver_all(store, claimed, apns_client)
    await store.settle(list(zip(claimed, deliveries, strict=True)), CLAIMANT, trace_id=None)

    sent_to = {p["token"] for p in await sim.pushes()}
    assert sent_to == {f.push_to_start_token for f in followers[1:]}
    by_device = {t.device_id: d for t, d in zip(claimed, deliveries, strict=True)}
    assert (by_device[dead.device_id].outcome, by_device[dead.device_id].attempts) == ("dead", ())
    states = await db.fetch(
        """SELECT la.device_id, e.outcome->>'state' AS state, la.status
        FROM effect_log e JOIN live_activity la ON la.id = e.target::bigint
        WHERE e.fixture_id = $1 AND e.event_key = 'kickoff'""",
        seed.FIXTURE_ID,
    )
    assert {(r["device_id"] == dead.device_id, r["state"], r["status"]) for r in states} == {
        (True, "dead", "failed"),
        (False, "sent", "pending"),
    }
    assert await db.fetchval("SELECT updated_at FROM device WHERE id = $1", dead.device_id) == stamp_before, (
        "the token's own settlement stands: nothing is written to the device again"
    )


async def test_the_look_answers_gone_for_an_update_token_switched_off(
    engine: AsyncEngine, db: asyncpg.Connection
) -> None:
    """An activity whose update token Postgres switched off since the read is gone, not marked."""
    await seed.fixture(db)
    running = await seed.running_activities(db, 3)
    store = PushStore(engine, GOAL, "sandbox")
    batch = await store.load(store.first_cursor, limit=100)
    claimed = (await store.claim(batch.targets, [], CLAIMANT, state={"version": 3})).mine
    switched_off = running[0].live_activity_id
    await db.execute(
        "UPDATE live_activity SET push_token_active = false, status = 'ended' WHERE id = $1", switched_off
    )

    marks = await store.mark_sending(CLAIMANT, [target.live_activity_id for target in claimed])

    others = {activity.live_activity_id for activity in running[1:]}
    assert marks == Marks(marked=others, gone={switched_off})
