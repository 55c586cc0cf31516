"""The soak's desks over the real command road: both sports' scripts score to the end through an API
list whose first process is down, the check passes, and a tampered board is named."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import asyncpg
import pytest

from devkit.devstack.ports import free_port
from devkit.soak.desks import DeskPart
from devkit.soak.model import SoakTargets
from scoreline.db.urls import asyncpg_dsn
from tests.commands.harness import Road
from tests.support.waiting import eventually

pytestmark = pytest.mark.timeout(240)


async def boards(database_url: str, fixture_ids: list[int]) -> list[str]:
    db = await asyncpg.connect(asyncpg_dsn(database_url))
    try:
        rows = await db.fetch(
            "SELECT state FROM scoreboard WHERE fixture_id = ANY($1::bigint[])", fixture_ids
        )
    finally:
        await db.close()
    return [row["state"] for row in rows]


async def test_desks_score_both_sports_to_the_end_and_the_check_passes(road: Road) -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    targets = SoakTargets((dead, road.url), "", "", road.database_url, Path("unused"))
    part = DeskPart(targets, random.Random(17), desks=4, minute_seconds=0.005)
    fixture_ids = await part.create_matches()
    stop = asyncio.Event()
    running = asyncio.create_task(part.run(stop))

    async def all_finished() -> bool:
        states = await boards(road.database_url, fixture_ids)
        return len(states) == len(fixture_ids) and set(states) == {"finished"}

    await eventually(all_finished, within=180, every=0.5)
    stop.set()
    await running
    result = await part.check()

    assert [v.line() for v in result.violations] == []
    assert result.figures["desks"] == 4
    assert result.figures["resends"] >= 1, "the first send went to the dead API and was sent again"
    assert result.checked == result.figures["commands"] > 4 * 20

    db = await asyncpg.connect(asyncpg_dsn(road.database_url))
    try:
        await db.execute(
            "UPDATE scoreboard SET home_score = home_score + 1 WHERE fixture_id = $1", fixture_ids[0]
        )
    finally:
        await db.close()
    tampered = await part.check()
    assert [v.subject for v in tampered.violations] == [f"fixture {fixture_ids[0]}"]
    assert "board shows finished" in tampered.violations[0].detail
