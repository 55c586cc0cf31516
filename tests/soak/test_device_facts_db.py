"""What the devices' check reads from real Postgres to name a missing start (`_starts_in_words`)."""

from __future__ import annotations

import json
import re

import asyncpg

from scoreline.soak import devices
from tests.push import seed

CLOCK = r"\d\d:\d\d:\d\d\.\d{3}"


async def test_each_follow_says_its_activities_claims_token_and_the_matchs_mark(
    db: asyncpg.Connection,
) -> None:
    fixture = await seed.fixture(db)
    silent, claimed, dead = await seed.followers(db, 3, fixture)
    activity = await db.fetchval(
        "INSERT INTO live_activity (device_id, fixture_id) VALUES ($1, $2) RETURNING id",
        claimed.device_id,
        fixture,
    )
    outcome = {"state": "in_doubt", "claim": {"state": "claimed", "by": "run/a#1", "sending_at": 0.25}}
    await db.execute(
        """INSERT INTO effect_log (fixture_id, event_key, effect, target, outcome)
        VALUES ($1, 'v1', 'la.start', $2, $3::jsonb)""",
        fixture,
        str(activity),
        json.dumps(outcome),
    )
    await db.execute("UPDATE device SET push_to_start_active = false WHERE id = $1", dead.device_id)
    await db.execute("INSERT INTO followers_waiting (fixture_id, since) VALUES ($1, '-infinity')", fixture)

    words = await devices._starts_in_words(db, [fixture])

    waiting = "followers waiting, unsignalled"
    assert set(words) == {(str(f.device_id), fixture) for f in (silent, claimed, dead)}
    assert re.fullmatch(
        f"follow stored {CLOCK}; no activity; {waiting}", words[(str(silent.device_id), fixture)]
    )
    assert re.fullmatch(
        f"follow stored {CLOCK}; activity g1 pending made {CLOCK}, "
        f"start v1 in_doubt by run/a#1 marked 00:00:00.250 at {CLOCK}; {waiting}",
        words[(str(claimed.device_id), fixture)],
    )
    assert re.fullmatch(
        f"follow stored {CLOCK}; push-to-start token inactive; no activity; {waiting}",
        words[(str(dead.device_id), fixture)],
    )
