"""A fan-out's claims and outcomes outlast a Postgres outage (only the attempt that made them
knows what they are for), and its reads wait the outage out rather than fail the attempt."""

from __future__ import annotations

import asyncio

import asyncpg
from sqlalchemy.ext.asyncio import AsyncEngine

from activities.push.delivery import Delivery
from activities.push.fanout import FanoutConfig
from activities.push.store import Batch, PushStore
from domain.pushes import LiveState, PushInput
from scoreline.db.urls import asyncpg_dsn
from tests.push import seed
from tests.push.outage import cut_off_engine
from tests.support.waiting import eventually

GOAL = PushInput(
    fixture_id=seed.FIXTURE_ID,
    event_key="v13",
    kind="update",
    alert=True,
    priority=10,
    state=LiveState(home=1, away=0, state="live_first_half", minute=12, version=13),
    timestamp=1_790_000_000,
)
END = PushInput(
    fixture_id=seed.FIXTURE_ID,
    event_key="full_time",
    kind="end",
    state=LiveState(home=2, away=1, state="finished", minute=90, version=30),
    timestamp=1_790_000_000,
)


async def test_outcomes_written_while_postgres_is_out_of_reach_are_kept_until_it_is_back(
    engine: AsyncEngine, database_url: str, fanout_config: FanoutConfig, db: asyncpg.Connection
) -> None:
    """The soak of 2026-12-02 (seed 5): a fan-out that had claimed its followers' starts lost
    Postgres for 4 s (a restart) just as it wrote the answers; the attempt failed, its retry found
    the claims of an attempt that died and marked them in doubt, and those followers never got a
    Live Activity. The write now waits Postgres out (its connection cut here by a proxy) and
    settles every claim."""
    await seed.fixture(db)
    await seed.running_activities(db, 3)
    store = PushStore(engine, END, fanout_config.environment)
    batch = await store.load(store.first_cursor, 10)
    claimed = (await store.claim(batch.targets, [], "attempt-1", {"version": 30})).mine
    assert len(claimed) == 3

    async with cut_off_engine(database_url) as (proxy, cut_off):
        writer = PushStore(cut_off, END, fanout_config.environment)
        await proxy.cut()
        settling = asyncio.create_task(
            writer.settle(
                [(target, Delivery("sent", (), status=200)) for target in claimed], "attempt-1", None
            )
        )
        await asyncio.sleep(1.5)
        assert not settling.done(), "the write waits for Postgres"
        await proxy.restore()
        async with asyncio.timeout(20):
            await settling

    states = await db.fetch("SELECT outcome->>'state' AS state FROM effect_log")
    assert [r["state"] for r in states] == ["sent"] * 3
    assert {r["status"] for r in await db.fetch("SELECT status FROM live_activity")} == {"ended"}


async def test_a_settlement_lands_within_a_second_of_postgres_coming_back(
    engine: AsyncEngine, database_url: str, fanout_config: FanoutConfig, db: asyncpg.Connection
) -> None:
    """The 30-minute soak's seed 25: starts answered during a 4 s Postgres restart were settled
    by tries up to 5 s apart, and their worker, SIGKILLed 1.7 s after Postgres came back, had not
    written them: in doubt, they were sent again to 51 phones whose token reports the outages had
    held up. Tries now come at most 1 s apart; before the fix this one landed about 4.7 s after."""
    await seed.fixture(db)
    await seed.running_activities(db, 1)
    store = PushStore(engine, END, fanout_config.environment)
    batch = await store.load(store.first_cursor, 10)
    claimed = (await store.claim(batch.targets, [], "attempt-1", {"version": 30})).mine

    async with cut_off_engine(database_url) as (proxy, cut_off):
        writer = PushStore(cut_off, END, fanout_config.environment)
        await proxy.cut()
        settling = asyncio.create_task(
            writer.settle(
                [(target, Delivery("sent", (), status=200)) for target in claimed], "attempt-1", None
            )
        )
        await asyncio.sleep(6.5)
        assert not settling.done(), "the write waits for Postgres"
        await proxy.restore()
        async with asyncio.timeout(2.5):
            await settling
    assert await db.fetchval("SELECT outcome->>'state' FROM effect_log") == "sent"


async def test_claims_made_while_postgres_is_out_of_reach_are_made_once_it_is_back(
    engine: AsyncEngine, database_url: str, fanout_config: FanoutConfig, db: asyncpg.Connection
) -> None:
    """The soak of 2026-12-02 (seed 7): the commit of a goal's claims reached Postgres, but its
    answer was lost to a cut connection; the attempt failed, its retry found claims of "an attempt
    that died" and marked them in doubt, and ten phones never got the goal. The claim now waits
    Postgres out, and claims the attempt already holds (its lost commit) count as its own."""
    await seed.fixture(db)
    await seed.running_activities(db, 3)
    async with cut_off_engine(database_url) as (proxy, cut_off):
        store = PushStore(cut_off, GOAL, fanout_config.environment)
        batch = await store.load(store.first_cursor, 10)
        await proxy.cut()
        claiming = asyncio.create_task(store.claim(batch.targets, [], "attempt-1", {"version": 13}))
        await asyncio.sleep(1.5)
        assert not claiming.done(), "the claim waits for Postgres"
        await proxy.restore()
        async with asyncio.timeout(20):
            claimed = (await claiming).mine
        again = (await store.claim(batch.targets, [], "attempt-1", {"version": 13})).mine
        # Its requests begin (the last look marks them); then it dies.
        await store.mark_sending("attempt-1", [target.live_activity_id for target in claimed])
        other = (await store.claim(batch.targets, [], "attempt-2", {"version": 13})).mine

    assert len(claimed) == 3
    assert again == claimed, "a try whose answer was lost finds its claims its own"
    assert other == [], "another attempt never sends an alert whose request may have gone out"


KICKOFF = PushInput(
    fixture_id=seed.FIXTURE_ID,
    event_key="kickoff",
    kind="start",
    priority=10,
    alert=True,
    state=LiveState(state="live_first_half", minute=1, version=1),
    timestamp=1_790_000_000,
)


async def test_every_read_of_a_fanout_waits_postgres_out_too(
    engine: AsyncEngine, database_url: str, fanout_config: FanoutConfig, db: asyncpg.Connection
) -> None:
    """The soak of 2026-12-05 (seed 18): a walk starting a match's new followers failed on its
    first read during a cut, then on a restart; each failure cost Temporal's backoff (30 s by
    then), the walk ended after the final whistle and 41 followers never got a Live Activity.
    The fan-out's reads (the fixture's names, a batch of followers or activities, its totals) and
    its small writes (the followers-waiting mark, the close after an end) now wait Postgres out
    as its claims and settlements do."""
    await seed.fixture(db)
    await seed.followers(db, 2)
    await seed.running_activities(db, 3)
    async with cut_off_engine(database_url) as (proxy, cut_off):
        starts, ends = (
            PushStore(cut_off, KICKOFF, fanout_config.environment),
            PushStore(cut_off, END, "sandbox"),
        )
        reads = {
            "names": lambda: starts.fixture_names(),
            "followers": lambda: starts.load(starts.first_cursor, 10),
            "activities": lambda: ends.load(ends.first_cursor, 10),
            "totals": lambda: ends.totals(0),
            "followers waiting": lambda: starts.clear_followers_waiting(),
            "close": lambda: ends.close_remaining(claimed_too=True),
        }
        results: dict[str, object] = {}
        for name, read in reads.items():
            await proxy.cut()
            reading = asyncio.ensure_future(read())
            await asyncio.sleep(1.0)
            assert not reading.done(), f"{name}: waits for Postgres"
            await proxy.restore()
            async with asyncio.timeout(20):
                results[name] = await reading

    assert results["names"] is not None
    batches = [results[name] for name in ("followers", "activities")]
    assert [len(batch.targets) for batch in batches if isinstance(batch, Batch)] == [2, 3]
    # The followers' pending activities, which the end's walk cannot reach, are closed.
    assert await db.fetchval("SELECT count(*) FROM live_activity WHERE status = 'ended'") == 2


async def test_a_settlement_postgres_aborts_to_break_a_deadlock_is_written_again(
    engine: AsyncEngine, database_url: str, fanout_config: FanoutConfig, db: asyncpg.Connection
) -> None:
    """A settlement locks its claims, then the activities it ended; a claim, a look or another
    settlement beside it can lock the same rows the other way round, and Postgres breaks the cycle
    by aborting one transaction. The settlement was failed with it, not tried again: its claims
    stayed with an attempt that then failed, and an alert's would have ended in doubt. Here another
    transaction holds an activity the settlement needs and then asks for a claim it holds."""
    await seed.fixture(db)
    await seed.running_activities(db, 2)
    store = PushStore(engine, END, fanout_config.environment)
    batch = await store.load(store.first_cursor, 10)
    claimed = (await store.claim(batch.targets, [], "attempt-1", {"version": 30})).mine
    first, second = sorted(claimed, key=lambda target: target.live_activity_id)

    other = await asyncpg.connect(asyncpg_dsn(database_url))
    try:
        holding = other.transaction()
        await holding.start()
        await other.execute(
            "UPDATE live_activity SET updated_at = now() WHERE id = $1", second.live_activity_id
        )
        settling = asyncio.create_task(
            store.settle(
                [(target, Delivery("sent", (), status=200)) for target in claimed], "attempt-1", None
            )
        )
        await _waiting_for_a_lock(db)
        # Wants the claim the waiting settlement has written: a cycle Postgres breaks in a second.
        await other.execute(
            "UPDATE effect_log SET created_at = created_at WHERE fixture_id = $1 AND target = $2",
            seed.FIXTURE_ID,
            str(first.live_activity_id),
        )
        await holding.commit()
        await asyncio.wait_for(settling, timeout=20)
    finally:
        await other.close()

    states = await db.fetch(
        "SELECT outcome->>'state' AS state FROM effect_log WHERE fixture_id = $1", seed.FIXTURE_ID
    )
    assert sorted(row["state"] for row in states) == ["sent", "sent"]
    ended = await db.fetchval(
        "SELECT count(*) FROM live_activity WHERE fixture_id = $1 AND status = 'ended'", seed.FIXTURE_ID
    )
    assert ended == 2


async def _waiting_for_a_lock(db: asyncpg.Connection) -> None:
    """Until some other session of this database waits for a row lock."""

    async def waiting() -> int:
        return int(
            await db.fetchval(
                """SELECT count(*) FROM pg_stat_activity
                WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()"""
            )
        )

    await eventually(waiting, within=4, every=0.02)
