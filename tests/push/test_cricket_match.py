"""A real T20, ball by ball, end to end (issue 12): the provider simulator replays the bundled IPL
match (`cricket-t20`, rebuilt from a real Cricket v2 answer) into the real MatchWorkflow on a real
worker (Temporal, Postgres, Redis); a phone follows it through the device API, and the APNs
simulator's journal shows what its lock screen got.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

import asyncpg
import pytest
from temporalio.client import Client

from devkit.soak.provider_check import innings_outcome
from domain.cricket.board import cricket_fixture_id
from scoreline.settings import Settings
from scoreline.temporal.match_runs import match_workflow_id
from tests.match.cricket import (
    amended_balls,
    cricket_settings,
    recorded_lines,
    start_cricket_match,
    stored_board,
)
from tests.match.harness import stored_outcome
from tests.push.phones import Delivery, phones
from tests.push.screen import every_activity_ended
from tests.push.simulator import PushSim
from tests.push.test_match_lifecycle import device_api
from tests.support.provider import expected, line_times, running_provider
from tests.support.waiting import eventually
from tests.support.worker import running_worker
from workflows.match import MatchWorkflow

pytestmark = pytest.mark.timeout(420)

NAME = "cricket-t20"
END_OF_RECORDING = 100_000.0


async def insert_cricket_fixture(db: asyncpg.Connection, fixture_id: int) -> None:
    """The fixture row the sync writes before the start, so the phone can follow it."""
    await db.execute(
        """INSERT INTO fixture (id, sport, name, state, home_team, away_team)
        VALUES ($1, 'cricket', 'Chennai Super Kings vs Royal Challengers Bengaluru', 'scheduled',
                $2::jsonb, $3::jsonb) ON CONFLICT (id) DO NOTHING""",
        fixture_id,
        json.dumps({"id": 2, "name": "Chennai Super Kings"}),
        json.dumps({"id": 8, "name": "Royal Challengers Bengaluru"}),
    )


def first_innings_time(name: str) -> float:
    """When the recording's first innings starts (the push-to-start goes then)."""
    return next(
        float(line["t"]) for line in recorded_lines(name) if line["fixture"]["status"] == "1st Innings"
    )


def moments(updates: Sequence[Delivery]) -> list[str]:
    return [str(d.moment) for d in updates if d.alerting and d.event == "update"]


async def test_the_real_t20_plays_out_ball_by_ball(
    push_settings: Settings, temporal_client: Client, database_url: str, sim: PushSim, db: asyncpg.Connection
) -> None:
    """Every ball stored once, both innings as the provider totals them, the right result, the
    edited ball amended; the follower's Live Activity started once, updated in order, alerted on
    wickets (each alert once, a quick second wicket's replacing an unsent first's) and ended
    once with the result."""
    [(provider_id, outcome)] = expected(NAME).items()
    fixture_id = cricket_fixture_id(int(provider_id))
    await insert_cricket_fixture(db, fixture_id)
    times = line_times([NAME])
    opening = first_innings_time(NAME)
    async with running_provider([NAME]) as provider:
        config = cricket_settings(push_settings, provider)
        async with device_api(config) as api:
            [phone] = await phones(api, sim, 1, prefix="t20-")
            await phone.follow(fixture_id)
            phone.run_app(fixture_id)
            try:
                async with running_worker(temporal_client, config):
                    await start_cricket_match(temporal_client, config, fixture_id)
                    handle = temporal_client.get_workflow_handle_for(
                        MatchWorkflow.run, match_workflow_id(fixture_id)
                    )
                    await provider.step_through([t for t in times if t <= opening])
                    await asyncio.wait_for(phone.activity_running(), 30)
                    await provider.step_through([*(t for t in times if t > opening), END_OF_RECORDING])
                    result = await asyncio.wait_for(handle.result(), 60)
                    await eventually(lambda: every_activity_ended([phone]), within=30)
            finally:
                phone.cancel()

    stored = await stored_outcome(database_url, fixture_id)
    assert stored["events"] == sorted(["balls", ball] for ball in outcome["balls"])
    assert stored["event_entries"] == [1], "a ball was logged twice or never"
    assert stored["gapless"]
    assert result.state.value == "finished"
    board = await stored_board(database_url, fixture_id)
    assert board is not None
    assert innings_outcome(board) == outcome["innings"]
    assert board.result is not None and board.result.kind == "win"
    assert board.result.winner_team_id == outcome["winner_team_id"]
    assert stored["score"] == {"home": 176, "away": 173}
    assert await amended_balls(database_url, fixture_id) == outcome["amended"]

    starts, updates = await phone.starts(), await phone.updates()
    assert [d.event for d in starts] == ["start"]
    events = [d.event for d in updates]
    first_end = events.index("end")
    # The phone takes nothing after its end (an end resent when an answer was lost is dropped).
    assert set(events[first_end:]) == {"end"}
    versions = [d.state["version"] for d in (*starts, *updates[: first_end + 1])]
    stamps = [d.aps["timestamp"] for d in (*starts, *updates[: first_end + 1])]
    assert versions == sorted(versions) and stamps == sorted(stamps), "a push went out of order"
    # Alerts: each shown at most once; one not sent yet when a newer one came is replaced by it
    # (the phone shows the newer state), so on a busy machine two quick wickets may share one.
    alerting = [d.state["version"] for d in updates if d.alerting and d.event == "update"]
    assert len(alerting) == len(set(alerting)), "an alert was shown twice"
    assert 0 < moments(updates).count("wicket") <= sum(i["wickets"] for i in outcome["innings"])
    # The first innings ended with a run-out off its last ball: one alert says both.
    innings_break = next((d for d in updates if d.state["state"] == "innings_break"), None)
    if innings_break is not None and innings_break.alerting:
        assert innings_break.moment == "wicket"
        assert innings_break.aps["alert"]["title"].endswith("End of innings")
    final: dict[str, Any] = updates[first_end].state
    assert final["cricket"]["runs"] == 176 and final["cricket"]["wickets"] == 4
    assert final["cricket"]["other"] == "173/6"
    assert updates[first_end].aps["alert"]["title"] == "Result"
