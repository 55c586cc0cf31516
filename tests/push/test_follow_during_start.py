"""A follow that comes while the kick-off's push-to-start is fanning out is walked after it, not beside it.

The soak of 2026-12-03 (seed 16): a follow signalled the match while its loud lane was sending the
kick-off start, and the new-followers walk ran beside it. Both walk the followers not started yet,
under one gate: the walk took the start's claims for those of a dead attempt and marked the ones
whose request was on its way in doubt. Their answers were never written, a 410 among them; after
the grace the start went to that dead token again. The walk now waits for the start to finish
(`FOLLOWERS_AFTER_START_PATCH`).
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass

import asyncpg
import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHistory

from scoreline.settings import Settings
from scoreline.temporal.match_runs import match_workflow_id
from tests.push.phones import phones
from tests.push.simulator import PushSim
from tests.push.test_match_lifecycle import Desk, _stop, desk_road
from tests.support.replay import replays_and_keep
from tests.support.waiting import eventually
from workflows.match import MatchWorkflow

pytestmark = pytest.mark.timeout(120)

HELD_MS = 4_000
"""How long APNs holds the early follower's push-to-start: the follow comes meanwhile."""


async def test_a_follow_during_the_kickoff_start_is_walked_after_it(
    push_settings: Settings, database_url: str, temporal_client: Client, sim: PushSim, db: asyncpg.Connection
) -> None:
    """Before the fix the walk's push activity was scheduled while the kick-off's still ran."""
    async with desk_road(push_settings, database_url, temporal_client) as road:
        fixture_id = await road.fixture()
        desk = Desk(road, fixture_id, await road.desk(fixture_id))
        early, late = await phones(road.http, sim, 2, prefix="during-start")
        await early.follow(fixture_id)
        early.run_app(fixture_id)
        await sim.fault(latency_ms=HELD_MS, token=early.push_to_start_token)
        handle = temporal_client.get_workflow_handle(match_workflow_id(fixture_id))
        try:
            await desk.send("football.period_start", {"period": "1H"})

            async def start_on_its_way() -> bool:
                return bool(
                    await db.fetchval(
                        """SELECT count(*) FROM effect_log WHERE fixture_id = $1
                        AND effect = 'la.start' AND outcome ? 'sending'""",
                        fixture_id,
                    )
                )

            await eventually(start_on_its_way, within=20, every=0.02)
            await late.follow(fixture_id)
            late.run_app(fixture_id)
            async with asyncio.timeout(30):
                await asyncio.gather(early.activity_running(), late.activity_running())

            async def both_starts_done() -> bool:
                runs = _start_pushes(await handle.fetch_history())
                return len(runs) == 2 and all(run.closed is not None for run in runs)

            await eventually(both_starts_done, within=30)
            history = await handle.fetch_history()
        finally:
            early.cancel()
            late.cancel()
            await _stop(handle)

    await replays_and_keep("match-follow-during-start", [MatchWorkflow], history)
    kickoff, walk = _start_pushes(history)
    assert kickoff.closed is not None and walk.scheduled > kickoff.closed, "the walk ran beside the start"
    assert [s.status for s in await early.starts()] == [200]
    assert [s.status for s in await late.starts()] == [200]
    ledger = await db.fetch(
        """SELECT la.device_id::text AS device, e.outcome->>'state' AS state,
               (SELECT count(*) FROM push_attempt a WHERE a.live_activity_id = la.id) AS attempts
        FROM effect_log e JOIN live_activity la ON la.id = e.target::bigint
        WHERE e.fixture_id = $1 AND e.effect = 'la.start'""",
        fixture_id,
    )
    assert {(row["device"], row["state"], row["attempts"]) for row in ledger} == {
        (early.device_id, "sent", 1),
        (late.device_id, "sent", 1),
    }


@dataclass(frozen=True)
class _Run:
    scheduled: int
    """Its `ActivityTaskScheduled` event id."""
    closed: int | None
    """The event id of its completion (or failure); None while it runs."""


def _start_pushes(history: WorkflowHistory) -> list[_Run]:
    """Every push-to-start activity of the run, in the order scheduled."""
    closing = {
        EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED: "activity_task_completed_event_attributes",
        EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED: "activity_task_failed_event_attributes",
        EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT: "activity_task_timed_out_event_attributes",
    }
    starts: list[int] = []
    closed: dict[int, int] = {}
    for event in history.events:
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            scheduled = event.activity_task_scheduled_event_attributes
            if scheduled.activity_type.name == "push_live_activities" and (
                json.loads(scheduled.input.payloads[0].data)["kind"] == "start"
            ):
                starts.append(event.event_id)
        elif event.event_type in closing:
            closed[getattr(event, closing[event.event_type]).scheduled_event_id] = event.event_id
    return [_Run(scheduled, closed.get(scheduled)) for scheduled in starts]
