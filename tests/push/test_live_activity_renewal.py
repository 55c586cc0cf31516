"""A follower's Live Activity never outlives Apple's 8 hours, nor stays on a lock screen overnight.

Real pieces only (as in `test_match_lifecycle.py`): the provider simulator replays a recording into
the real MatchWorkflow on a real worker (Temporal, Postgres, Redis); the phone's app goes through the
real device API, reporting a fresh update token for each activity a push-to-start makes
(`generations.RenewingPhone`); the APNs simulator's journal shows what each activity received.

- Renewal: with `LA_RENEW_AFTER` a few seconds, a football match outlives its first activity: it is
  ended (dismissed at once) and the next push-started, while the watch activity runs.
- Stumps: a two-day Test ends the day's activity at stumps and starts the next when play resumes.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

import asyncpg
import pytest
from temporalio.client import Client

from domain.cricket.board import cricket_fixture_id
from domain.push_plan import STUMPS_DISMISS_AFTER_SECONDS
from scoreline.settings import Settings
from scoreline.temporal.match_runs import match_workflow_id
from tests.match.cricket import cricket_settings, recorded_lines, start_cricket_match
from tests.match.harness import fast_settings, start_match
from tests.push import seed
from tests.push.generations import RenewingPhone, assert_generations
from tests.push.phones import GOAL_KINDS, Delivery, alerts, insert_provider_fixture, steps, summary
from tests.push.simulator import PushSim
from tests.push.test_cricket_match import insert_cricket_fixture
from tests.push.test_match_lifecycle import MATERIAL_POLLS, device_api
from tests.support.provider import expected, line_times, running_provider
from tests.support.replay import replays_and_keep
from tests.support.waiting import eventually
from tests.support.worker import running_worker
from workflows.match import MatchWorkflow

pytestmark = pytest.mark.timeout(300)

RENEW_AFTER = timedelta(seconds=20)
"""Longer than the match takes to play without its pause (material lines only), shorter than the pause."""
FOOTBALL = "football-basic"
FIRST_GOAL = 830.0
TEST_MATCH = "cricket-test-two-days"
END_OF_RECORDING = 1_000_000.0


async def test_a_match_that_outlives_its_activity_gets_a_new_one_before_the_cap(
    push_settings: Settings, temporal_client: Client, sim: PushSim, db: asyncpg.Connection
) -> None:
    """`LA_RENEW_AFTER` = 20 s and a pause in the match longer than that: the phone gets start(1)
    … end(1), dismissed at once and quiet, then start(2) with the latest state … and, after any
    later renewals, the final end; no activity hears anything after its end; the device API lists
    every generation, ended; a late report for an ended one is taken, and it stays ended."""
    [fixture_key] = expected(FOOTBALL)
    fixture_id = int(fixture_key)
    await insert_provider_fixture(db, fixture_id)
    async with running_provider([FOOTBALL]) as provider:
        config = fast_settings(push_settings, provider.url).model_copy(update={"la_renew_after": RENEW_AFTER})
        async with device_api(config) as api:
            phone = RenewingPhone(api, sim, "renewal")
            await phone.register()
            await phone.follow(fixture_id)
            phone.run_app_for_each_activity(fixture_id)
            try:
                async with running_worker(temporal_client, config):
                    handle = await start_match(temporal_client, config, fixture_id)
                    started = False
                    # Lines that only tick the clock are left out: the match plays in seconds.
                    for step in [step for step in steps(FOOTBALL) if step.material]:
                        await provider.step_through([step.t], polls_per_step=MATERIAL_POLLS)
                        if not started:
                            await eventually(lambda: phone.running(1), within=30, every=0.05)
                            started = True
                        if step.t == FIRST_GOAL:
                            # The match goes quiet for longer than an activity may run.
                            await eventually(lambda: phone.running(2), within=60, every=0.05)
                    await provider.step_through([END_OF_RECORDING])
                    outcome = await asyncio.wait_for(handle.result(), 60)
                    await eventually(phone.ended, within=30)
                    history = await handle.fetch_history()
                listed = await phone.listed(fixture_id)
                after_the_end = seed.apns_token()
                late = await api.put(
                    f"/v1/devices/{phone.device_id}/live-activities/{fixture_id}",
                    json={"push_token": after_the_end, "generation": 1},
                    headers=phone.auth,
                )
            finally:
                phone.cancel()

    assert outcome.state.value == "finished"
    await replays_and_keep("match-live-activity-renewal", [MatchWorkflow], history)
    starts, activities = await phone.starts(), await phone.activities()
    assert len(starts) >= 2, [s.aps for s in starts]
    chain = assert_generations(starts, activities, push_settings.apns_topic)
    assert "generation" not in starts[0].aps["attributes"]
    assert starts[1].aps["attributes"]["generation"] == 2
    assert starts[1].aps["attributes"]["fixtureId"] == fixture_id
    renewed = activities[1][-1]
    assert (starts[1].score, starts[1].state["version"]) == (renewed.score, renewed.state["version"]), (
        "the new activity starts where the old one ended"
    )
    for generation in range(1, len(starts)):
        end = activities[generation][-1]
        assert not end.alerting and end.priority == 10, end.aps
        assert end.aps["dismissal-date"] == end.aps["timestamp"], "a renewed activity is dismissed at once"
    final = activities[len(starts)][-1]
    assert (final.score, final.state["state"]) == ((3, 1), "finished")
    assert final.aps["alert"]["title"] == "Full time"
    assert final.aps["dismissal-date"] == final.aps["timestamp"] + 900
    goal_alerts = [d for d in alerts(chain) if d.moment in GOAL_KINDS]
    assert len({d.state["version"] for d in goal_alerts}) == len(goal_alerts), summary(chain)
    assert listed == [(n, "ended") for n in range(len(starts), 0, -1)]
    assert (late.status_code, late.json()["status"]) == (200, "ended"), (
        "a report after the end is owed the end"
    )
    tokens = await db.fetch(
        "SELECT generation, push_token FROM live_activity WHERE fixture_id = $1 ORDER BY generation",
        fixture_id,
    )
    reported = [phone.tokens[n] for n in range(1, len(starts) + 1)]
    assert [row["push_token"] for row in tokens] == [after_the_end, *reported[1:]]


def day_of_play_times(name: str) -> tuple[list[float], float, float]:
    """Every line's time, when play first starts, and when stumps is drawn."""
    lines = recorded_lines(name)
    opening = next(float(line["t"]) for line in lines if line["fixture"]["status"] == "1st Innings")
    stumps = next(float(line["t"]) for line in lines if line["fixture"]["status"].startswith("Stump"))
    return line_times([name]), opening, stumps


async def test_a_test_match_ends_the_days_activity_at_stumps_and_starts_one_next_morning(
    push_settings: Settings, temporal_client: Client, sim: PushSim, db: asyncpg.Connection
) -> None:
    """cricket-test-two-days: day one's activity gets the stumps state, then its end (quiet, shown
    for a while, then dismissed); nothing reaches the phone overnight; when play resumes a second
    activity is push-started with day two's state and runs to the result."""
    [(provider_id, _)] = expected(TEST_MATCH).items()
    fixture_id = cricket_fixture_id(int(provider_id))
    await insert_cricket_fixture(db, fixture_id)
    times, opening, stumps = day_of_play_times(TEST_MATCH)
    async with running_provider([TEST_MATCH]) as provider:
        config = cricket_settings(push_settings, provider)
        async with device_api(config) as api:
            phone = RenewingPhone(api, sim, "test-match")
            await phone.register()
            await phone.follow(fixture_id)
            phone.run_app_for_each_activity(fixture_id)
            try:
                async with running_worker(temporal_client, config):
                    await start_cricket_match(temporal_client, config, fixture_id)
                    handle = temporal_client.get_workflow_handle_for(
                        MatchWorkflow.run, match_workflow_id(fixture_id)
                    )
                    await provider.step_through([t for t in times if t <= opening])
                    await eventually(lambda: phone.running(1), within=30, every=0.05)
                    await provider.step_through([t for t in times if opening < t <= stumps])

                    async def day_one_ended() -> bool:
                        return any(d.event == "end" for d in (await phone.activities())[1])

                    await eventually(day_one_ended, within=30, every=0.05)
                    overnight = await phone.received_everywhere()
                    await asyncio.sleep(1.0)  # the stumps interval is polled meanwhile
                    assert await phone.received_everywhere() == overnight, "a push went out overnight"
                    await provider.step_through([t for t in times if t > stumps])
                    await eventually(lambda: phone.running(2), within=30, every=0.05)
                    await provider.step_through([END_OF_RECORDING])
                    outcome = await asyncio.wait_for(handle.result(), 120)
                    await eventually(phone.ended, within=30)
                    history = await handle.fetch_history()
                listed = await phone.listed(fixture_id)
            finally:
                phone.cancel()

    assert outcome.state.value == "finished"
    await replays_and_keep("match-live-activity-stumps", [MatchWorkflow], history)
    starts, activities = await phone.starts(), await phone.activities()
    assert_generations(starts, activities, push_settings.apns_topic)
    assert len(starts) == 2, [s.aps for s in starts]
    day_one, day_two = activities[1], activities[2]
    stumps_update, day_end = day_one[-2], day_one[-1]
    assert (stumps_update.event, stumps_update.state["state"], stumps_update.priority) == (
        "update", "stumps", 10
    )  # fmt: skip
    assert (day_end.event, day_end.state["state"], day_end.alerting) == ("end", "stumps", False)
    assert day_end.aps["dismissal-date"] == day_end.aps["timestamp"] + STUMPS_DISMISS_AFTER_SECONDS
    assert starts[1].state["state"] == "innings_2" and starts[1].aps["attributes"]["generation"] == 2
    result: Delivery = day_two[-1]
    assert (result.event, result.state["state"]) == ("end", "finished")
    assert result.aps["alert"]["title"] == "Result"
    assert listed == [(2, "ended"), (1, "ended")]
    assert not any(d.state["state"] == "stumps" for d in day_two), "day two heard of the night"
