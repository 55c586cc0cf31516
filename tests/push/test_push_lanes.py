"""A key moment never waits behind a routine update (trust issue, hole 6).

A routine update whose activity got one less than `LA_MIN_UPDATE_INTERVAL` ago is held back until
the interval has passed. A red card right after it must go out at once, not queue behind it.

The recording: football-basic's first two lines (before kick-off, kick-off), then the provider's
score goes 1-0 and 2-0 with no goal event yet (two routine updates: the score moved, nothing to
alert), then a red card arrives (a key moment).
"""

from __future__ import annotations

import asyncio
import copy
import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from temporalio.client import Client

from scoreline.settings import Settings
from tests.match.harness import end_leftover_run, fast_settings, start_match
from tests.push.phones import Delivery, Pacer, insert_provider_fixture, phones, summary
from tests.push.simulator import PushSim
from tests.push.test_match_lifecycle import device_api
from tests.support.provider import recording, running_provider
from tests.support.waiting import eventually
from tests.support.worker import running_worker

pytestmark = pytest.mark.timeout(120)

FIXTURE_ID = 81000001
KICKOFF, ONE_NIL, TWO_NIL, RED_CARD = 120.0, 180.0, 240.0, 300.0
MIN_UPDATE_INTERVAL = timedelta(seconds=15)


def _with_home_score(line: dict[str, Any], t: float, goals: int) -> dict[str, Any]:
    changed = copy.deepcopy(line)
    changed["t"] = t
    for score in changed["fixture"]["scores"]:
        if score["description"] in ("CURRENT", "1ST_HALF") and score["score"]["participant"] == "home":
            score["score"]["goals"] = goals
    return changed


def routine_then_red_card(directory: Path) -> Path:
    header, *lines = recording("football-basic").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    before, kickoff = records[0], next(r for r in records if r["t"] == KICKOFF)
    red_card = next(
        event
        for record in records
        for event in record["fixture"].get("events") or []
        if event["type_id"] == 20
    )
    card_line = _with_home_score(kickoff, RED_CARD, 2)
    card_line["fixture"]["events"] = [{**red_card, "minute": 4}]
    body = [
        before,
        kickoff,
        _with_home_score(kickoff, ONE_NIL, 1),
        _with_home_score(kickoff, TWO_NIL, 2),
        card_line,
    ]
    path = directory / "football-routine-then-red-card.jsonl"
    path.write_text("\n".join([header, *(json.dumps(record) for record in body)]) + "\n")
    return path


async def test_a_red_card_goes_out_at_once_while_a_routine_update_waits_for_its_interval(
    push_settings: Settings, temporal_client: Client, sim: PushSim, db: asyncpg.Connection, tmp_path: Path
) -> None:
    """1-0 goes out as a routine update; 2-0 has to wait 15 s for the activity's interval; the red
    card right after it reaches the phone first, with its alert, and the held 2-0 update is then
    dropped as older than what the phone shows. On the main of 2026-12-01 the red card's push waited
    inside the match's one push queue until the routine update had slept out its interval."""
    path = routine_then_red_card(tmp_path)
    await insert_provider_fixture(db, FIXTURE_ID)
    await end_leftover_run(temporal_client, FIXTURE_ID)
    async with running_provider([path]) as provider:
        config = fast_settings(push_settings, provider.url).model_copy(
            update={"la_min_update_interval": MIN_UPDATE_INTERVAL}
        )
        async with device_api(config) as api:
            (phone,) = await phones(api, sim, 1, prefix="lanes")
            await phone.follow(FIXTURE_ID)
            phone.run_app(FIXTURE_ID)
            pacer = Pacer(phone)
            async with running_worker(temporal_client, config):
                handle = await start_match(temporal_client, config, FIXTURE_ID)
                try:
                    await pacer.change(lambda: provider.step_through([KICKOFF], polls_per_step=6))
                    await asyncio.wait_for(phone.activity_running(), 30)
                    await pacer.change(lambda: provider.step_through([ONE_NIL], polls_per_step=6))
                    await provider.step_through([TWO_NIL], polls_per_step=6)
                    await provider.step_through([RED_CARD], polls_per_step=6)
                    card = await eventually(lambda: _alerting(phone), within=40)
                    updates = await phone.updates()
                    held = await db.fetchval(
                        "SELECT version FROM scoreboard WHERE fixture_id = $1", FIXTURE_ID
                    )
                    # The held routine update (2-0) is settled `stale` once its interval is over.
                    await eventually(lambda: _routine_settled(db), within=40)
                    after = await phone.updates()
                finally:
                    phone.cancel()
                    await handle.terminate("test over")
    assert [(u.score, u.alerting, u.priority) for u in updates] == [
        ((1, 0), False, 5),
        ((2, 0), True, 10),
    ], summary(updates)
    assert card.moment == "red_card" and card.state["version"] == held
    assert after == updates, f"a push reached the phone after the red card: {summary(after)}"


async def _alerting(phone: Any) -> Delivery | None:
    return next((u for u in await phone.updates() if u.alerting), None)


async def _routine_settled(db: asyncpg.Connection) -> bool:
    """Every routine (`la.update`) push's targets have an outcome other than claimed."""
    rows = await db.fetch(
        "SELECT outcome->>'state' AS state FROM effect_log WHERE fixture_id = $1 AND effect = 'la.update'",
        FIXTURE_ID,
    )
    return len(rows) == 2 and all(row["state"] in ("sent", "stale") for row in rows)
