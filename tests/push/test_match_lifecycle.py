"""Live Activities driven by the MatchWorkflow, end to end (issue 6).

Real pieces only: the provider simulator replays a recorded match into the real MatchWorkflow on a
real worker (Temporal, Postgres, Redis), or desks score a match over the command API; the app's
side goes through the real device API over HTTP (register, follow, report the activity's update
token as soon as the push-to-start arrives); the worker's APNs client talks HTTP/2 over TLS, with a
signed JWT, to the APNs simulator, whose journal (headers + parsed payloads) the assertions read.

Changes are paced one wall-clock second apart (`phones.Pacer`): `aps.timestamp` has whole seconds.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from datetime import timedelta
from functools import partial
from typing import Any

import asyncpg
import httpx
import pytest
from temporalio.client import Client, WorkflowExecutionStatus, WorkflowHistory
from temporalio.service import RPCError

from api.app import create_app
from scoreline.db.urls import asyncpg_dsn
from scoreline.settings import Settings
from scoreline.temporal.match_runs import match_workflow_id
from tests.commands.harness import Road, road_settings, running_api, spread_fixture_ids
from tests.match.harness import fast_settings, start_match
from tests.push.phones import (
    GOAL_KINDS,
    Delivery,
    Pacer,
    Phone,
    Step,
    alerts,
    assert_lifecycle,
    fresh,
    insert_provider_fixture,
    phones,
    steps,
    summary,
)
from tests.push.screen import every_activity_ended, screen
from tests.push.simulator import PushSim
from tests.support.http import serve
from tests.support.provider import Provider, expected, running_provider
from tests.support.replay import replays_and_keep
from tests.support.waiting import eventually
from tests.support.worker import running_worker
from workflows.match import MatchWorkflow

pytestmark = pytest.mark.timeout(90)

END_OF_RECORDING = 10_000.0
MATERIAL_POLLS = 6
"""Provider requests to wait for after a material line: at least three polls (one or two requests
each), so the two consecutive listings a removal needs are both ingested."""
GOAL = {"side": "home", "minute": 12, "player_id": 109, "kind": "open_play"}


@asynccontextmanager
async def device_api(settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    async with serve(create_app(settings)) as url, httpx.AsyncClient(base_url=url, timeout=30) as client:
        yield client


async def replay_with_followers(
    name: str, settings: Settings, temporal_client: Client, sim: PushSim, db: asyncpg.Connection, count: int
) -> tuple[list[Phone], int, WorkflowHistory]:
    """Replay recording `name` through the MatchWorkflow with `count` phones following it, to the end."""
    [fixture_key] = expected(name)
    fixture_id = int(fixture_key)
    await insert_provider_fixture(db, fixture_id)
    async with running_provider([name]) as provider:
        config = fast_settings(settings, provider.url)
        async with device_api(config) as api:
            followers = await phones(api, sim, count, prefix=name)
            for phone in followers:
                await phone.follow(fixture_id)
                phone.run_app(fixture_id)

            async def settled(newest: Delivery) -> bool:
                """The push shows the stored scoreboard: the step's last ingest was pushed (a
                removed goal takes two polls: the score drops first, the retraction follows)."""
                version = await db.fetchval(
                    "SELECT version FROM scoreboard WHERE fixture_id = $1", fixture_id
                )
                return bool(newest.state["version"] == version)

            pacer = Pacer(followers[0], settled)
            try:
                async with running_worker(temporal_client, config):
                    handle = await start_match(temporal_client, config, fixture_id)
                    started = False
                    for step in steps(name):
                        if not step.material:
                            await provider.step_through([step.t])
                            continue
                        await pacer.change(partial(show, provider, step))
                        if not started:
                            # Every app reports its update token before the match goes on, as a
                            # phone does within moments of the start; no goal falls in that gap.
                            await asyncio.wait_for(
                                asyncio.gather(*(phone.activity_running() for phone in followers)), 30
                            )
                            started = True
                    await provider.step_through([END_OF_RECORDING])
                    outcome = await asyncio.wait_for(handle.result(), 30)
                    assert outcome.state.value == "finished"
                    await eventually(lambda: every_activity_ended(followers), within=30)
                    history = await handle.fetch_history()
            finally:
                for phone in followers:
                    phone.cancel()
    return followers, fixture_id, history


async def show(provider: Provider, step: Step) -> None:
    """Move the replay clock to a material line and wait until every poll showing it was ingested."""
    await provider.step_through([step.t], polls_per_step=MATERIAL_POLLS)


def same_everywhere(received: Sequence[Sequence[Delivery]]) -> None:
    """Every follower got the very same pushes (only the device token differs)."""
    first = [(d.aps, d.priority) for d in received[0]]
    for other in received[1:]:
        assert [(d.aps, d.priority) for d in other] == first


async def test_a_replayed_match_starts_updates_and_ends_every_followers_live_activity(
    push_settings: Settings, temporal_client: Client, sim: PushSim, db: asyncpg.Connection
) -> None:
    """football-basic, three followers: one start each at kick-off; then, on the update token,
    updates in order (timestamps strictly up, versions never down), one alert per goal (and one
    for the red card), state changes at priority 10 without an alert; one `end` with a dismissal
    date last; the rows end `ended`."""
    followers, fixture_id, history = await replay_with_followers(
        "football-basic", push_settings, temporal_client, sim, db, count=3
    )
    await replays_and_keep("match-provider-pushes", [MatchWorkflow], history)
    topic = push_settings.apns_topic
    received = []
    for phone in followers:
        starts = await phone.starts()
        updates = fresh(starts, await phone.updates())
        assert_lifecycle(starts, updates, topic)
        received.append(updates)
        (start,) = starts
        assert (start.score, start.state["state"]) == ((0, 0), "live_first_half")
        assert start.aps["attributes"] == {
            "fixtureId": fixture_id,
            "homeTeam": "Riverside FC",
            "awayTeam": "Harbour United",
            "competition": "Premier League",
        }

        goal_alerts = [u for u in alerts(updates) if u.moment in GOAL_KINDS]
        assert [(u.moment, u.score) for u in goal_alerts] == [
            ("goal", (1, 0)),
            ("penalty_goal", (1, 1)),
            ("goal", (2, 1)),
            ("own_goal", (3, 1)),
        ], summary(updates)
        assert [u.moment for u in alerts(updates)] == [
            "goal", "penalty_goal", "goal", "red_card", "own_goal"
        ]  # fmt: skip
        for update in alerts(updates):
            assert update.priority == 10
            assert update.aps["alert"]["body"].startswith("Riverside FC")
        # Every score the phone shows came with its goal's alert: no silent goal, none twice.
        scores = [start.score, *(u.score for u in updates)]
        raised = [u for u, before in zip(updates, scores[:-1], strict=True) if sum(u.score) > sum(before)]
        assert raised == goal_alerts
        quiet = [u for u in updates[:-1] if not u.alerting]
        assert [(u.state["state"], u.priority) for u in quiet] == [
            ("half_time", 10), ("live_second_half", 10), ("finished", 10)
        ], summary(updates)  # fmt: skip
        end = updates[-1]
        assert (end.score, end.state["state"]) == ((3, 1), "finished")
        assert end.aps["alert"]["title"] == "Full time"
        assert end.aps["dismissal-date"] == end.aps["timestamp"] + 900
    same_everywhere(received)
    rows = await db.fetch("SELECT status FROM live_activity WHERE fixture_id = $1", fixture_id)
    assert [row["status"] for row in rows] == ["ended"] * 3


async def test_a_goal_retracted_by_var_sends_the_corrected_score_without_an_alert(
    push_settings: Settings, temporal_client: Client, sim: PushSim, db: asyncpg.Connection
) -> None:
    """football-correction: the away goal at 33' alerts once; its VAR retraction is an update at
    priority 10 with the score back down and no alert; nothing alerts twice."""
    followers, _, history = await replay_with_followers(
        "football-correction", push_settings, temporal_client, sim, db, count=2
    )
    await replays_and_keep("match-provider-correction-pushes", [MatchWorkflow], history)
    topic = push_settings.apns_topic
    received = []
    for phone in followers:
        starts = await phone.starts()
        updates = fresh(starts, await phone.updates())
        # Not strict: the score-drop update and the retraction update often share a second, see
        # `test_a_removed_goal_is_retracted_only_after_a_second_provider_listing`.
        assert_lifecycle(starts, updates, topic, strict_timestamps=False)
        received.append(updates)
        goal_alerts = [u for u in alerts(updates) if u.moment in GOAL_KINDS]
        assert [u.score for u in goal_alerts] == [(1, 0), (1, 1), (1, 1)], summary(updates)
        disallowed = goal_alerts[1]
        # The score drop itself is pushed as a correction, and so is the provider's retraction.
        retractions = [u for u in updates if u.moment == "retraction"]
        assert 1 <= len(retractions) <= 2, summary(updates)
        assert all((u.score, u.alerting, u.priority) == ((1, 0), False, 10) for u in retractions)
        retraction = retractions[-1]
        # The score drops as soon as the provider's does; the retraction itself is only logged on
        # the second listing without the goal (one odd response retracts nothing), so a first,
        # quiet update may show the corrected score just before it.
        corrected = updates[updates.index(disallowed) + 1 : updates.index(retraction) + 1]
        assert 1 <= len(corrected) <= 2, summary(updates)
        assert all((u.score, u.alerting) == ((1, 0), False) for u in corrected), summary(updates)
        assert retraction.state["version"] > disallowed.state["version"]
        assert "retraction" not in {u.moment for u in alerts(updates)}
        # The goal alerted once: no other alerting push carried the retracted goal's score line.
        assert sum(1 for u in alerts(updates) if u.score == (1, 1) and u.seq < retraction.seq) == 1
        assert (updates[-1].event, updates[-1].score) == ("end", (1, 1))
    same_everywhere(received)


# --- desk-scored matches -------------------------------------------------------------------------


@asynccontextmanager
async def desk_road(settings: Settings, database_url: str, temporal_client: Client) -> AsyncIterator[Road]:
    """API (commands + devices) and a worker; full time settles in a second."""
    await spread_fixture_ids(database_url)
    tuned = road_settings(settings, full_time_settle=timedelta(seconds=1))
    async with running_worker(temporal_client, tuned), running_api(tuned, database_url) as road:
        yield road


class Desk:
    """A desk sending commands, each after the last was answered (`saw` = the last seq)."""

    def __init__(self, road: Road, fixture_id: int, token: str) -> None:
        self.road, self.fixture_id, self.token, self.seq = road, fixture_id, token, 0

    async def send(self, code: str, input: Mapping[str, Any]) -> None:
        response = await self.road.send(self.token, self.fixture_id, code, input, saw=self.seq)
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["outcome"] == "accepted", body
        self.seq = body["seq"]


async def test_a_desk_scored_match_starts_alerts_the_goal_and_ends(
    push_settings: Settings, database_url: str, temporal_client: Client, sim: PushSim
) -> None:
    """Desk commands drive the lifecycle: start at the first period, an alert for the goal, quiet
    priority-10 updates for half time, the second half and full time, `end` after the settle."""
    async with desk_road(push_settings, database_url, temporal_client) as road:
        fixture_id = await road.fixture()
        desk = Desk(road, fixture_id, await road.desk(fixture_id))
        followers = await phones(road.http, sim, 2, prefix="desk")
        for phone in followers:
            await phone.follow(fixture_id)
            phone.run_app(fixture_id)
        pacer = Pacer(followers[0])
        try:
            await pacer.change(lambda: desk.send("football.period_start", {"period": "1H"}))
            await asyncio.wait_for(asyncio.gather(*(p.activity_running() for p in followers)), 30)
            await pacer.change(lambda: desk.send("football.goal", GOAL))
            await pacer.change(lambda: desk.send("football.period_end", {"period": "1H"}))
            await pacer.change(lambda: desk.send("football.period_start", {"period": "2H"}))
            # Full time: the `finished` update now, the `end` once the settle period passed.
            await pacer.change(lambda: desk.send("football.period_end", {"period": "2H"}))
            handle = temporal_client.get_workflow_handle_for(MatchWorkflow.run, match_workflow_id(fixture_id))
            outcome = await asyncio.wait_for(handle.result(), 30)
            assert (outcome.state.value, outcome.home, outcome.away) == ("finished", 1, 0)
            await eventually(lambda: every_activity_ended(followers), within=30)
            await replays_and_keep("match-desk-pushes", [MatchWorkflow], await handle.fetch_history())
        finally:
            for phone in followers:
                phone.cancel()

    received = []
    for phone in followers:
        starts = await phone.starts()
        updates = fresh(starts, await phone.updates())
        assert_lifecycle(starts, updates, push_settings.apns_topic)
        received.append(updates)
        assert [(u.event, u.state["state"], u.score, u.alerting, u.priority) for u in updates] == [
            ("update", "live_first_half", (1, 0), True, 10),
            ("update", "half_time", (1, 0), False, 10),
            ("update", "live_second_half", (1, 0), False, 10),
            ("update", "finished", (1, 0), False, 10),
            ("end", "finished", (1, 0), True, 10),
        ], summary(updates)
        goal = updates[0]
        assert (goal.state["lastMoment"]["kind"], goal.state["lastMoment"]["side"]) == ("goal", "home")
        assert goal.aps["alert"]["title"] == "GOAL! Riverside"
    same_everywhere(received)


async def test_a_follow_after_kickoff_starts_the_live_activity_at_once(
    push_settings: Settings, database_url: str, temporal_client: Client, sim: PushSim
) -> None:
    """A follow while the match runs fills the late follower's mailbox: it gets its push-to-start
    with the current state at once, then the updates; the early follower is not started twice."""
    async with desk_road(push_settings, database_url, temporal_client) as road:
        fixture_id = await road.fixture()
        desk = Desk(road, fixture_id, await road.desk(fixture_id))
        early, late = await phones(road.http, sim, 2, prefix="follow")
        await early.follow(fixture_id)
        early.run_app(fixture_id)
        pacer = Pacer(early)
        handle = temporal_client.get_workflow_handle(match_workflow_id(fixture_id))
        try:
            await pacer.change(lambda: desk.send("football.period_start", {"period": "1H"}))
            await asyncio.wait_for(early.activity_running(), 30)
            await pacer.change(lambda: desk.send("football.goal", GOAL))
            assert not await late.starts()

            await late.follow(fixture_id)
            late.run_app(fixture_id)
            await asyncio.wait_for(late.activity_running(), 30)
            # A later change reaches the late follower's activity too.
            await pacer.change(lambda: desk.send("football.period_end", {"period": "1H"}))
            await eventually(late.updates, within=20)
            history = await handle.fetch_history()
        finally:
            early.cancel()
            late.cancel()
            await _stop(handle)

    await replays_and_keep("match-late-follower", [MatchWorkflow], history)
    topic = push_settings.apns_topic
    (late_start,) = await late.starts()
    assert (late_start.event, late_start.score, late_start.state["state"]) == (
        "start", (1, 0), "live_first_half"
    )  # fmt: skip
    assert late_start.status == 200 and late_start.dropped_by_device is None
    assert late_start.aps["alert"]["title"] == "Riverside v Harbour"
    assert [(u.event, u.state["state"], u.score) for u in fresh([late_start], await late.updates())] == [
        ("update", "half_time", (1, 0))
    ]
    early_starts = await early.starts()
    assert [s.event for s in early_starts] == ["start"], "the signal started the early follower again"
    early_updates = fresh(early_starts, await early.updates())
    assert [(u.state["state"], u.score, u.alerting) for u in early_updates] == [
        ("live_first_half", (1, 0), True),
        ("half_time", (1, 0), False),
    ]
    for delivery in [*early_updates, late_start]:
        assert delivery.headers["apns-topic"] == f"{topic}.push-type.liveactivity"


async def _stop(handle: Any) -> None:
    """End a match workflow the test leaves running (its id is unique to this test's fixture)."""
    try:
        if (await handle.describe()).status == WorkflowExecutionStatus.RUNNING:
            await handle.terminate(f"test over ({uuid.uuid4().hex[:6]})")
    except RPCError:
        pass


async def test_two_desk_changes_in_one_second_still_reach_the_phone_with_increasing_timestamps(
    push_settings: Settings, database_url: str, temporal_client: Client, sim: PushSim
) -> None:
    """A stoppage-time goal and the whistle right after it, in one second: the phone shows the goal's
    alert and then half time (the whistle's state newer, not dropped as stale); if the goal's
    request had not gone out yet, its alert rides with the whistle's state."""
    async with desk_road(push_settings, database_url, temporal_client) as road:
        fixture_id = await road.fixture()
        desk = Desk(road, fixture_id, await road.desk(fixture_id))
        (phone,) = await phones(road.http, sim, 1, prefix="quick")
        await phone.follow(fixture_id)
        phone.run_app(fixture_id)
        handle = temporal_client.get_workflow_handle(match_workflow_id(fixture_id))
        try:
            await Pacer(phone).change(lambda: desk.send("football.period_start", {"period": "1H"}))
            await asyncio.wait_for(phone.activity_running(), 30)
            await asyncio.sleep(1.02 - time.time() % 1)  # just past a second boundary
            await desk.send("football.goal", GOAL)
            await desk.send("football.period_end", {"period": "1H"})

            async def half_time_shown() -> bool:
                return screen(await phone.received()).state.get("state") == "half_time"

            await eventually(half_time_shown, within=20)
        finally:
            phone.cancel()
            await _stop(handle)
    updates = fresh(await phone.starts(), await phone.updates())
    shown = screen(await phone.received())
    assert shown.score == (1, 0)
    assert [alert.split(":")[0] for alert in shown.alerts[1:]] == ["GOAL! Riverside"], summary(updates)
    stamps = [u.aps["timestamp"] for u in updates]
    assert stamps == sorted(set(stamps)), summary(updates)


async def test_a_removed_goal_is_retracted_only_after_a_second_provider_listing(
    settings: Settings, temporal_client: Client, database_url: str
) -> None:
    """A removal must be seen on two consecutive listings (activities/ingest/plan.py): with the
    production-like poll interval of 1.5 s, the retraction needs a second upstream response."""
    name, fixture_id = "football-correction", 81000002
    db = await asyncpg.connect(asyncpg_dsn(database_url))
    async with running_provider([name], t=2060.0) as provider:
        config = fast_settings(settings, provider.url).model_copy(
            # Live polls only (no reconcile fetch), as between two reconciles in production.
            update={"poll_interval_live": timedelta(seconds=1.5), "reconcile_interval": None}
        )
        try:
            async with running_worker(temporal_client, config):
                handle = await start_match(temporal_client, config, fixture_id)
                try:
                    await eventually(lambda: _score_is(db, fixture_id, (1, 1)), within=20)
                    await provider.set_clock(2180.0)  # the away goal is gone, the score 1-0
                    await eventually(lambda: _score_is(db, fixture_id, (1, 0)), within=20)
                    served_at_drop = await provider.requests_served()
                    await eventually(lambda: _retracted(db, fixture_id), within=20)
                    served_at_retraction = await provider.requests_served()
                finally:
                    await handle.terminate("test over")
        finally:
            await db.close()
    assert served_at_retraction > served_at_drop, "retracted on the response that dropped the score"


async def _score_is(db: asyncpg.Connection, fixture_id: int, score: tuple[int, int]) -> bool:
    row = await db.fetchrow("SELECT home_score, away_score FROM scoreboard WHERE fixture_id = $1", fixture_id)
    return row is not None and (row["home_score"], row["away_score"]) == score


async def _retracted(db: asyncpg.Connection, fixture_id: int) -> bool:
    found = await db.fetchval(
        "SELECT count(*) FROM timeline_item WHERE fixture_id = $1 AND kind = 'retraction'", fixture_id
    )
    return bool(found)
