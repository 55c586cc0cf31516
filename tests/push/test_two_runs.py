"""A match's run is terminated and started again from the database's facts while its phones show
states stamped ahead of the clock: the new run's pushes are still newer than anything shown.

`aps.timestamp` has whole seconds and every push is stamped at least a second after the one before,
so a desk's quick burst of changes runs the stamps ahead of the wall clock. A desk scores the match
on a real worker (with its drainer); the phone's app goes through the real device API.
"""

from __future__ import annotations

import asyncio
from itertools import pairwise

import pytest
from temporalio.client import Client

from scoreline.settings import Settings
from scoreline.temporal.match_runs import MatchRuns, match_workflow_id
from tests.push.phones import Pacer, phones
from tests.push.screen import screen
from tests.push.simulator import PushSim
from tests.push.test_match_lifecycle import GOAL, Desk, _stop, desk_road
from tests.support.waiting import eventually

pytestmark = [pytest.mark.timeout(120), pytest.mark.usefixtures("fast_worker_drain")]

BURST = 6
"""Goals sent back to back: the last one's stamp is about this many seconds ahead of the clock."""


async def test_a_run_started_again_never_sends_a_phone_an_older_timestamp(
    push_settings: Settings, database_url: str, temporal_client: Client, sim: PushSim
) -> None:
    """Before, a fresh run stamped its pushes from its own clock: its first pushes were older than
    what the phones showed, and they dropped them (a goal never shown)."""
    async with desk_road(push_settings, database_url, temporal_client) as road:
        fixture_id = await road.fixture()
        desk = Desk(road, fixture_id, await road.desk(fixture_id))
        followers = await phones(road.http, sim, 2, prefix="two-runs")
        for phone in followers:
            await phone.follow(fixture_id)
            phone.run_app(fixture_id)
        handle = temporal_client.get_workflow_handle(match_workflow_id(fixture_id))
        try:
            await Pacer(followers[0]).change(lambda: desk.send("football.period_start", {"period": "1H"}))
            await asyncio.wait_for(asyncio.gather(*(p.activity_running() for p in followers)), 30)
            for goal in range(1, BURST + 1):
                await desk.send("football.goal", {**GOAL, "minute": 10 + goal})

            async def showing(score: tuple[int, int]) -> bool:
                shown = [screen(await phone.received()) for phone in followers]
                return all(s.stamp is not None and s.score == score for s in shown)

            await eventually(lambda: showing((BURST, 0)), within=30)
            await handle.terminate("the run is started again from the database's facts")
            runs = MatchRuns.from_settings(temporal_client, road.engine, push_settings)
            assert await runs.ensure_running(fixture_id)
            await desk.send("football.goal", {**GOAL, "minute": 60})
            await eventually(lambda: showing((BURST + 1, 0)), within=30)
        finally:
            for phone in followers:
                phone.cancel()
            await _stop(handle)

    for phone in followers:
        for token in (phone.push_to_start_token, phone.update_token):
            sent = [d for d in await phone.received() if d.token == token]
            stamps = [d.aps["timestamp"] for d in sent]
            assert all(a <= b for a, b in pairwise(stamps)), f"a lower timestamp went out: {stamps}"
            assert not [d for d in sent if d.dropped_by_device], "the phone dropped a push as stale"
        shown = screen(await phone.received())
        assert shown.alerts[-1].startswith("GOAL!"), shown.alerts
