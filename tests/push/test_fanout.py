"""The fan-out activity on a real worker, against the simulator: lifecycle, dead tokens, throttling, pacing."""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter
from dataclasses import replace
from datetime import datetime
from itertools import pairwise
from typing import Any

import asyncpg
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.client import Client, WorkflowFailureError
from temporalio.exceptions import ApplicationError

from activities.push.apns import ApnsClient
from activities.push.fanout import FanoutConfig
from activities.push.store import PushStore
from domain.failures import APNS_CONFIG_ERROR
from domain.moments import KeyMoment
from domain.pushes import LiveState, PushInput, PushResult
from scoreline.devices.store import ActivityEndedError, report_activity_token
from tests.push import seed
from tests.push.simulator import PushSim
from tests.push.workflow import PushOnceWorkflow, push_worker, run_push

NOW = 1_790_000_000


def push(
    kind: str = "update", version: int = 1, *, key: str | None = None, timestamp: int = NOW, **fields: Any
) -> PushInput:
    return PushInput.model_validate(
        {
            "fixture_id": seed.FIXTURE_ID,
            "event_key": key or f"v{version}",
            "kind": kind,
            "state": LiveState(home=1, away=0, state="live_first_half", minute=23, version=version),
            "timestamp": timestamp,
            **fields,
        }
    )


def by_token(pushes: list[dict[str, Any]]) -> Counter[str]:
    return Counter(p["token"] for p in pushes)


async def test_kickoff_goal_and_full_time_reach_every_follower_once(
    temporal_client: Client,
    task_queue: str,
    engine: AsyncEngine,
    apns_client: ApnsClient,
    fanout_config: FanoutConfig,
    sim: PushSim,
    db: asyncpg.Connection,
) -> None:
    """Start to every follower, a goal alert to every activity, end with a dismissal date; repeats send nothing."""
    await seed.fixture(db)
    followers = await seed.followers(db, 5)
    start = push("start", 0, key="kickoff", priority=10, timestamp=NOW - 60)
    goal = push(priority=10, alert=True, moment=KeyMoment(kind="goal", side="home", minute=23))
    end = push("end", 2, key="full_time", priority=10, alert=True, timestamp=NOW + 60)
    async with push_worker(temporal_client, task_queue, engine, apns_client, fanout_config):
        started = await run_push(temporal_client, task_queue, start)
        starts = await sim.pushes()
        # The app reports each new activity's update token (PUT /v1/devices/{id}/live-activities/...).
        update_tokens = {f.device_id: seed.apns_token() for f in followers}
        for device_id, token in update_tokens.items():
            await db.execute(
                "UPDATE live_activity SET status = 'active', push_token = $2 WHERE device_id = $1",
                device_id,
                token,
            )
        scored = await run_push(temporal_client, task_queue, goal)
        again = await run_push(temporal_client, task_queue, goal)
        ended = await run_push(temporal_client, task_queue, end)

    assert (started.sent, started.targets) == (5, 5)
    assert by_token(starts) == {f.push_to_start_token: 1 for f in followers}
    first = starts[0]
    assert first["status"] == 200 and first["dropped_by_device"] is None
    assert first["headers"]["apns-push-type"] == "liveactivity"
    assert first["headers"]["apns-topic"] == "com.scoreline.app.push-type.liveactivity"
    assert first["headers"]["apns-priority"] == "10"
    aps = first["payload"]["aps"]
    assert aps["event"] == "start" and aps["timestamp"] == NOW - 60
    assert aps["attributes-type"] == "MatchActivityAttributes"
    assert aps["attributes"] == {
        "fixtureId": seed.FIXTURE_ID,
        "homeTeam": seed.HOME,
        "awayTeam": seed.AWAY,
        "competition": "Premier League",
    }
    assert aps["content-state"] == {
        "homeName": seed.HOME,
        "awayName": seed.AWAY,
        "homeScore": 1,
        "awayScore": 0,
        "state": "live_first_half",
        "minute": 23,
        "version": 0,
    }
    assert aps["alert"]["title"] == f"{seed.HOME} v {seed.AWAY}"

    assert (scored.effect, scored.sent) == ("la.alert", 5)
    assert again == scored, "the same goal again is gated: nothing new is sent"
    everything = await sim.pushes()
    goals = [p for p in everything if p["payload"]["aps"]["event"] == "update"]
    assert by_token(goals) == {token: 1 for token in update_tokens.values()}
    goal_aps = goals[0]["payload"]["aps"]
    assert goals[0]["headers"]["apns-priority"] == "10"
    assert goal_aps["alert"]["title"] == f"GOAL! {seed.HOME}"
    assert goal_aps["content-state"]["lastMoment"] == {"kind": "goal", "side": "home", "minute": 23}
    assert goal_aps["stale-date"] == NOW + 900

    assert (ended.effect, ended.sent) == ("la.end", 5)
    ends = [p for p in everything if p["payload"]["aps"]["event"] == "end"]
    assert by_token(ends) == {token: 1 for token in update_tokens.values()}
    assert ends[0]["payload"]["aps"]["dismissal-date"] == NOW + 60 + 900
    assert ends[0]["payload"]["aps"]["alert"]["title"] == "Full time"
    states = await db.fetch("SELECT status, ended_at IS NOT NULL AS ended FROM live_activity")
    assert {(r["status"], r["ended"]) for r in states} == {("ended", True)}
    attempts = await db.fetchval("SELECT count(*) FROM push_attempt WHERE status = 200")
    assert attempts == 15


async def test_unregistered_token_is_deactivated_after_the_first_410_and_never_tried_again(
    temporal_client: Client,
    task_queue: str,
    engine: AsyncEngine,
    apns_client: ApnsClient,
    fanout_config: FanoutConfig,
    sim: PushSim,
    db: asyncpg.Connection,
) -> None:
    """410 Unregistered switches the token off (activity token and push-to-start token alike)."""
    await seed.fixture(db)
    running = await seed.running_activities(db, 3)
    dead = running[0].push_token
    await sim.unregister(dead)
    newcomers = await seed.followers(db, 2)
    dead_start = newcomers[0].push_to_start_token
    await sim.unregister(dead_start)
    async with push_worker(temporal_client, task_queue, engine, apns_client, fanout_config):
        first = await run_push(temporal_client, task_queue, push(version=1))
        second = await run_push(temporal_client, task_queue, push(version=2))
        kickoff = await run_push(temporal_client, task_queue, push("start", 2, key="kickoff"))
        kickoff_again = await run_push(temporal_client, task_queue, push("start", 3, key="restart"))

    assert (first.sent, first.deactivated) == (2, 1)
    assert (second.sent, second.deactivated, second.targets) == (2, 0, 2)
    assert [p["status"] for p in await sim.pushes(token=dead)] == [410]
    row = await db.fetchrow(
        "SELECT status, push_token_active FROM live_activity WHERE id = $1", running[0].live_activity_id
    )
    assert (row["status"], row["push_token_active"]) == ("ended", False)
    attempt = await db.fetchrow(
        "SELECT status, reason FROM push_attempt WHERE live_activity_id = $1", running[0].live_activity_id
    )
    assert (attempt["status"], attempt["reason"]) == (410, "Unregistered")

    # Followers 1-3 have running activities already: only the two newcomers get a start.
    assert (kickoff.sent, kickoff.deactivated) == (1, 1)
    assert kickoff_again.targets == 0
    assert [p["status"] for p in await sim.pushes(token=dead_start)] == [410]
    active = await db.fetchval(
        "SELECT push_to_start_active FROM device WHERE id = $1", newcomers[0].device_id
    )
    assert active is False


async def test_throttling_storm_backs_off_and_still_delivers_each_push_once(
    temporal_client: Client,
    task_queue: str,
    engine: AsyncEngine,
    apns_client: ApnsClient,
    fanout_config: FanoutConfig,
    sim: PushSim,
    db: asyncpg.Connection,
) -> None:
    """300 answers of 429 across 200 devices: every device still gets its goal once, after a pause."""
    await seed.fixture(db)
    running = await seed.running_activities(db, 200)
    await sim.fault(status=429, count=300)
    goal = push(priority=10, alert=True, moment=KeyMoment(kind="goal", side="away"))
    async with push_worker(temporal_client, task_queue, engine, apns_client, fanout_config):
        result = await run_push(temporal_client, task_queue, goal)

    pushes = await sim.pushes()
    statuses = Counter(p["status"] for p in pushes)
    assert statuses == {429: 300, 200: 200}
    delivered = by_token([p for p in pushes if p["status"] == 200])
    assert delivered == {a.push_token: 1 for a in running}
    assert (result.sent, result.in_doubt) == (200, 0)
    # Each retry after a 429 waited its backoff (0.05 s with jitter down to half).
    for token in {p["token"] for p in pushes if p["status"] == 429}:
        times = [datetime.fromisoformat(p["received_at"]) for p in pushes if p["token"] == token]
        gaps = [(later - earlier).total_seconds() for earlier, later in pairwise(times)]
        assert gaps and min(gaps) >= 0.02, gaps


async def test_older_states_are_dropped_and_routine_changes_coalesced(
    temporal_client: Client,
    task_queue: str,
    engine: AsyncEngine,
    apns_client: ApnsClient,
    fanout_config: FanoutConfig,
    sim: PushSim,
    db: asyncpg.Connection,
) -> None:
    """Routine updates are spaced by LA_MIN_UPDATE_INTERVAL per activity; an older version never goes out."""
    await seed.fixture(db)
    running = await seed.running_activities(db, 3)
    paced = replace(fanout_config, min_update_interval=1.0)
    async with push_worker(temporal_client, task_queue, engine, apns_client, paced):
        first = await run_push(temporal_client, task_queue, push(version=5, routine=True))
        second = await run_push(temporal_client, task_queue, push(version=6, routine=True, timestamp=NOW + 1))
        older = await run_push(temporal_client, task_queue, push(version=4, timestamp=NOW + 2))

    assert first.sent == 3 and first.deferred == 0
    assert second.sent == 3 and second.deferred == 3
    assert (older.sent, older.stale) == (0, 3)
    for activity in running:
        sent = await sim.pushes(token=activity.push_token)
        assert [p["payload"]["aps"]["content-state"]["version"] for p in sent] == [5, 6]
        assert {p["headers"]["apns-priority"] for p in sent} == {"5"}
        times = [datetime.fromisoformat(p["received_at"]) for p in sent]
        # Without pacing the second would follow within ~0.1 s; the margin absorbs a loaded machine.
        assert (times[1] - times[0]).total_seconds() >= paced.min_update_interval / 2


async def test_goaway_mid_fanout_loses_and_doubles_nothing(
    temporal_client: Client,
    task_queue: str,
    engine: AsyncEngine,
    apns_client: ApnsClient,
    fanout_config: FanoutConfig,
    sim: PushSim,
    db: asyncpg.Connection,
) -> None:
    """APNs shutting a connection (GOAWAY): the unprocessed streams go again, each device gets one alert."""
    await seed.fixture(db)
    running = await seed.running_activities(db, 300)
    await sim.fault(action="goaway", count=1)
    goal = push(priority=10, alert=True, moment=KeyMoment(kind="goal", side="home"))
    async with push_worker(temporal_client, task_queue, engine, apns_client, fanout_config):
        result = await run_push(temporal_client, task_queue, goal)

    pushes = await sim.pushes()
    assert by_token([p for p in pushes if p["status"] == 200]) == {a.push_token: 1 for a in running}
    assert result.sent == 300


async def test_alerts_released_through_an_apns_outage_reach_every_device_once(
    temporal_client: Client,
    task_queue: str,
    engine: AsyncEngine,
    apns_client: ApnsClient,
    fanout_config: FanoutConfig,
    sim: PushSim,
    db: asyncpg.Connection,
) -> None:
    """Alerts whose next try is far off are released, not held (a worker killed meanwhile would
    leave them in doubt for good: the soak of 2026-12-02, seed 10): the attempt writes them back,
    fails, and its retry claims and sends them; every device gets the goal once, none in doubt."""
    await seed.fixture(db)
    running = await seed.running_activities(db, 20)
    await sim.fault(status=500, reason="InternalServerError", count=20)
    policy = replace(fanout_config.policy, longest_held_wait=0.01)
    goal = push(priority=10, alert=True, moment=KeyMoment(kind="goal", side="home"))
    async with push_worker(
        temporal_client, task_queue, engine, apns_client, replace(fanout_config, policy=policy)
    ):
        result = await run_push(temporal_client, task_queue, goal)

    pushes = await sim.pushes()
    assert by_token([p for p in pushes if p["status"] == 200]) == {a.push_token: 1 for a in running}
    assert (result.sent, result.in_doubt) == (20, 0)
    states = await db.fetch("SELECT outcome->>'state' AS state, count(*) AS n FROM effect_log GROUP BY 1")
    assert {r["state"]: r["n"] for r in states} == {"sent": 20}


async def test_a_dropped_connection_never_repeats_an_alert(
    temporal_client: Client,
    task_queue: str,
    engine: AsyncEngine,
    apns_client: ApnsClient,
    fanout_config: FanoutConfig,
    sim: PushSim,
    db: asyncpg.Connection,
) -> None:
    """A connection dropped mid-flight leaves alerts in doubt: recorded, never sent twice."""
    await seed.fixture(db)
    await seed.running_activities(db, 100)
    await sim.fault(action="disconnect", count=1, latency_ms=50)
    goal = push(priority=10, alert=True, moment=KeyMoment(kind="red_card", side="away"))
    async with push_worker(temporal_client, task_queue, engine, apns_client, fanout_config):
        result = await run_push(temporal_client, task_queue, goal)

    pushes = await sim.pushes()
    assert max(by_token(pushes).values()) == 1
    assert result.in_doubt >= 1
    assert result.sent + result.in_doubt == 100
    states = await db.fetch("SELECT outcome->>'state' AS state, count(*) AS n FROM effect_log GROUP BY 1")
    assert {r["state"]: r["n"] for r in states} == {"sent": result.sent, "in_doubt": result.in_doubt}


async def test_a_rejected_provider_key_stops_the_fanout_without_retrying(
    temporal_client: Client,
    task_queue: str,
    engine: AsyncEngine,
    apns_client: ApnsClient,
    fanout_config: FanoutConfig,
    sim: PushSim,
    db: asyncpg.Connection,
) -> None:
    """403 InvalidProviderToken is our mistake, not the device's: the activity fails for good, no token is touched."""
    await seed.fixture(db)
    await seed.running_activities(db, 3)
    await sim.fault(status=403, reason="InvalidProviderToken", duration_s=30)
    async with push_worker(temporal_client, task_queue, engine, apns_client, fanout_config):
        with pytest.raises(WorkflowFailureError) as failed:
            await run_push(temporal_client, task_queue, push(version=1))

    cause = failed.value.cause.cause
    assert isinstance(cause, ApplicationError) and cause.type == APNS_CONFIG_ERROR
    assert len(await sim.pushes()) == 3, "each push tried once, none retried"
    assert await db.fetchval("SELECT count(*) FROM live_activity WHERE push_token_active") == 3
    states = await db.fetch("SELECT outcome->>'state' AS state FROM effect_log")
    assert {r["state"] for r in states} == {"rejected"}


async def test_a_worker_without_apns_settings_only_fails_when_there_is_someone_to_push_to(
    temporal_client: Client,
    task_queue: str,
    engine: AsyncEngine,
    fanout_config: FanoutConfig,
    db: asyncpg.Connection,
) -> None:
    """No APNS_KEY_PATH: a fixture nobody follows is pushed to in no time; one with followers fails for good."""
    await seed.fixture(db)
    async with push_worker(temporal_client, task_queue, engine, None, fanout_config):
        nobody = await run_push(temporal_client, task_queue, push("start", 0, key="kickoff"))
        await seed.followers(db, 2)
        with pytest.raises(WorkflowFailureError) as failed:
            await run_push(temporal_client, task_queue, push("start", 0, key="kickoff"))

    assert nobody == PushResult(effect="la.start")
    cause = failed.value.cause.cause
    assert isinstance(cause, ApplicationError) and cause.type == APNS_CONFIG_ERROR
    assert await db.fetchval("SELECT count(*) FROM effect_log") == 0


async def test_an_end_claimed_by_an_attempt_that_died_is_sent_by_the_next(
    temporal_client: Client,
    task_queue: str,
    engine: AsyncEngine,
    apns_client: ApnsClient,
    fanout_config: FanoutConfig,
    sim: PushSim,
    db: asyncpg.Connection,
) -> None:
    """The soak of 2026-12-02 (seed 2) cut a worker from Postgres while it fanned out a desk
    match's `end`: the attempt died after claiming its 129 activities, the retry marked every
    claim `in_doubt`, and no activity was ever ended. A repeatable push (an end, a state-only
    update) now takes the dead attempt's claims over and sends; an alert still never repeats."""
    await seed.fixture(db)
    running = await seed.running_activities(db, 20)
    end = push("end", version=9)
    dead = PushStore(engine, end, fanout_config.environment)
    batch = await dead.load(dead.first_cursor, 100)
    claimed = (await dead.claim(batch.targets, [], "attempt-that-died", {"version": 9})).mine
    assert len(claimed) == 20, "the dying attempt claimed every activity"

    async with push_worker(temporal_client, task_queue, engine, apns_client, fanout_config):
        result = await run_push(temporal_client, task_queue, end)

    pushes = await sim.pushes()
    assert by_token([p for p in pushes if p["status"] == 200]) == {a.push_token: 1 for a in running}
    assert (result.sent, result.in_doubt) == (20, 0)


async def test_an_activity_reporting_its_token_while_the_end_fans_out_is_sent_the_end(
    temporal_client: Client,
    task_queue: str,
    engine: AsyncEngine,
    apns_client: ApnsClient,
    fanout_config: FanoutConfig,
    sim: PushSim,
    db: asyncpg.Connection,
) -> None:
    """The soak of 2026-12-02 (seed 4): a phone whose push-to-start had just arrived reported its
    update token while the match's `end` fanned out, after the walk had loaded its batch. The
    fan-out's last step marked that activity ended though no end was ever sent to it, and its
    lock screen showed the match live for hours. The end now reaches an activity that became
    reachable during the walk; one still without a token is closed (its late report is refused
    409, and the app ends it itself)."""
    await seed.fixture(db)
    (running,) = await seed.running_activities(db, 1)
    late, silent = await seed.followers(db, 2)
    for follower in (late, silent):
        await db.execute(
            """INSERT INTO live_activity (device_id, fixture_id, status, started_at)
            VALUES ($1, $2, 'pending', now())""",
            follower.device_id,
            seed.FIXTURE_ID,
        )
    await sim.fault(latency_ms=3000, count=1)
    end = push("end", version=9, key="full_time")
    late_token = seed.apns_token()
    async with push_worker(temporal_client, task_queue, engine, apns_client, fanout_config):
        handle = await temporal_client.start_workflow(
            PushOnceWorkflow.run, end, id=f"push-{uuid.uuid4()}", task_queue=task_queue
        )
        while not await db.fetchval("SELECT count(*) FROM effect_log WHERE outcome->>'state' = 'claimed'"):
            await asyncio.sleep(0.05)
        # The running activity's end is in flight (3 s): the walk has loaded every batch.
        await report_activity_token(engine, late.device_id, seed.FIXTURE_ID, late_token)
        result = await handle.result()

    pushes = await sim.pushes()
    assert by_token([p for p in pushes if p["status"] == 200]) == {running.push_token: 1, late_token: 1}
    assert (result.sent, result.in_doubt) == (2, 0)
    statuses = await db.fetch("SELECT device_id, status FROM live_activity")
    assert {r["status"] for r in statuses} == {"ended"}
    with pytest.raises(ActivityEndedError):
        await report_activity_token(engine, silent.device_id, seed.FIXTURE_ID, seed.apns_token())
