"""The drainer against real Postgres and the real APNs simulator: retries, dead tokens, outages, leases."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import asynccontextmanager
from typing import Any

import asyncpg
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from activities.push.apns import ApnsClient
from activities.push.drain import DrainConfig, Drainer
from activities.push.statements import TAKE, Sent
from scoreline.db.urls import asyncpg_dsn
from scoreline.settings import Settings
from tests.push import seed
from tests.push.simulator import PushSim
from tests.support.waiting import eventually

FAST = {"poll_s": 0.1, "backoff_first_s": 0.05, "backoff_cap_s": 0.4, "start_grace_s": 1.0}
"""The real rules, test-sized delays."""


def config(settings: Settings, **changes: Any) -> DrainConfig:
    base = DrainConfig.from_settings(settings)
    return DrainConfig(**{**base.__dict__, **FAST, **changes})


@asynccontextmanager
async def running(drainer: Drainer) -> AsyncIterator[Drainer]:
    drainer.start()
    try:
        yield drainer
    finally:
        await drainer.stop()


async def publish(
    db: asyncpg.Connection,
    stamp: int,
    *,
    event: str = "update",
    home: int = 1,
    alert: bool = True,
    priority: int = 10,
    fixture_id: int = seed.FIXTURE_ID,
) -> None:
    """What the publisher writes for one push: its `la_push` row, every running mailbox moved to it."""
    state = {"homeName": seed.HOME, "awayName": seed.AWAY, "homeScore": home, "awayScore": 0}
    state |= {"state": "finished" if event == "end" else "live_second_half", "version": stamp}
    title = "Full time" if event == "end" else f"GOAL! {seed.HOME}"
    await db.execute(
        """INSERT INTO la_push (fixture_id, stamp, event_key, event, generation, priority, routine,
            content_state, alert, attributes, stale_date, dismissal_date, trace_id)
        VALUES ($1, $2::bigint, $3, $4, 1, $5, false, $6::jsonb, $7::jsonb, '{}'::jsonb, $2::bigint + 900, $2::bigint + 900, $8)""",
        fixture_id,
        stamp,
        f"v{stamp}",
        event,
        priority,
        json.dumps(state),
        json.dumps({"title": title, "body": "1-0", "sound": "default"}) if alert else None,
        f"trace-{stamp}",
    )
    await db.execute(
        """UPDATE live_activity SET want_stamp = $2::bigint, want_end = $3,
            alert_stamp = CASE WHEN $4 THEN $2::bigint ELSE alert_stamp END, next_try_at = now()
        WHERE fixture_id = $1 AND NOT want_end""",
        fixture_id,
        stamp,
        event == "end",
        alert,
    )
    await db.execute("NOTIFY live_activity_due")


async def accepted(sim: PushSim, tokens: Iterable[str]) -> dict[str, list[dict[str, Any]]]:
    """Each token's accepted pushes' `aps`, oldest first."""
    wanted = set(tokens)
    found: dict[str, list[dict[str, Any]]] = {token: [] for token in wanted}
    for push in await sim.pushes():
        if push["token"] in wanted and push["status"] == 200:
            found[push["token"]].append(push["payload"]["aps"])
    return found


async def drained(drainer: Drainer) -> None:
    """Run `drainer` until nothing is owed."""
    async with running(drainer):

        async def nothing_owed() -> bool:
            return await drainer.owed() == (0, 0.0)

        await eventually(nothing_owed, within=10)


async def all_sent(db: asyncpg.Connection, stamp: int, count: int, *, alerts_too: bool = False) -> bool:
    """Whether `count` mailboxes have APNs' acceptance of `stamp` (and, `alerts_too`, owe no alert)."""
    sent = await db.fetchval(
        "SELECT count(*) FROM live_activity WHERE sent_stamp = $1 AND (NOT $2 OR alert_stamp IS NULL)",
        stamp,
        alerts_too,
    )
    return bool(sent == count)


async def answered_once(drainer: Drainer, db: asyncpg.Connection, stamp: int) -> None:
    """Let APNs answer `drainer` once (a quiet state at `stamp`), as it has a drainer that has been
    running: a drainer carries no alert before its first answer."""
    await publish(db, stamp, alert=False)
    await drainer.settle(await drainer.send(await drainer.take()))


@pytest.fixture
def drainer(
    engine: AsyncEngine, apns_client: ApnsClient, push_settings: Settings, database_url: str
) -> Drainer:
    return Drainer(engine, apns_client, config(push_settings), dsn=asyncpg_dsn(database_url))


async def test_a_hot_token_delays_no_one_and_backs_off(
    db: asyncpg.Connection, sim: PushSim, drainer: Drainer
) -> None:
    """A token answered 429 forever never holds up the others, and is retried with a growing backoff."""
    await seed.fixture(db)
    activities = await seed.running_activities(db, 200)
    hot, others = activities[0].push_token, [a.push_token for a in activities[1:]]
    await sim.fault(status=429, token=hot, duration_s=60)
    stamp = int(time.time())
    await publish(db, stamp)
    started = time.monotonic()
    async with running(drainer):

        async def all_others() -> bool:
            got = await accepted(sim, others)
            return all(got.values())

        await eventually(all_others, within=10)
        took = time.monotonic() - started
        await asyncio.sleep(2.0)
    assert took < 3.0
    tried = [p for p in await sim.pushes(token=hot)]
    assert all(p["status"] == 429 for p in tried)
    assert 4 <= len(tried) < 40, "retried, but with a backoff (not hundreds of times in two seconds)"
    row = await db.fetchrow(
        "SELECT tries, next_try_at, alert_stamp FROM live_activity WHERE push_token = $1", hot
    )
    assert row["tries"] >= 4 and row["next_try_at"] is not None and row["alert_stamp"] == stamp


async def test_a_dead_update_token_is_switched_off_and_a_new_one_gets_the_state_and_the_alert(
    db: asyncpg.Connection, sim: PushSim, drainer: Drainer
) -> None:
    """A 410 switches off that update token only (the activity runs on), and a reported new token gets
    the current state with the alert still owed."""
    await seed.fixture(db)
    (activity,) = await seed.running_activities(db, 1)
    await sim.unregister(activity.push_token)
    stamp = int(time.time())
    await publish(db, stamp)
    async with running(drainer):

        async def parked() -> bool:
            row = await db.fetchrow(
                "SELECT push_token_active, next_try_at FROM live_activity WHERE id = $1",
                activity.live_activity_id,
            )
            return row["push_token_active"] is False and row["next_try_at"] is None

        await eventually(parked, within=10)
        row = await db.fetchrow(
            "SELECT status, ended_at, alert_stamp FROM live_activity WHERE id = $1", activity.live_activity_id
        )
        assert row["status"] == "active" and row["ended_at"] is None and row["alert_stamp"] == stamp
        fresh = seed.apns_token()
        await db.execute(
            """UPDATE live_activity SET push_token = $2, push_token_active = true, sent_stamp = NULL,
                next_try_at = now() WHERE id = $1""",
            activity.live_activity_id,
            fresh,
        )
        await db.execute("NOTIFY live_activity_due")

        async def delivered() -> list[dict[str, Any]]:
            return (await accepted(sim, [fresh]))[fresh]

        (aps,) = await eventually(delivered, within=10)
    assert aps["timestamp"] == stamp and aps["content-state"]["homeScore"] == 1
    assert aps["alert"]["title"].startswith("GOAL!")
    row = await db.fetchrow(
        "SELECT sent_stamp, alert_stamp FROM live_activity WHERE id = $1", activity.live_activity_id
    )
    assert row["sent_stamp"] == stamp and row["alert_stamp"] is None


async def test_an_apns_outage_longer_than_the_backoff_cap_ends_with_everything_delivered(
    db: asyncpg.Connection, sim: PushSim, drainer: Drainer
) -> None:
    """Every row is delivered once APNs is back from an outage longer than the backoff cap, the end included."""
    await seed.fixture(db)
    activities = await seed.running_activities(db, 50)
    tokens = [a.push_token for a in activities]
    await sim.fault(status=503, duration_s=1.5)
    await sim.fault(action="disconnect", count=20)
    stamp = int(time.time())
    async with running(drainer):
        await publish(db, stamp)
        await asyncio.sleep(0.5)
        await publish(db, stamp + 1, event="end", home=2)

        async def all_ended() -> bool:
            ended = await db.fetchval("SELECT count(*) FROM live_activity WHERE status = 'ended'")
            return bool(ended == len(tokens))

        await eventually(all_ended, within=30)
    got = await accepted(sim, tokens)
    assert all(
        pushes[-1]["event"] == "end" and pushes[-1]["content-state"]["homeScore"] == 2
        for pushes in got.values()
    )
    assert any(p["status"] == 503 for p in await sim.pushes()), "the outage was seen"


async def test_a_row_taken_by_a_drainer_that_died_is_sent_again_without_its_alert(
    db: asyncpg.Connection,
    sim: PushSim,
    engine: AsyncEngine,
    apns_client: ApnsClient,
    push_settings: Settings,
) -> None:
    """A lease that lapses after its take marked the alert goes to the next drainer, which sends the
    state without the alert (at most once)."""
    await seed.fixture(db)
    activities = await seed.running_activities(db, 10)
    stamp = int(time.time())
    dead = Drainer(engine, apns_client, config(push_settings, lease_s=3.0, request_timeout=0.5))
    await answered_once(dead, db, stamp - 1)
    await publish(db, stamp)
    taken = await dead.take()
    assert len(taken.rows) == 10 and all(row.alert_stamp == stamp for row in taken.rows)
    async with running(Drainer(engine, apns_client, config(push_settings))):
        await eventually(lambda: all_sent(db, stamp, 10), within=10)
    got = await accepted(sim, [a.push_token for a in activities])
    latest = [[p for p in pushes if p["timestamp"] == stamp] for pushes in got.values()]
    assert all(len(pushes) == 1 and "alert" not in pushes[0] for pushes in latest)
    assert await db.fetchval("SELECT count(*) FROM live_activity WHERE alert_stamp IS NOT NULL") == 0


async def test_a_late_settle_after_the_lease_lapsed_changes_nothing(
    db: asyncpg.Connection,
    sim: PushSim,
    engine: AsyncEngine,
    apns_client: ApnsClient,
    push_settings: Settings,
) -> None:
    """A drainer paused past its lease sends nothing once resumed, and its settle writes nothing over
    its successor's."""
    await seed.fixture(db)
    activities = await seed.running_activities(db, 5)
    stamp = int(time.time())
    await publish(db, stamp)
    # Requests may start for 0.5 s after the take; the lease lapses 2.6 s after it.
    paused = Drainer(engine, apns_client, config(push_settings, lease_s=2.6, request_timeout=0.1))
    taken = await paused.take()
    await asyncio.sleep(2.7)
    successor = Drainer(engine, apns_client, config(push_settings))
    await successor.settle(await successor.send(await successor.take()))
    before = await db.fetch("SELECT * FROM live_activity ORDER BY id")
    late = await paused.send(taken)
    assert {s.outcome.result.value for s in late} == {"withheld"}
    assert await paused.settle(late) == 0
    assert await db.fetch("SELECT * FROM live_activity ORDER BY id") == before
    got = await accepted(sim, [a.push_token for a in activities])
    assert all(len(pushes) == 1 for pushes in got.values())


async def test_what_is_owed_and_how_late_is_what_the_gauges_report(
    db: asyncpg.Connection, sim: PushSim, drainer: Drainer
) -> None:
    """Owed mailboxes are counted and the most overdue one ages while no drainer runs; drained, both go to 0."""
    await seed.fixture(db)
    await seed.running_activities(db, 3)
    await publish(db, int(time.time()))
    await asyncio.sleep(1.1)
    owed, lag = await drainer.owed()
    assert owed == 3 and lag >= 1.0
    async with running(drainer):

        async def drained() -> bool:
            return await drainer.owed() == (0, 0.0)

        await eventually(drained, within=10)


async def test_a_newer_alert_published_while_a_request_is_in_doubt_is_still_sent(
    db: asyncpg.Connection,
    sim: PushSim,
    engine: AsyncEngine,
    apns_client: ApnsClient,
    push_settings: Settings,
) -> None:
    """A take that found an alert in doubt dropped whatever alert was owed, so a red card
    published after the lost goal request never reached the phone."""
    await seed.fixture(db)
    activities = await seed.running_activities(db, 3)
    goal = int(time.time())
    dead = Drainer(engine, apns_client, config(push_settings, lease_s=3.0, request_timeout=0.5))
    await answered_once(dead, db, goal - 1)
    await publish(db, goal)
    taken = await dead.take()  # marked, never sent: its worker died
    assert len(taken.rows) == 3 and all(row.alert_stamp == goal for row in taken.rows)
    red_card = goal + 1
    await publish(db, red_card)
    await asyncio.sleep(1.1)
    async with running(Drainer(engine, apns_client, config(push_settings))):
        await eventually(lambda: all_sent(db, red_card, 3, alerts_too=True), within=10)
    got = await accepted(sim, [a.push_token for a in activities])
    assert all([p["timestamp"] for p in pushes if "alert" in p] == [red_card] for pushes in got.values())


async def test_a_full_cache_of_published_pushes_delays_no_batch(
    db: asyncpg.Connection,
    sim: PushSim,
    engine: AsyncEngine,
    apns_client: ApnsClient,
    push_settings: Settings,
    database_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """When the cache of published pushes started over, the rows of a batch whose push had been
    cached were failed as wrong and waited a minute."""
    monkeypatch.setattr("activities.push.drain.PUBLISHED_CACHE_SIZE", 1)
    other = seed.FIXTURE_ID + 1
    await seed.fixture(db)
    await seed.fixture(db, other)
    here = await seed.running_activities(db, 3)
    there = await seed.running_activities(db, 3, other)
    first = int(time.time())
    await publish(db, first, alert=False)
    # A row failed as wrong waits the longest backoff: a minute in production, 30 s here.
    drainer = Drainer(
        engine, apns_client, config(push_settings, backoff_cap_s=30.0), dsn=asyncpg_dsn(database_url)
    )

    async def sent(fixture_id: int, stamp: int) -> bool:
        count = await db.fetchval(
            "SELECT count(*) FROM live_activity WHERE fixture_id = $1 AND sent_stamp = $2", fixture_id, stamp
        )
        return bool(count == 3)

    async with running(drainer):
        await eventually(lambda: sent(seed.FIXTURE_ID, first), within=10)
        # One batch: the first fixture's rows again (new tokens: its push is cached), the other's new push.
        async with db.transaction():
            await db.execute(
                "UPDATE live_activity SET sent_stamp = NULL, next_try_at = now() WHERE fixture_id = $1",
                seed.FIXTURE_ID,
            )
            await publish(db, first + 1, alert=False, fixture_id=other)
        await eventually(lambda: sent(seed.FIXTURE_ID, first), within=5)
        await eventually(lambda: sent(other, first + 1), within=5)
    assert await db.fetchval("SELECT max(tries) FROM live_activity") == 0
    got = await accepted(sim, [a.push_token for a in (*here, *there)])
    assert all(pushes for pushes in got.values())


async def refused_goal(drainer: Drainer, db: asyncpg.Connection, sim: PushSim, goal: int) -> list[Sent]:
    """Publish a goal and let `drainer` take and send it to every mailbox, APNs answering each 503;
    the answers, not settled yet."""
    await publish(db, goal)
    await sim.fault(status=503, count=3)
    refused = await drainer.send(await drainer.take())
    assert {s.outcome.result.value for s in refused} == {"retry"} and all(s.row.alert_stamp for s in refused)
    return refused


async def late_refusal(
    db: asyncpg.Connection,
    sim: PushSim,
    engine: AsyncEngine,
    apns_client: ApnsClient,
    push_settings: Settings,
    goal: int,
    meanwhile: Callable[[Drainer], Awaitable[None]] | None = None,
) -> list[Any]:
    """A goal's request answered 503 whose settle lands only after a successor took the row (the
    drainer lost Postgres past its lease), `meanwhile(successor)` done before that settle."""
    activities = await seed.running_activities(db, 3)
    # Requests may start for 0.5 s after the take; the lease lapses 2.6 s after it.
    cut_off = Drainer(engine, apns_client, config(push_settings, lease_s=2.6, request_timeout=0.5))
    successor = Drainer(engine, apns_client, config(push_settings))
    await answered_once(successor, db, goal - 2)
    await answered_once(cut_off, db, goal - 1)
    refused = await refused_goal(cut_off, db, sim, goal)
    await asyncio.sleep(2.7)
    await successor.settle(await successor.send(await successor.take()))
    if meanwhile is not None:
        await meanwhile(successor)
    await cut_off.settle(refused)
    return activities


async def test_an_alert_refused_by_apns_and_settled_after_the_lease_is_still_sent(
    db: asyncpg.Connection,
    sim: PushSim,
    engine: AsyncEngine,
    apns_client: ApnsClient,
    push_settings: Settings,
) -> None:
    """An alert APNs refused (503) was dropped as in doubt when the refusal's settle came after the
    lease (Postgres away): the phone showed the goal's score but never its alert."""
    await seed.fixture(db)
    goal = int(time.time())
    activities = await late_refusal(db, sim, engine, apns_client, push_settings, goal)
    async with running(Drainer(engine, apns_client, config(push_settings))):
        await eventually(lambda: all_sent(db, goal, 3, alerts_too=True), within=10)
    got = await accepted(sim, [a.push_token for a in activities])
    assert all([p["timestamp"] for p in pushes if "alert" in p] == [goal] for pushes in got.values())


async def test_a_late_refusal_gives_back_no_alert_a_newer_one_replaced(
    db: asyncpg.Connection,
    sim: PushSim,
    engine: AsyncEngine,
    apns_client: ApnsClient,
    push_settings: Settings,
) -> None:
    """A refused goal alert whose settle comes late is not owed again once a newer alert was
    published (and shown): the phone never shows an older key moment after a newer one."""
    await seed.fixture(db)
    goal = int(time.time())
    red_card = goal + 1

    async def red_card_shown(successor: Drainer) -> None:
        await publish(db, red_card)
        await successor.settle(await successor.send(await successor.take()))

    activities = await late_refusal(db, sim, engine, apns_client, push_settings, goal, red_card_shown)
    await drained(Drainer(engine, apns_client, config(push_settings)))
    got = await accepted(sim, [a.push_token for a in activities])
    assert all([p["timestamp"] for p in pushes if "alert" in p] == [red_card] for pushes in got.values())


async def test_a_settle_retried_after_its_commit_gives_back_no_delivered_alert(
    db: asyncpg.Connection,
    sim: PushSim,
    engine: AsyncEngine,
    apns_client: ApnsClient,
    push_settings: Settings,
) -> None:
    """A refusal's settle that committed but is written again (its commit's answer lost) after
    another drainer delivered the alert must not make the alert owed a second time."""
    await seed.fixture(db)
    activities = await seed.running_activities(db, 3)
    goal = int(time.time())
    first = Drainer(engine, apns_client, config(push_settings))
    second = Drainer(engine, apns_client, config(push_settings))
    await answered_once(second, db, goal - 2)
    await answered_once(first, db, goal - 1)
    refused = await refused_goal(first, db, sim, goal)
    await first.settle(refused)
    await db.execute("UPDATE live_activity SET next_try_at = now()")
    await second.settle(await second.send(await second.take()))
    assert await all_sent(db, goal, 3, alerts_too=True)
    await first.settle(refused)
    assert await db.fetchval("SELECT count(*) FROM live_activity WHERE alert_stamp IS NOT NULL") == 0
    got = await accepted(sim, [a.push_token for a in activities])
    assert all([p["timestamp"] for p in pushes if "alert" in p] == [goal] for pushes in got.values())


async def test_a_late_refusal_settled_while_the_successor_takes_still_gives_the_alert_back(
    db: asyncpg.Connection,
    sim: PushSim,
    engine: AsyncEngine,
    apns_client: ApnsClient,
    push_settings: Settings,
) -> None:
    """A late settle that ran while a successor's take of its rows was still open skipped them
    unseen (its snapshot predated the take), and the refused goal alert was lost."""
    await seed.fixture(db)
    activities = await seed.running_activities(db, 3)
    goal = int(time.time())
    cut_off = Drainer(engine, apns_client, config(push_settings, lease_s=2.6, request_timeout=0.5))
    await answered_once(cut_off, db, goal - 1)
    refused = await refused_goal(cut_off, db, sim, goal)
    await asyncio.sleep(2.7)
    async with engine.begin() as conn:
        taken = await conn.execute(
            text(TAKE),
            {
                "environment": "sandbox",
                "limit": 10,
                "me": "successor",
                "lease": 30.0,
                "grace": 1.0,
                "carry_alerts": True,
            },
        )
        assert len(taken.all()) == 3
        settling = asyncio.create_task(cut_off.settle(refused))

        async def settle_waits() -> bool:
            waiting = await db.fetchval(
                """SELECT count(*) FROM pg_stat_activity
                WHERE datname = current_database() AND wait_event_type = 'Lock'"""
            )
            return bool(waiting)

        await eventually(settle_waits, within=10)
    await settling
    # The successor's request went nowhere (its worker died): its lease lapses in 30 s; skip that.
    await db.execute("UPDATE live_activity SET lease_until = now(), next_try_at = now()")
    async with running(Drainer(engine, apns_client, config(push_settings))):
        await eventually(lambda: all_sent(db, goal, 3, alerts_too=True), within=10)
    got = await accepted(sim, [a.push_token for a in activities])
    assert all([p["timestamp"] for p in pushes if "alert" in p] == [goal] for pushes in got.values())


async def test_a_late_refusal_gives_back_no_alert_a_later_request_may_have_shown(
    db: asyncpg.Connection,
    sim: PushSim,
    engine: AsyncEngine,
    apns_client: ApnsClient,
    push_settings: Settings,
) -> None:
    """A refusal settled again after its commit's answer was lost gave back an alert that a later
    request had carried and a third take had then dropped in doubt: the phone showed it twice."""
    await seed.fixture(db)
    activities = await seed.running_activities(db, 3)
    goal = int(time.time())
    first = Drainer(engine, apns_client, config(push_settings))
    lost = Drainer(engine, apns_client, config(push_settings, lease_s=2.6, request_timeout=0.5))
    third = Drainer(engine, apns_client, config(push_settings))
    for number, drainer in enumerate((first, lost, third), start=3):
        await answered_once(drainer, db, goal - number)
    refused = await refused_goal(first, db, sim, goal)
    await first.settle(refused)  # committed; its answer lost, so it will be written again
    await db.execute("UPDATE live_activity SET next_try_at = now()")
    shown = await lost.send(await lost.take())  # delivered; its worker dies before the settle
    assert {s.outcome.result.value for s in shown} == {"sent"}
    await asyncio.sleep(2.7)
    await third.settle(await third.send(await third.take()))
    await first.settle(refused)
    await drained(Drainer(engine, apns_client, config(push_settings)))
    got = await accepted(sim, [a.push_token for a in activities])
    assert all([p["timestamp"] for p in pushes if "alert" in p] == [goal] for pushes in got.values())


@pytest.mark.parametrize("late_first", [False, True], ids=["after the quiet start", "before its answer"])
async def test_an_alert_a_refused_start_carried_is_still_sent(
    db: asyncpg.Connection,
    sim: PushSim,
    engine: AsyncEngine,
    apns_client: ApnsClient,
    push_settings: Settings,
    late_first: bool,
) -> None:
    """A goal alert riding on a push-to-start that APNs refused (503), settled only after the start
    went again quietly, never reached the phone; settled while that quiet start was on its way,
    the quiet start's own settle took it back."""
    await seed.fixture(db)
    kick_off = int(time.time()) - 10
    cut_off = Drainer(engine, apns_client, config(push_settings, lease_s=2.6, request_timeout=0.5))
    successor = Drainer(engine, apns_client, config(push_settings))
    await seed.running_activities(db, 1)
    await answered_once(cut_off, db, kick_off - 2)
    await answered_once(successor, db, kick_off - 1)
    await db.execute("DELETE FROM live_activity")
    followers = await seed.followers(db, 3)
    await publish(db, kick_off, event="start", alert=False)
    await db.execute(
        """INSERT INTO live_activity (device_id, fixture_id, want_stamp, next_try_at)
        SELECT unnest($1::uuid[]), $2, $3::bigint, now()""",
        [f.device_id for f in followers],
        seed.FIXTURE_ID,
        kick_off,
    )
    goal = kick_off + 1
    await publish(db, goal)
    await sim.fault(status=503, count=3)
    refused = await cut_off.send(await cut_off.take())
    assert {(s.row.event, s.outcome.result.value) for s in refused} == {("start", "retry")}
    await asyncio.sleep(2.7)
    quiet = await successor.send(await successor.take())
    for drainer, outcomes in ((cut_off, refused), (successor, quiet))[:: 1 if late_first else -1]:
        await drainer.settle(outcomes)
    tokens = {f.device_id: seed.apns_token() for f in followers}
    for device_id, token in tokens.items():  # the apps report their activities' update tokens
        await db.execute(
            "UPDATE live_activity SET push_token = $2, next_try_at = now() WHERE device_id = $1",
            device_id,
            token,
        )
    async with running(Drainer(engine, apns_client, config(push_settings))):
        await eventually(lambda: all_sent(db, goal, 3, alerts_too=True), within=10)
    starts = await accepted(sim, [f.push_to_start_token for f in followers])
    updates = await accepted(sim, tokens.values())
    for follower in followers:
        shown = starts[follower.push_to_start_token] + updates[tokens[follower.device_id]]
        goals = [p["timestamp"] for p in shown if p.get("alert", {}).get("title", "").startswith("GOAL!")]
        assert goals == [goal]


async def test_a_start_answered_after_its_lease_while_a_take_waited_is_not_sent_twice(
    db: asyncpg.Connection,
    sim: PushSim,
    engine: AsyncEngine,
    apns_client: ApnsClient,
    push_settings: Settings,
) -> None:
    """A push-to-start APNs accepted whose settle came after its lease, once a take had found it in
    its grace and waited, was thrown away: after the grace the start went again (two activities)."""
    await seed.fixture(db)
    followers = await seed.followers(db, 3)
    kick_off = int(time.time())
    await publish(db, kick_off, event="start", alert=False)
    await db.execute(
        """INSERT INTO live_activity (device_id, fixture_id, want_stamp, next_try_at)
        SELECT unnest($1::uuid[]), $2, $3::bigint, now()""",
        [f.device_id for f in followers],
        seed.FIXTURE_ID,
        kick_off,
    )
    patient = config(push_settings, start_grace_s=5.0)
    cut_off = Drainer(
        engine, apns_client, config(push_settings, start_grace_s=5.0, lease_s=2.6, request_timeout=0.5)
    )
    started = await cut_off.send(await cut_off.take())
    assert {(s.row.event, s.outcome.result.value) for s in started} == {("start", "sent")}
    await asyncio.sleep(2.7)
    waiting = Drainer(engine, apns_client, patient)
    assert (await waiting.take()).consumed == 3  # in the grace: each row waits, nothing is sent
    await cut_off.settle(started)
    await drained(Drainer(engine, apns_client, patient))
    starts = await accepted(sim, [f.push_to_start_token for f in followers])
    assert all(len(pushes) == 1 for pushes in starts.values())
