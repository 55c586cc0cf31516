"""Followers who follow while play is interrupted (rain, a floodlight failure) are owed their Live
Activity like any follower of a match that kicked off."""

from __future__ import annotations

import json

import asyncpg
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from domain.snapshot import MatchState
from scoreline.devices.store import claim_stale_followers_marks
from scoreline.temporal.match_runs import load_facts
from tests.push import seed


async def _board(db: asyncpg.Connection, fixture_id: int, state: MatchState) -> None:
    await db.execute(
        "INSERT INTO scoreboard (fixture_id, version, state, body) VALUES ($1, 40, $2, $3::jsonb)",
        fixture_id,
        state.value,
        json.dumps({}),
    )


@pytest.mark.parametrize("halted", [MatchState.INTERRUPTED, MatchState.SUSPENDED])
async def test_a_stale_mark_of_an_interrupted_match_is_signalled_by_the_sweep(
    engine: AsyncEngine, db: asyncpg.Connection, halted: MatchState
) -> None:
    """The soak of 2026-12-02 (seed 5): a T20 stopped for rain had followers waiting, and the
    fixture sync's sweep skipped the match because `interrupted` counted as neither started nor
    over; its follows were signalled to no one either (`tell_followers_changed` took the same
    view), so everyone who followed during the rain got no Live Activity. A halted match's waiting
    followers are signalled now, and its facts say it started."""
    fixture_id = await seed.fixture(db)
    await _board(db, fixture_id, halted)
    await db.execute(
        "INSERT INTO followers_waiting (fixture_id, since) VALUES ($1, now() - interval '5 minutes')",
        fixture_id,
    )

    assert await claim_stale_followers_marks(engine) == [fixture_id]
    facts = await load_facts(engine, fixture_id)
    assert facts is not None and facts.kicked_off and not facts.over


async def test_a_mark_of_a_match_not_kicked_off_is_left_for_the_kickoff(
    engine: AsyncEngine, db: asyncpg.Connection
) -> None:
    """Before kick-off (a delayed start) no follower is signalled: the kick-off's walk starts them all."""
    fixture_id = await seed.fixture(db)
    await _board(db, fixture_id, MatchState.DELAYED)
    await db.execute(
        "INSERT INTO followers_waiting (fixture_id, since) VALUES ($1, now() - interval '5 minutes')",
        fixture_id,
    )

    assert await claim_stale_followers_marks(engine) == []
    facts = await load_facts(engine, fixture_id)
    assert facts is not None and not facts.kicked_off
