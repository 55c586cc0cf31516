"""A push-to-start left in doubt by a killed fan-out attempt is sent again once its grace is over.

The soak of 2026-12-02 (seed 8): a start fan-out claimed its followers' push-to-starts and its
worker was SIGKILLed as it sent them. The retry found the claims of a dead attempt and marked
them `in_doubt`, and, a start being an alert, nothing ever sent them again: 107 followers of one
cricket match (and 21 of desk matches) had no Live Activity for the whole match. A phone that got
the start reports its activity's token within seconds; one still silent after
`START_DOUBT_GRACE_S` gets the start again, and a phone that did report is never sent a second.
"""

from __future__ import annotations

from collections import Counter

import asyncpg
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.client import Client

from activities.push.apns import ApnsClient
from activities.push.fanout import FanoutConfig
from activities.push.store import START_DOUBT_GRACE_S, PushStore
from domain.pushes import LiveState, PushInput
from scoreline.devices.store import report_activity_token
from tests.push import seed
from tests.push.simulator import PushSim
from tests.push.workflow import push_worker, run_push

FOLLOWERS = 6
KICKOFF = PushInput(
    fixture_id=seed.FIXTURE_ID,
    event_key="kickoff",
    kind="start",
    priority=10,
    alert=True,
    state=LiveState(state="live_first_half", minute=1, version=1),
    timestamp=1_790_000_000,
)


async def _claimed_by_an_attempt_that_died(engine: AsyncEngine) -> None:
    """What the SIGKILLed attempt left: every follower's start claimed and its request begun (the
    last look marked it), no answer written."""
    store = PushStore(engine, KICKOFF, "sandbox")
    batch = await store.load(store.first_cursor, limit=100)
    claimed = (await store.claim(batch.targets, [], "killed-run/1#1", state={"version": 1})).mine
    assert len(claimed) == FOLLOWERS
    marks = await store.mark_sending("killed-run/1#1", [target.live_activity_id for target in claimed])
    assert marks is not None and marks.marked == {target.live_activity_id for target in claimed}


async def _grace_passes(db: asyncpg.Connection) -> None:
    """Date the activities' last change and the starts' requests back past the grace."""
    await db.execute(
        "UPDATE live_activity SET updated_at = updated_at - make_interval(secs => $1)",
        START_DOUBT_GRACE_S + 1,
    )
    await _requests_dated_back(db, START_DOUBT_GRACE_S + 1)


async def _requests_dated_back(db: asyncpg.Connection, seconds: float) -> None:
    """Move the in-doubt claims' `sending_at` (when the last look let their request go) back."""
    await db.execute(
        """UPDATE effect_log SET outcome = jsonb_set(outcome, '{claim,sending_at}',
            to_jsonb(CAST(outcome->'claim'->>'sending_at' AS float8) - $1))
        WHERE outcome->>'state' = 'in_doubt'""",
        seconds,
    )


async def test_a_start_in_doubt_is_sent_again_to_a_follower_whose_activity_never_came(
    temporal_client: Client,
    task_queue: str,
    engine: AsyncEngine,
    apns_client: ApnsClient,
    fanout_config: FanoutConfig,
    sim: PushSim,
    db: asyncpg.Connection,
) -> None:
    await seed.fixture(db)
    followers = await seed.followers(db, FOLLOWERS)
    await _claimed_by_an_attempt_that_died(engine)

    async with push_worker(temporal_client, task_queue, engine, apns_client, fanout_config):
        doubted = await run_push(temporal_client, task_queue, KICKOFF)
        # Within the grace nothing goes out, and the match is marked for the sweep to walk again.
        assert (doubted.sent, doubted.in_doubt) == (0, FOLLOWERS)
        assert await sim.pushes() == []
        assert (
            await db.fetchval("SELECT count(*) FROM followers_waiting WHERE fixture_id = $1", seed.FIXTURE_ID)
            == 1
        )

        # One phone did get the start before the kill: it reported its activity's token.
        reported = followers[0]
        await report_activity_token(
            engine, reported.device_id, seed.FIXTURE_ID, seed.apns_token(), generation=1
        )
        await _grace_passes(db)
        resent = await run_push(temporal_client, task_queue, KICKOFF)
        again = await run_push(temporal_client, task_queue, KICKOFF)

    starts = Counter(p["token"] for p in await sim.pushes() if p["status"] == 200)
    assert starts == {f.push_to_start_token: 1 for f in followers[1:]}
    assert (resent.sent, resent.in_doubt) == (FOLLOWERS - 1, 1)
    assert again == resent
    outcomes = await db.fetch("SELECT target, outcome->>'state' AS state FROM effect_log")
    assert Counter(row["state"] for row in outcomes) == {"sent": FOLLOWERS - 1, "in_doubt": 1}


async def test_the_grace_of_a_start_in_doubt_counts_from_its_request_not_its_claim(
    temporal_client: Client,
    task_queue: str,
    engine: AsyncEngine,
    apns_client: ApnsClient,
    fanout_config: FanoutConfig,
    sim: PushSim,
    db: asyncpg.Connection,
) -> None:
    """The soak of 2026-12-03 (seed 17, second run): under faults a start went out 23 s after
    its claim, its worker was SIGKILLed right after, and the grace, counted from the claim (the
    activities' last change), ran out 37 s after the phones got it: four phones whose reports
    were held up by a Postgres restart got the start twice. Counted from the request, a start
    sent less than the grace ago is still waited for."""
    await seed.fixture(db)
    await seed.followers(db, FOLLOWERS)
    await _claimed_by_an_attempt_that_died(engine)
    # Claimed (the activities' last change) long ago; the request went out just now.
    await db.execute(
        "UPDATE live_activity SET updated_at = updated_at - make_interval(secs => $1)",
        START_DOUBT_GRACE_S + 1,
    )

    async with push_worker(temporal_client, task_queue, engine, apns_client, fanout_config):
        waiting = await run_push(temporal_client, task_queue, KICKOFF)
        assert (waiting.sent, waiting.in_doubt) == (0, FOLLOWERS)
        assert await sim.pushes() == []

        await _requests_dated_back(db, START_DOUBT_GRACE_S)
        resent = await run_push(temporal_client, task_queue, KICKOFF)

    assert (resent.sent, resent.in_doubt) == (FOLLOWERS, 0)
    assert len([p for p in await sim.pushes() if p["status"] == 200]) == FOLLOWERS
