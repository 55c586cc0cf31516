"""A follow that comes while the kick-off's start is being published still gets its push-to-start.

A follow after kick-off fills the follower's mailbox itself, and a start publish fills one for every
follower it sees: each must see the other (docs/live-activities.md, the fixture's push lock). The
test holds the kick-off's publish open after it read the followers (a deferred trigger on `la_push`
waits at its commit for a lock the test holds) and lets the follow come meanwhile: without the push
lock the follow reads no start yet and the publish never saw the follow.
"""

from __future__ import annotations

import asyncio

import asyncpg
import pytest
from temporalio.client import Client

from scoreline.devices.mailbox import PUSH_LOCK_CLASS
from scoreline.settings import Settings
from scoreline.temporal.match_runs import match_workflow_id
from tests.push.phones import phones
from tests.push.simulator import PushSim
from tests.push.test_match_lifecycle import Desk, _stop, desk_road
from tests.support.replay import replays_and_keep
from tests.support.waiting import eventually
from workflows.match import MatchWorkflow

pytestmark = [pytest.mark.timeout(120), pytest.mark.usefixtures("fast_worker_drain")]

HOLD = 7262
"""Advisory lock class the test holds while the kick-off's publish waits for it at its commit."""


async def hold_the_start_publish(db: asyncpg.Connection, fixture_id: int) -> None:
    """From now on the fixture's start publish waits at its commit until the test releases `HOLD`."""
    await db.execute(
        f"""CREATE FUNCTION wait_for_the_test() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN PERFORM pg_advisory_xact_lock_shared({HOLD}, 0); RETURN NULL; END $$"""
    )
    await db.execute(
        f"""CREATE CONSTRAINT TRIGGER start_waits AFTER INSERT ON la_push
        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
        WHEN (NEW.fixture_id = {fixture_id} AND NEW.event = 'start')
        EXECUTE FUNCTION wait_for_the_test()"""
    )
    await db.execute(f"SELECT pg_advisory_lock({HOLD}, 0)")


async def waiting_on(db: asyncpg.Connection, lock_class: int) -> bool:
    """Some session waits for an advisory lock of `lock_class`."""
    return bool(
        await db.fetchval(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = $1 AND NOT granted",
            lock_class,
        )
    )


async def test_a_follow_while_the_kickoff_start_is_published_gets_its_start(
    push_settings: Settings, database_url: str, temporal_client: Client, sim: PushSim, db: asyncpg.Connection
) -> None:
    """Before, a follow signalled the match and a walk of the followers ran beside the kick-off's
    start under one gate: the walk took the start's claims for a dead attempt's and lost answers."""
    async with desk_road(push_settings, database_url, temporal_client) as road:
        fixture_id = await road.fixture()
        desk = Desk(road, fixture_id, await road.desk(fixture_id))
        early, late = await phones(road.http, sim, 2, prefix="during-start")
        await early.follow(fixture_id)
        early.run_app(fixture_id)
        await hold_the_start_publish(db, fixture_id)
        handle = temporal_client.get_workflow_handle(match_workflow_id(fixture_id))
        try:
            await desk.send("football.period_start", {"period": "1H"})
            await eventually(lambda: waiting_on(db, HOLD), within=20)
            following = asyncio.create_task(late.follow(fixture_id))

            async def follow_waits_or_is_done() -> bool:
                return following.done() or await waiting_on(db, PUSH_LOCK_CLASS)

            await eventually(follow_waits_or_is_done, within=20)
            await db.execute(f"SELECT pg_advisory_unlock({HOLD}, 0)")
            await asyncio.wait_for(following, 20)
            late.run_app(fixture_id)
            await asyncio.wait_for(asyncio.gather(early.activity_running(), late.activity_running()), 30)
            history = await handle.fetch_history()
        finally:
            early.cancel()
            late.cancel()
            await _stop(handle)

    await replays_and_keep("match-follow-during-start", [MatchWorkflow], history)
    for phone in (early, late):
        starts = await phone.starts()
        assert [(s.event, s.status) for s in starts] == [("start", 200)], phone.name
