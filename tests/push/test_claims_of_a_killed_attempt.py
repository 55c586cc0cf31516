"""Claims a SIGKILLed fan-out attempt never began sending are sent by the next; begun ones stay in doubt.

The soak of 2026-12-02 (seed 14): a worker slowed down by a Redis outage claimed a goal's alerts
for 89 phones (and 9 followers' push-to-starts) and was SIGKILLed before it sent one. The retry
found the claims of an attempt that died and, an alert never being sent twice, marked them all
`in_doubt`: the goal never reached those phones. Each request's last look now marks its claim as
being sent first (`PushStore.mark_sending`): an unmarked claim never reached APNs and is taken over.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import AsyncIterator, Coroutine
from dataclasses import replace
from functools import partial
from typing import Any

import asyncpg
import pytest_asyncio
from sqlalchemy.ext.asyncio import AsyncEngine
from structlog.testing import capture_logs
from temporalio.client import Client

from activities.push.apns import ApnsClient, ApnsConfig
from activities.push.delivery import Delivery, Sender, SendPolicy
from activities.push.fanout import FanoutConfig
from activities.push.last_look import LastLook, Marks
from activities.push.limiter import AdaptiveLimit
from activities.push.payloads import FixtureNames, build, variants
from activities.push.store import PushStore, Target
from domain.moments import KeyMoment
from scoreline.db.engine import create_engine
from scoreline.db.urls import asyncpg_dsn
from scoreline.settings import Settings
from tests.push import seed
from tests.push.outage import cut_off_engine
from tests.push.simulator import PushSim
from tests.push.test_fanout import push
from tests.push.workflow import push_worker, run_push
from tests.support.waiting import eventually

GOAL = push(version=3, priority=10, alert=True, moment=KeyMoment(kind="goal", side="home", minute=23))
RESULT = push("end", version=9, key="full_time", priority=10, alert=True)
GOAL_BODIES = variants(build(GOAL, FixtureNames(seed.HOME, seed.AWAY, "Premier League"), seed.FIXTURE_ID))
KILLED = "killed-run/1#1"
DEVICES = 6
BEGUN = 2
"""Of the killed attempt's claims, those whose request had begun (marked by its last look)."""


@pytest_asyncio.fixture
async def unanswering_apns(push_settings: Settings) -> AsyncIterator[ApnsClient]:
    """An APNs client whose server accepts the TCP connection and never answers the TLS handshake:
    a request waits for its connection, before its last check, until `CONNECT_TIMEOUT_S`."""
    accepted: list[asyncio.StreamWriter] = []
    silent = await asyncio.start_server(lambda _, writer: accepted.append(writer), "127.0.0.1", 0)
    port = silent.sockets[0].getsockname()[1]
    client = ApnsClient(replace(ApnsConfig.from_settings(push_settings), host="127.0.0.1", port=port))
    try:
        yield client
    finally:
        await client.aclose()
        for writer in accepted:
            writer.close()
        silent.close()
        await silent.wait_closed()


_MARKED = """SELECT count(*) FROM effect_log WHERE fixture_id = $1
    AND outcome ? 'sending' AND (outcome->>'sending_at')::float8 > extract(epoch FROM now()) - 60"""


async def test_an_alert_claimed_by_a_killed_attempt_before_its_requests_began_is_sent_by_the_next(
    temporal_client: Client,
    task_queue: str,
    engine: AsyncEngine,
    apns_client: ApnsClient,
    fanout_config: FanoutConfig,
    sim: PushSim,
    db: asyncpg.Connection,
) -> None:
    """Four phones never reached get the goal once; the two whose request may have gone out are
    in doubt and get nothing (at most once). Before the fix all six were in doubt."""
    await seed.fixture(db)
    running = await seed.running_activities(db, DEVICES)
    store = PushStore(engine, GOAL, "sandbox")
    batch = await store.load(store.first_cursor, limit=100)
    claimed = (await store.claim(batch.targets, [], KILLED, state={"version": 3})).mine
    begun = {target.live_activity_id for target in claimed[:BEGUN]}
    assert await store.mark_sending(KILLED, sorted(begun)) == Marks(marked=begun)
    assert await db.fetchval(_MARKED, seed.FIXTURE_ID) == BEGUN, "marked, and when (`sending_at`)"

    async with push_worker(temporal_client, task_queue, engine, apns_client, fanout_config):
        result = await run_push(temporal_client, task_queue, GOAL)

    alerted = Counter(p["token"] for p in await sim.pushes() if p["status"] == 200)
    assert alerted == {a.push_token: 1 for a in running if a.live_activity_id not in begun}
    assert (result.sent, result.in_doubt) == (DEVICES - BEGUN, BEGUN)


async def test_an_end_whose_worker_was_killed_as_it_began_sending_is_sent_again_without_its_alert(
    temporal_client: Client,
    task_queue: str,
    engine: AsyncEngine,
    apns_client: ApnsClient,
    fanout_config: FanoutConfig,
    sim: PushSim,
    db: asyncpg.Connection,
) -> None:
    """The soak of 2026-12-06 (seed 22): a worker marked 1,053 ends (each with its "Result" alert)
    as being sent and was SIGKILLed 0.1 s later. An alert never going twice, the retry left them
    in doubt and 132 activities stayed on the lock screen. An end in doubt now goes again without
    its alert (a phone that got the first drops the second, and shows one banner at most); before
    the fix the two phones whose requests had begun got no end at all."""
    await seed.fixture(db)
    running = await seed.running_activities(db, DEVICES)
    store = PushStore(engine, RESULT, "sandbox")
    batch = await store.load(store.first_cursor, limit=100)
    claimed = (await store.claim(batch.targets, [], KILLED, state={"version": 9})).mine
    begun = {target.live_activity_id for target in claimed[:BEGUN]}
    assert await store.mark_sending(KILLED, sorted(begun)) == Marks(marked=begun)

    async with push_worker(temporal_client, task_queue, engine, apns_client, fanout_config):
        result = await run_push(temporal_client, task_queue, RESULT)

    await _one_end_each_alerted_unless_begun(sim, running, begun)
    assert (result.sent, result.in_doubt) == (DEVICES, 0)


async def test_an_end_taken_over_quietly_stays_quiet_when_that_attempt_is_killed_too(
    temporal_client: Client,
    task_queue: str,
    engine: AsyncEngine,
    apns_client: ApnsClient,
    fanout_config: FanoutConfig,
    sim: PushSim,
    db: asyncpg.Connection,
) -> None:
    """The attempt that took the ends over quietly is killed before its own look: its claims are
    unmarked, but the ends may still have reached the phones on the first attempt's requests, so
    the next attempt sends them without the alert too."""
    await seed.fixture(db)
    running = await seed.running_activities(db, DEVICES)
    store = PushStore(engine, RESULT, "sandbox")
    batch = await store.load(store.first_cursor, limit=100)
    claimed = (await store.claim(batch.targets, [], KILLED, state={"version": 9})).mine
    begun = {target.live_activity_id for target in claimed[:BEGUN]}
    assert await store.mark_sending(KILLED, sorted(begun)) == Marks(marked=begun)
    impatient = PushStore(engine, RESULT, "sandbox", claimant_grace=0.0)
    taken = await impatient.claim(batch.targets, [], "killed-too-run/1#1", state={"version": 9})
    assert {t.live_activity_id for t in taken.mine} == {a.live_activity_id for a in running}
    assert {t.key for t in taken.mine if t.live_activity_id in begun} == taken.quiet

    async with push_worker(temporal_client, task_queue, engine, apns_client, fanout_config):
        result = await run_push(temporal_client, task_queue, RESULT)

    await _one_end_each_alerted_unless_begun(sim, running, begun)
    assert (result.sent, result.in_doubt) == (DEVICES, 0)


async def test_an_end_taken_over_quietly_and_released_stays_quiet(
    temporal_client: Client,
    task_queue: str,
    engine: AsyncEngine,
    apns_client: ApnsClient,
    fanout_config: FanoutConfig,
    sim: PushSim,
    db: asyncpg.Connection,
) -> None:
    """The attempt that took the ends over quietly releases them (its last look failed, or it was
    stopped before their requests) and closes the match's activities. Releasing deleted the claims
    with their quiet flag, so the next attempt claimed them afresh and sent the ends whose first
    request may have reached the phone with their alert again: a second result banner. Released
    quiet claims are now kept for the next attempt to take over quietly, and left running by the
    close."""
    await seed.fixture(db)
    running = await seed.running_activities(db, DEVICES)
    store = PushStore(engine, RESULT, "sandbox")
    batch = await store.load(store.first_cursor, limit=100)
    claimed = (await store.claim(batch.targets, [], KILLED, state={"version": 9})).mine
    begun = {target.live_activity_id for target in claimed[:BEGUN]}
    assert await store.mark_sending(KILLED, sorted(begun)) == Marks(marked=begun)
    impatient = PushStore(engine, RESULT, "sandbox", claimant_grace=0.0)
    releasing = "releasing-run/1#1"
    taken = await impatient.claim(batch.targets, [], releasing, state={"version": 9})
    assert {t.key for t in taken.mine if t.live_activity_id in begun} == taken.quiet
    stopped = [(target, Delivery("released", (), reason="stopping")) for target in taken.mine]
    await impatient.settle(stopped, releasing, trace_id=None)
    await impatient.close_remaining(claimed_too=True)

    async with push_worker(temporal_client, task_queue, engine, apns_client, fanout_config):
        result = await run_push(temporal_client, task_queue, RESULT)

    await _one_end_each_alerted_unless_begun(sim, running, begun)
    assert (result.sent, result.in_doubt) == (DEVICES, 0)


async def test_a_released_update_taken_over_from_a_killed_attempt_is_not_kept(
    engine: AsyncEngine, db: asyncpg.Connection
) -> None:
    """Only an end with its alert keeps a released quiet claim. An update taken over from a marked
    claim is quiet too (it goes as it is anyway); kept when released, a walk that then found it
    stale would write it in doubt, and a push never walked again would count it in doubt for good."""
    await seed.fixture(db)
    await seed.running_activities(db, DEVICES)
    update = push(version=4)
    store = PushStore(engine, update, "sandbox")
    batch = await store.load(store.first_cursor, limit=100)
    claimed = (await store.claim(batch.targets, [], KILLED, state={"version": 4})).mine
    begun = {target.live_activity_id for target in claimed[:BEGUN]}
    assert await store.mark_sending(KILLED, sorted(begun)) == Marks(marked=begun)
    releasing = "releasing-run/1#1"
    taken = await store.claim(batch.targets, [], releasing, state={"version": 4})
    assert len(taken.mine) == DEVICES
    stopped = [(target, Delivery("released", (), reason="stopping")) for target in taken.mine]
    await store.settle(stopped, releasing, trace_id=None)

    assert await db.fetchval("SELECT count(*) FROM effect_log WHERE fixture_id = $1", seed.FIXTURE_ID) == 0
    assert (await store.totals(deferred=0)).in_doubt == 0


async def test_an_unmark_after_an_answer_that_did_not_deliver_does_not_wait_for_the_activity_lock(
    engine: AsyncEngine, db: asyncpg.Connection, database_url: str
) -> None:
    """The 30-minute soak's seed 24: 25 goal alerts APNs answered 500 stayed marked as being sent,
    their worker SIGKILLed 1.6 s after the answer; the retry left them in doubt and the goal never
    reached those phones. The claims' unmark shared its transaction with the activities' and so
    waited for any lock on the activities' rows (another push's claim, look or settlement), and
    the fan-out's next unmarks queued behind it. The claims' marks now come off first, on their
    own, and the activity's waits for its row only briefly, its mark left to lapse; before the fix
    this claim stayed marked for as long as the row was locked."""
    await seed.fixture(db)
    (running,) = await seed.running_activities(db, 1)
    store, claimed = await _marked_goal(engine, db)
    async with _row_locked(database_url, running.live_activity_id):
        with capture_logs() as logs:
            await asyncio.wait_for(store.unmark_sending(KILLED, [claimed.live_activity_id]), timeout=5.0)
        assert await db.fetchval(_MARKED, seed.FIXTURE_ID) == 0, "the claim is unmarked"
    assert not [entry for entry in logs if entry["log_level"] == "error"]
    assert await _activity_marked(db, running.live_activity_id) is True, "left to lapse"


async def test_an_unmark_waiting_for_the_activity_leaves_a_mark_made_since_by_another_attempt(
    engine: AsyncEngine, db: asyncpg.Connection, database_url: str
) -> None:
    """Once the claim is unmarked, another attempt of the push may take it over and mark the
    activity for its own request while this unmark's write waits for the activity's row. The
    write's check of the claim sees the claim as it was when the write began, so it took the new
    mark off, and a newer push could overtake that request; the rows are now locked before the
    claims are checked, and the mark stays."""
    await seed.fixture(db)
    (running,) = await seed.running_activities(db, 1)
    store, claimed = await _marked_goal(engine, db)
    unmark = store.unmark_sending(KILLED, [claimed.live_activity_id])
    await _taken_over_while_it_waits_for_the_row(unmark, db, database_url, claimed.live_activity_id)
    assert await _activity_marked(db, running.live_activity_id) is True, (
        "the next attempt's request is on its way"
    )


async def test_a_slow_unmark_says_how_long_it_waited_for_a_connection(
    db: asyncpg.Connection, database_url: str
) -> None:
    """The 30-minute soak's seed 25 logged 333 unmarks slower than half a second, their claims'
    part up to 18.5 s, and could not say whether the time went to the pool or to Postgres: the
    slow unmark's line now says when its claims' last try held its connection."""
    await seed.fixture(db)
    await seed.running_activities(db, 1)
    small = create_engine(database_url, pool_size=1)
    try:
        store, claimed = await _marked_goal(small, db)
        with capture_logs() as logs:
            async with small.connect(), small.connect():  # the pool (one, and one more) is taken
                unmarking = asyncio.create_task(store.unmark_sending(KILLED, [claimed.live_activity_id]))
                await asyncio.sleep(0.8)
            await asyncio.wait_for(unmarking, timeout=5.0)
    finally:
        await small.dispose()
    (slow,) = [entry for entry in logs if entry["event"] == "push.unmark_slow"]
    assert slow["connected_tries"] == 1
    assert slow["connected_s"] >= 0.7
    assert slow["claims_s"] >= slow["connected_s"]


async def test_an_unmark_does_not_wait_for_the_fanouts_pool(
    engine: AsyncEngine, db: asyncpg.Connection, database_url: str
) -> None:
    """The 30-minute soak's seed 28: 82% of a slow unmark's claims part (median) was waiting
    for a connection of the fan-outs' pool, busy with loads, claims and settlements (seed 24 lost
    25 alerts to an unmark that had not committed 1.6 s after its answer). Unmarks now have a
    pool of their own: with the fan-outs' pool taken, the claim and the activity are unmarked
    at once."""
    await seed.fixture(db)
    (running,) = await seed.running_activities(db, 1)
    busy = create_engine(database_url, pool_size=1)
    try:
        _, claimed = await _marked_goal(engine, db)
        store = PushStore(busy, GOAL, "sandbox", urgent=engine)
        async with busy.connect(), busy.connect():  # the fan-outs' pool (one, and one more) is taken
            await asyncio.wait_for(store.unmark_sending(KILLED, [claimed.live_activity_id]), timeout=0.5)
    finally:
        await busy.dispose()
    assert await db.fetchval(_MARKED, seed.FIXTURE_ID) == 0
    assert await _activity_marked(db, running.live_activity_id) is False


async def test_a_settlement_waiting_for_the_activity_leaves_a_mark_made_since_by_another_attempt(
    engine: AsyncEngine, db: asyncpg.Connection, database_url: str
) -> None:
    """A review of the unmark's fix (f61ec49): the settlement's lifting of the activity's marks
    had the same hole. A claim the settlement released is taken over by the next attempt, which
    marks the activity for its own request, while the lift waits for the activity's row; the
    lift's check of the claims sees them as they were when it began, so it took the new mark
    off and a newer push could overtake that request. The rows are now locked before the claims
    are checked (a helper's review of a first fix by timestamp found it left a takeover begun
    before the settlement open)."""
    await seed.fixture(db)
    (running,) = await seed.running_activities(db, 1)
    store, claimed = await _marked_goal(engine, db)
    settle = store.settle([(claimed, Delivery(outcome="released", attempts=()))], KILLED, trace_id=None)
    await _taken_over_while_it_waits_for_the_row(settle, db, database_url, claimed.live_activity_id)
    assert await _activity_marked(db, running.live_activity_id) is True, (
        "the next attempt's request is on its way"
    )


async def test_an_unmark_while_postgres_is_out_of_reach_lands_once_it_is_back(
    engine: AsyncEngine, db: asyncpg.Connection, database_url: str
) -> None:
    """The 30-minute soak's seed 25: a goal's look lapsed, its requests never sent, during a 4 s
    Postgres restart; its unmark was tried once and failed, and the worker, SIGKILLed 1.7 s after
    Postgres came back, left 152 alerts in doubt that never reached their phones. The claims'
    unmark now waits the outage out (the connection cut here by a proxy) and lands soon after;
    before the fix it gave up at once and the claim stayed marked."""
    await seed.fixture(db)
    await seed.running_activities(db, 1)
    _, claimed = await _marked_goal(engine, db)
    async with cut_off_engine(database_url) as (proxy, cut_off):
        await proxy.cut()
        unmarking = asyncio.create_task(
            PushStore(cut_off, GOAL, "sandbox").unmark_sending(KILLED, [claimed.live_activity_id])
        )
        await asyncio.sleep(1.5)
        assert not unmarking.done(), "the unmark waits for Postgres"
        await proxy.restore()
        async with asyncio.timeout(10):
            await unmarking
    assert await db.fetchval(_MARKED, seed.FIXTURE_ID) == 0


@contextlib.asynccontextmanager
async def _row_locked(database_url: str, live_activity_id: int) -> AsyncIterator[asyncpg.Connection]:
    """A transaction of its own holding the activity's row lock, as another push's claim, look or
    settlement does; committed when the block ends."""
    locker = await asyncpg.connect(asyncpg_dsn(database_url))
    try:
        async with locker.transaction():
            await locker.execute("SELECT 1 FROM live_activity WHERE id = $1 FOR UPDATE", live_activity_id)
            yield locker
    finally:
        await locker.close()


async def _taken_over_while_it_waits_for_the_row(
    write: Coroutine[Any, Any, None], db: asyncpg.Connection, database_url: str, live_activity_id: int
) -> None:
    """Run `write` (one taking this attempt's marks off the activity) while another transaction
    holds the activity's row, and once it waits for the row, have the next attempt take the
    claim over and mark it and the activity in that transaction; then let `write` finish."""
    async with _row_locked(database_url, live_activity_id) as locker:
        writing = asyncio.create_task(write)
        await eventually(partial(_waits_for_the_row, db), within=3.0, every=0.005)
        await _taken_over_and_marked(locker, live_activity_id)
    await asyncio.wait_for(writing, timeout=5.0)


async def _waits_for_the_row(db: asyncpg.Connection) -> bool:
    """Whether a write of an activity's marks is waiting for the row's lock."""
    return bool(
        await db.fetchval(
            """SELECT count(*) FROM pg_stat_activity
            WHERE wait_event_type = 'Lock' AND query LIKE '%FROM live_activity%FOR NO KEY UPDATE%'"""
        )
    )


async def _taken_over_and_marked(locker: asyncpg.Connection, live_activity_id: int) -> None:
    """In the lock holder's transaction: the next attempt takes the claim over (or claims it
    afresh, a released one being deleted) and marks it and its activity as being sent, as its
    last look does."""
    await locker.execute(
        """INSERT INTO effect_log (fixture_id, event_key, effect, target, outcome)
        VALUES ($1, $2, $3, $4, jsonb_build_object('state', 'claimed', 'by', 'next-run/1#1',
            'sending', true, 'sending_at', extract(epoch FROM clock_timestamp())))
        ON CONFLICT (fixture_id, event_key, effect, target) DO UPDATE SET outcome = excluded.outcome""",
        seed.FIXTURE_ID,
        GOAL.event_key,
        GOAL.effect,
        str(live_activity_id),
    )
    await locker.execute(
        "UPDATE live_activity SET sending_at = clock_timestamp() WHERE id = $1", live_activity_id
    )


async def _activity_marked(db: asyncpg.Connection, live_activity_id: int) -> bool:
    """Whether the activity carries a push's mark (`live_activity.sending_at`)."""
    return bool(
        await db.fetchval("SELECT sending_at IS NOT NULL FROM live_activity WHERE id = $1", live_activity_id)
    )


async def _marked_goal(engine: AsyncEngine, db: asyncpg.Connection) -> tuple[PushStore, Target]:
    """The goal claimed by `KILLED` for the one running activity, its request marked as on its way."""
    store = PushStore(engine, GOAL, "sandbox")
    batch = await store.load(store.first_cursor, limit=100)
    (claimed,) = (await store.claim(batch.targets, [], KILLED, state={"version": 3})).mine
    assert await store.mark_sending(KILLED, [claimed.live_activity_id]) == Marks(
        marked={claimed.live_activity_id}
    )
    assert await db.fetchval(_MARKED, seed.FIXTURE_ID) == 1
    return store, claimed


async def _one_end_each_alerted_unless_begun(
    sim: PushSim, running: list[seed.RunningActivity], begun: set[int]
) -> None:
    """Every activity got one end; only those whose first request never began got its alert."""
    ends = [p for p in await sim.pushes() if p["status"] == 200 and p["payload"]["aps"]["event"] == "end"]
    assert Counter(p["token"] for p in ends) == {a.push_token: 1 for a in running}
    alerted = {p["token"] for p in ends if "alert" in p["payload"]["aps"]}
    assert alerted == {a.push_token for a in running if a.live_activity_id not in begun}


async def test_an_alert_whose_worker_is_killed_while_it_waits_out_a_429_is_sent_by_the_next(
    temporal_client: Client,
    task_queue: str,
    engine: AsyncEngine,
    apns_client: ApnsClient,
    fanout_config: FanoutConfig,
    sim: PushSim,
    db: asyncpg.Connection,
) -> None:
    """The soak of 2026-12-03 (seed 16): a worker was SIGKILLed while a goal's alerts for 74 phones
    waited out the backoff of an APNs 429 burst. Their claims were still marked as being sent,
    so the next attempt took them as in doubt and the goal never reached those phones. A claim
    whose request came back undelivered is unmarked before the wait; before the fix all three
    phones here got nothing."""
    await seed.fixture(db)
    running = await seed.running_activities(db, 3)
    store = PushStore(engine, GOAL, "sandbox")
    batch = await store.load(store.first_cursor, limit=100)
    claimed = (await store.claim(batch.targets, [], KILLED, state={"version": 3})).mine
    for target in claimed:
        await sim.fault(status=429, token=target.token)
    last_look = LastLook(partial(store.mark_sending, KILLED), partial(store.unmark_sending, KILLED))
    # The held wait after a 429: long enough to be killed in, short enough to keep the claim.
    policy = SendPolicy(throttle_backoff=1.5, longest_held_wait=2.0)
    sender = Sender(apns_client, policy, AdaptiveLimit(10), asyncio.Event(), kind="alert")
    waiting = [
        asyncio.create_task(
            sender.deliver(
                target.token,
                GOAL_BODIES,
                priority=10,
                expiration=GOAL.timestamp + 900,
                resend_if_unknown=False,
                look=partial(last_look.look, target.live_activity_id),
                unmark=partial(last_look.unmark, target.live_activity_id),
            )
        )
        for target in claimed
    ]
    async with asyncio.timeout(10):
        while len(await sim.pushes()) < len(claimed):
            await asyncio.sleep(0.02)
    await asyncio.sleep(0.2)  # each has taken its answer in and waits for its next try
    for task in waiting:  # the SIGKILL: nothing is settled
        task.cancel()
    await asyncio.gather(*waiting, return_exceptions=True)
    assert await db.fetchval(_MARKED, seed.FIXTURE_ID) == 0, "every mark taken off after the 429"

    async with push_worker(temporal_client, task_queue, engine, apns_client, fanout_config):
        result = await run_push(temporal_client, task_queue, GOAL)

    alerted = Counter(p["token"] for p in await sim.pushes() if p["status"] == 200)
    assert alerted == {activity.push_token: 1 for activity in running}
    assert (result.sent, result.in_doubt) == (3, 0)


async def test_a_resumed_attempt_whose_claims_were_taken_over_sends_nothing(
    engine: AsyncEngine, db: asyncpg.Connection
) -> None:
    """A worker paused past its heartbeat timeout resumes after the next attempt took its claims
    over: its last look finds them no longer its own, so nothing is sent twice."""
    await seed.fixture(db)
    await seed.running_activities(db, DEVICES)
    store = PushStore(engine, GOAL, "sandbox")
    batch = await store.load(store.first_cursor, limit=100)
    claimed = (await store.claim(batch.targets, [], KILLED, state={"version": 3})).mine
    await store.claim(batch.targets, [], "next-run/1#2", state={"version": 3})
    assert await store.mark_sending(KILLED, [target.live_activity_id for target in claimed]) == Marks(set())


async def test_a_look_whose_request_waits_for_its_connection_takes_its_mark_off_once_it_lapses(
    unanswering_apns: ApnsClient, engine: AsyncEngine, db: asyncpg.Connection
) -> None:
    """The soak of 2026-12-06 (seed 21): 342 goal alerts were marked as being sent 4.7 s before
    their worker was SIGKILLed, and none had left: a request waiting after its look (here for a
    TLS handshake the server never answers) kept its mark until it reached its last check, so the
    next attempt found them in doubt. The mark now comes off once the look lapses
    (`SendPolicy.look_kept`), the request still waiting; before the fix it stayed until the
    connection attempt timed out (10 s)."""
    await seed.fixture(db)
    (running,) = await seed.running_activities(db, 1)
    store = PushStore(engine, GOAL, "sandbox")
    batch = await store.load(store.first_cursor, limit=100)
    (target,) = (await store.claim(batch.targets, [], KILLED, state={"version": 3})).mine
    last_look = LastLook(partial(store.mark_sending, KILLED), partial(store.unmark_sending, KILLED))
    stopping = asyncio.Event()
    sender = Sender(unanswering_apns, SendPolicy(look_kept=0.5), AdaptiveLimit(10), stopping, kind="alert")
    delivering = asyncio.create_task(
        sender.deliver(
            target.token,
            GOAL_BODIES,
            priority=10,
            expiration=GOAL.timestamp + 900,
            resend_if_unknown=False,
            look=partial(last_look.look, target.live_activity_id),
            unmark=partial(last_look.unmark, target.live_activity_id),
        )
    )

    async def marks() -> int:
        claims = await db.fetchval(_MARKED, seed.FIXTURE_ID)
        activities = await db.fetchval(
            "SELECT count(*) FROM live_activity WHERE id = $1 AND sending_timestamp IS NOT NULL",
            running.live_activity_id,
        )
        return int(claims) + int(activities)

    try:
        await eventually(marks, within=5, every=0.01)

        async def unmarked() -> bool:
            return await marks() == 0

        await eventually(unmarked, within=3, every=0.05)
        assert not delivering.done(), "the request is still waiting for its connection"
    finally:
        stopping.set()
        delivering.cancel()
        await asyncio.gather(delivering, return_exceptions=True)


async def test_a_delivery_cancelled_before_its_request_is_released_and_one_on_its_way_stays_in_doubt(
    unanswering_apns: ApnsClient, apns_client: ApnsClient, sim: PushSim
) -> None:
    """The soak of 2026-12-06 (seed 23): a goal's fan-out, stopped after its worker's 16 s pause,
    gave up waiting for 60 deliveries that were waiting for a connection through a GOAWAY burst;
    cancelled, they were written `in_doubt` and the goal never reached those phones. A delivery
    cancelled before its request's last check said yes is `released` (before the fix: cancelled,
    in doubt); one cancelled with its request on its way stays cancelled (in doubt)."""

    def delivering(client: ApnsClient) -> asyncio.Task[Delivery]:
        sender = Sender(client, SendPolicy(), AdaptiveLimit(10), asyncio.Event(), kind="alert")
        return asyncio.create_task(
            sender.deliver(
                seed.apns_token(),
                GOAL_BODIES,
                priority=10,
                expiration=GOAL.timestamp + 900,
                resend_if_unknown=False,
            )
        )

    waiting = delivering(unanswering_apns)
    await sim.fault(latency_ms=3000, count=1)
    on_its_way = delivering(apns_client)
    await asyncio.sleep(0.5)
    assert not waiting.done() and not on_its_way.done()
    waiting.cancel()
    on_its_way.cancel()
    await asyncio.wait({waiting, on_its_way})

    assert not waiting.cancelled() and waiting.result().outcome == "released"
    assert on_its_way.cancelled()


async def test_a_last_look_that_cannot_reach_postgres_answers_none() -> None:
    """None, not "nothing newer": the caller must not send on a look it could not take."""
    unreachable = create_engine("postgresql://postgres@127.0.0.1:9/scoreline", pool_size=1)
    try:
        assert await PushStore(unreachable, GOAL, "sandbox").mark_sending(KILLED, [1, 2]) is None
    finally:
        await unreachable.dispose()


async def test_a_last_look_whose_statement_fails_is_logged_as_an_error(engine: AsyncEngine) -> None:
    """The look answered None for any error, so a statement gone wrong (our bug, not an outage)
    would release every push of every fan-out, again and again, without a word. It is still not
    sent on, and now logged as an error."""
    out_of_range = GOAL.model_copy(update={"fixture_id": 2**63})  # no bigint holds it: the statement fails
    with capture_logs() as logs:
        assert await PushStore(engine, out_of_range, "sandbox").mark_sending(KILLED, [1]) is None
    assert [(entry["event"], entry["log_level"]) for entry in logs] == [("push.last_look_failed", "error")]
    assert "out of int64 range" in logs[0]["error"]
