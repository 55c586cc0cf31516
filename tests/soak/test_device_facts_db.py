"""What the devices' check reads from real Postgres: the published pushes (`la_push`) and each
follow's mailboxes in words (`_follows_in_words`), named in a violation."""

from __future__ import annotations

import json
import re

import asyncpg

from devkit.soak import devices
from devkit.soak.device_check import Published
from tests.push import seed

CLOCK = r"\d\d:\d\d:\d\d\.\d{3}"


async def test_each_follow_says_its_token_and_its_activities_mailboxes(db: asyncpg.Connection) -> None:
    fixture = await seed.fixture(db)
    silent, owed, dead = await seed.followers(db, 3, fixture)
    await db.execute(
        """INSERT INTO live_activity (device_id, fixture_id, status, push_token, push_token_active,
                                      want_stamp, want_end, sent_stamp, alert_stamp, alert_marked_at,
                                      next_try_at, tries)
           VALUES ($1, $2, 'active', 'ab', false, 103, true, 101, 102, now(), now(), 3)""",
        owed.device_id,
        fixture,
    )
    await db.execute("UPDATE device SET push_to_start_active = false WHERE id = $1", dead.device_id)

    words = await devices._follows_in_words(db, [fixture])

    assert set(words) == {(str(f.device_id), fixture) for f in (silent, owed, dead)}
    assert re.fullmatch(f"follow stored {CLOCK}; no activity", words[(str(silent.device_id), fixture)])
    assert re.fullmatch(
        f"follow stored {CLOCK}; g1 active, token off, wants 103 \\(end\\), sent 101, alert 102 owed, "
        f"marked {CLOCK}, next try {CLOCK} after 3 tries",
        words[(str(owed.device_id), fixture)],
    )
    assert re.fullmatch(
        f"follow stored {CLOCK}; push-to-start token inactive; no activity",
        words[(str(dead.device_id), fixture)],
    )


async def test_a_published_push_reads_as_the_check_holds_it(db: asyncpg.Connection) -> None:
    fixture = await seed.fixture(db)
    alert = {"title": "GOAL! Riverside FC", "body": "Riverside FC 1-0 Harbour United", "sound": "default"}
    await db.execute(
        """INSERT INTO la_push (fixture_id, stamp, event_key, event, generation, priority, routine,
                                content_state, alert, attributes, stale_date, dismissal_date)
           VALUES ($1, 1800000101, 'v2', 'update', 1, 10, false, $2::jsonb, $3::jsonb, '{}'::jsonb,
                   1800001001, 1800001001)""",
        fixture,
        json.dumps({"version": 2, "homeScore": 1}),
        json.dumps(alert),
    )
    (read,) = await devices._published_pushes(db, [fixture])

    assert read == Published(
        fixture, 1800000101.0, "update", 1, 2, (alert["title"], alert["body"]), 1800001001.0, read.at
    )
