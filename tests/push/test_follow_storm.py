"""Follows cannot grow a match's workflow without bound (trust issue, hole 3).

Every follow after kick-off used to signal the match workflow and queue a full push-to-start walk,
unfollow + follow counted again, and the queue travelled across continue-as-new until it passed
Temporal's payload limit. Now a follow never reaches the workflow: it fills the follower's own
mailbox in Postgres (one per generation, so following again starts nothing twice); and one device
may follow or unfollow only so often.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from datetime import timedelta

import httpx
import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowExecutionStatus

from scoreline.settings import Settings
from scoreline.temporal.match_runs import match_workflow_id
from tests.push.phones import Phone, phones
from tests.push.simulator import PushSim
from tests.push.test_match_lifecycle import Desk, _stop, desk_road
from tests.support.waiting import eventually

pytestmark = pytest.mark.timeout(240)

DEVICES = 30
CALLS_PER_DEVICE = 40
"""Unfollow, follow, unfollow, … follow: 1,200 calls, every device following at the end. No
follow may signal the workflow, so one signal in 600 follows fails the test as 600 would."""
FOLLOWS = DEVICES * CALLS_PER_DEVICE // 2


async def _flip(api: httpx.AsyncClient, phone: Phone, fixture_id: int, calls: int) -> Counter[int]:
    statuses: Counter[int] = Counter()
    for call in range(calls):
        if call % 2 == 0:
            response = await api.delete(
                f"/v1/devices/{phone.device_id}/follows/{fixture_id}", headers=phone.auth
            )
        else:
            response = await api.post(
                f"/v1/devices/{phone.device_id}/follows", json={"fixture_id": fixture_id}, headers=phone.auth
            )
        statuses[response.status_code] += 1
    return statuses


async def test_a_storm_of_follow_and_unfollow_calls_starts_each_device_once_and_keeps_history_small(
    push_settings: Settings, database_url: str, temporal_client: Client, sim: PushSim
) -> None:
    """After kick-off, 30 devices each unfollow and follow 20 times: every device ends up with
    exactly one push-to-start, the match workflow is still running, and its history holds a few
    hundred events, not one per follow. Before, every new follow was a signal and a full walk
    queued in the workflow."""
    # 30 phones register from this one address in a second: more than a client address may
    # register in a minute, and the registration limit is not what this test is about.
    settings = push_settings.model_copy(
        update={"follow_rate_limit": 10_000, "device_registration_rate_limit": DEVICES}
    )
    async with desk_road(settings, database_url, temporal_client) as road:
        fixture_id = await road.fixture()
        desk = Desk(road, fixture_id, await road.desk(fixture_id))
        followers = await phones(road.http, sim, DEVICES, prefix="storm")
        handle = temporal_client.get_workflow_handle(match_workflow_id(fixture_id))
        try:
            await desk.send("football.period_start", {"period": "1H"})
            limits = httpx.Limits(max_connections=32, max_keepalive_connections=32)
            async with httpx.AsyncClient(base_url=road.url, timeout=60, limits=limits) as api:
                counts = await asyncio.gather(
                    *(_flip(api, phone, fixture_id, CALLS_PER_DEVICE) for phone in followers)
                )
            statuses = sum(counts, Counter())
            assert statuses == {204: FOLLOWS, 201: FOLLOWS}

            async def everyone_started() -> bool:
                return all([len(await phone.starts()) >= 1 for phone in followers])

            await eventually(everyone_started, within=120, every=0.5)

            async def nothing_owed() -> bool:
                due = await road.rows(
                    """SELECT count(*) AS n FROM live_activity WHERE fixture_id = $1
                    AND (next_try_at IS NOT NULL OR lease_owner IS NOT NULL)""",
                    fixture_id,
                )
                return bool(due[0]["n"] == 0)

            await eventually(nothing_owed, within=30, every=0.5)  # a second start would be owed now
            description = await handle.describe()
            history = await handle.fetch_history()
        finally:
            await _stop(handle)

    assert description.status == WorkflowExecutionStatus.RUNNING
    starts = {phone.name: [s.event for s in await phone.starts()] for phone in followers}
    assert {name: events for name, events in starts.items() if events != ["start"]} == {}
    signals = sum(
        1 for e in history.events if e.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED
    )
    assert signals == 0, f"{signals} signals for {FOLLOWS} follows"
    assert len(history.events) < 3000, f"{len(history.events)} history events"


async def test_a_device_that_follows_too_often_gets_429_with_retry_after_and_nothing_changes(
    push_settings: Settings, database_url: str, temporal_client: Client, sim: PushSim
) -> None:
    """With `FOLLOW_RATE_LIMIT=5`, a device's sixth follow or unfollow call in a minute is 429
    `too_many_requests` with `Retry-After`, and is not carried out; another device is not held
    back. On the main of 2026-12-01 there was no limit."""
    settings = push_settings.model_copy(
        update={"follow_rate_limit": 5, "la_min_update_interval": timedelta(seconds=1)}
    )
    async with desk_road(settings, database_url, temporal_client) as road:
        fixture_id = await road.fixture()
        busy, calm = await phones(road.http, sim, 2, prefix="limit")
        for _ in range(2):
            await busy.follow(fixture_id)
            (
                await road.http.delete(
                    f"/v1/devices/{busy.device_id}/follows/{fixture_id}", headers=busy.auth
                )
            ).raise_for_status()
        await busy.follow(fixture_id)
        refused = await road.http.delete(
            f"/v1/devices/{busy.device_id}/follows/{fixture_id}", headers=busy.auth
        )
        assert refused.status_code == 429, refused.text
        assert refused.json()["error"]["code"] == "too_many_requests"
        assert 1 <= int(refused.headers["retry-after"]) <= 60
        following = await road.rows(
            "SELECT device_id::text FROM follow WHERE fixture_id = $1 ORDER BY 1", fixture_id
        )
        assert [row["device_id"] for row in following] == [busy.device_id], "the refused unfollow ran"
        await calm.follow(fixture_id)
