"""Followers who follow while play is interrupted (rain, a floodlight failure) are owed their Live
Activity like any follower of a match that kicked off; before kick-off, the kick-off's start covers them.

Publishing, the device store's follow and a drainer against the APNs simulator.
"""

from __future__ import annotations

import json

import asyncpg
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from activities.push.apns import ApnsClient
from activities.push.drain import DrainConfig
from domain.pushes import LiveState, PushInput
from domain.snapshot import MatchState
from scoreline.devices.store import follow
from tests.push import seed
from tests.push.drainer import published, running_drainer
from tests.push.simulator import PushSim
from tests.support.waiting import eventually

NOW = 1_790_000_000


def push(kind: str, event_key: str, state: MatchState, version: int) -> PushInput:
    return PushInput(
        fixture_id=seed.FIXTURE_ID,
        event_key=event_key,
        kind=kind,  # type: ignore[arg-type]
        priority=10,
        alert=kind == "start",
        state=LiveState(home=0, away=0, state=state.value, version=version),
        timestamp=NOW + version,
    )


async def _board(db: asyncpg.Connection, fixture_id: int, state: MatchState) -> None:
    await db.execute(
        "INSERT INTO scoreboard (fixture_id, version, state, body) VALUES ($1, 40, $2, $3::jsonb)",
        fixture_id,
        state.value,
        json.dumps({}),
    )


async def _one_device(db: asyncpg.Connection) -> seed.Follower:
    """A device with a push-to-start token that follows nothing yet."""
    [device] = await seed.followers(db, 1)
    await db.execute("DELETE FROM follow WHERE device_id = $1", device.device_id)
    return device


async def _started(sim: PushSim, token: str) -> bool:
    return any(p["payload"]["aps"]["event"] == "start" for p in await sim.pushes(token=token))


@pytest.mark.parametrize("halted", [MatchState.INTERRUPTED, MatchState.SUSPENDED])
async def test_a_follow_while_play_is_halted_gets_its_start(
    engine: AsyncEngine,
    apns_client: ApnsClient,
    drain_config: DrainConfig,
    sim: PushSim,
    db: asyncpg.Connection,
    halted: MatchState,
) -> None:
    """Before, a T20 stopped for rain counted as neither started nor over: its follows were signalled
    to no one and the sweep skipped it, so everyone who followed during the rain got no activity."""
    fixture_id = await seed.fixture(db)
    await _board(db, fixture_id, halted)
    await published(engine, push("start", "kickoff", MatchState.LIVE_FIRST_HALF, 1))
    await published(engine, push("update", "v2", halted, 2))
    device = await _one_device(db)
    async with running_drainer(engine, apns_client, drain_config):
        assert await follow(engine, device.device_id, fixture_id)
        await eventually(lambda: _started(sim, device.push_to_start_token), within=20)

    (start,) = await sim.pushes(token=device.push_to_start_token)
    assert start["payload"]["aps"]["content-state"]["state"] == halted.value


async def test_a_follow_before_kickoff_is_started_by_the_kickoff(
    engine: AsyncEngine,
    apns_client: ApnsClient,
    drain_config: DrainConfig,
    sim: PushSim,
    db: asyncpg.Connection,
) -> None:
    """Before kick-off (a delayed start) a follow starts nothing; the kick-off's start reaches it."""
    fixture_id = await seed.fixture(db)
    await _board(db, fixture_id, MatchState.DELAYED)
    device = await _one_device(db)
    async with running_drainer(engine, apns_client, drain_config):
        assert await follow(engine, device.device_id, fixture_id)
        assert not await sim.pushes(token=device.push_to_start_token)
        await published(engine, push("start", "kickoff", MatchState.LIVE_FIRST_HALF, 1))
        await eventually(lambda: _started(sim, device.push_to_start_token), within=20)

    assert len(await sim.pushes(token=device.push_to_start_token)) == 1
