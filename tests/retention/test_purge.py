"""What each table keeps and loses, on real Postgres, through the real activity (`ActivityEnvironment`)."""

from __future__ import annotations

import asyncpg
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.testing import ActivityEnvironment

from activities.retention import RetentionActivities
from domain.retention import PurgeInput, PurgeResult, RetentionTable
from scoreline.feeds.published import latest_version, publish
from tests.retention import rows
from tests.retention.rows import AGES, older_than


async def purge(
    retention: RetentionActivities, table: RetentionTable, age: float | None, *, batch: int = 1000
) -> PurgeResult:
    assert age is not None
    return await ActivityEnvironment().run(
        retention.purge_old_rows, PurgeInput(table=table, age_seconds=age, batch=batch, pause_seconds=0)
    )


async def test_rows_past_their_age_go_and_younger_rows_stay(
    db: asyncpg.Connection, retention: RetentionActivities
) -> None:
    """Regression: before retention these five tables only grew; now rows past their age go, younger ones stay."""
    await rows.fixture(db, changed_days_ago=older_than(AGES.la_push_age_seconds))
    old_events = await rows.outbox(db, 3, older_than(AGES.outbox_age_seconds))
    young_events = await rows.outbox(db, 2, 1)
    await rows.consumer_at(db, "feeds", young_events[-1])
    await rows.consumer_at(db, "webhooks", young_events[-1])
    await rows.push_attempts(db, 4, older_than(AGES.push_attempt_age_seconds))
    await rows.push_attempts(db, 2, 29)
    await rows.commands(db, 5, older_than(AGES.command_age_seconds))
    young_commands = await rows.commands(db, 1, 29)
    await rows.pushes(db, 6, older_than(AGES.la_push_age_seconds))
    await rows.document(db, "match/81000001", 1, 40)
    await rows.document(db, "match/81000001", 2, older_than(AGES.document_age_seconds))
    await rows.document(db, "match/81000001", 3, 1)

    ages = AGES.ages()
    results = {table: await purge(retention, table, ages[table]) for table in RetentionTable}

    assert {table: result.deleted for table, result in results.items()} == {
        RetentionTable.OUTBOX: 3,
        RetentionTable.PUSH_ATTEMPT: 4,
        RetentionTable.COMMAND: 5,
        RetentionTable.LA_PUSH: 6,
        RetentionTable.DOCUMENT: 1,
        RetentionTable.WEBHOOK_ATTEMPT: 0,  # tests/retention/test_webhooks.py covers these two
        RetentionTable.WEBHOOK_MESSAGE: 0,
    }
    assert all(result.done for result in results.values())
    assert await db.fetch("SELECT id FROM domain_event ORDER BY id") == [(i,) for i in young_events]
    assert old_events[-1] < young_events[0]
    assert await rows.count(db, "push_attempt") == 2
    assert [row["command_id"] for row in await db.fetch("SELECT command_id FROM command")] == young_commands
    assert await rows.count(db, "la_push") == 0
    assert [r["version"] for r in await db.fetch("SELECT version FROM published_document ORDER BY 1")] == [
        2,
        3,
    ]


async def test_the_outbox_keeps_what_a_lagging_consumer_has_not_read(
    db: asyncpg.Connection, retention: RetentionActivities
) -> None:
    """Old rows stay until every durable consumer has passed them: the slowest cursor is the limit."""
    await rows.fixture(db)
    events = await rows.outbox(db, 6, 30)
    await rows.consumer_at(db, "feeds", events[-1])
    await rows.consumer_at(db, "webhooks", events[-1])
    await rows.consumer_at(db, "archive", events[2])

    result = await purge(retention, RetentionTable.OUTBOX, AGES.outbox_age_seconds)

    assert result.deleted == 3
    assert await db.fetch("SELECT id FROM domain_event ORDER BY id") == [(i,) for i in events[3:]]


async def test_the_outbox_is_kept_whole_until_the_feed_builder_has_a_cursor(
    db: asyncpg.Connection, retention: RetentionActivities
) -> None:
    """With no `feeds` cursor (the builder never committed one) it reads from the start: nothing goes."""
    await rows.fixture(db)
    events = await rows.outbox(db, 4, 30)
    await rows.consumer_at(db, "archive", events[-1])

    result = await purge(retention, RetentionTable.OUTBOX, AGES.outbox_age_seconds)

    assert (result.deleted, result.done) == (0, True)
    assert await rows.count(db, "domain_event") == 4


async def test_the_pushes_of_a_match_not_over_or_recently_changed_are_never_touched(
    db: asyncpg.Connection, retention: RetentionActivities
) -> None:
    """Live (even with only old pushes), just finished, or finished long ago but pushed lately: all kept."""
    old = older_than(AGES.la_push_age_seconds)
    live = await rows.fixture(db, 1, state="live_second_half", changed_days_ago=old)
    recent = await rows.fixture(db, 2, state="finished", changed_days_ago=2)
    pushed_lately = await rows.fixture(db, 3, state="finished", changed_days_ago=old)
    gone = await rows.fixture(db, 4, state="abandoned", changed_days_ago=old)
    for fixture_id in (live, recent, pushed_lately, gone):
        await rows.pushes(db, 3, old, fixture_id)
    await rows.pushes(db, 1, 0, pushed_lately)

    result = await purge(retention, RetentionTable.LA_PUSH, AGES.la_push_age_seconds)

    assert (result.deleted, result.fixtures_purged) == (3, 1)
    left = await db.fetch("SELECT fixture_id, count(*) AS n FROM la_push GROUP BY 1 ORDER BY 1")
    assert [(row["fixture_id"], row["n"]) for row in left] == [(live, 3), (recent, 3), (pushed_lately, 4)]
    purged = await db.fetch("SELECT id FROM fixture WHERE pushes_purged_at IS NOT NULL")
    assert purged == [(gone,)]


async def test_a_match_is_marked_purged_in_the_transaction_of_its_last_batch(
    db: asyncpg.Connection, retention: RetentionActivities
) -> None:
    """25 pushes at 10 a batch: unmarked after the two full batches, marked by the short third one."""
    old = older_than(AGES.la_push_age_seconds)
    fixture_id = await rows.fixture(db, changed_days_ago=old)
    await rows.pushes(db, 25, old)
    age = AGES.la_push_age_seconds
    assert age is not None

    seen = []
    for _ in range(3):
        batch = await retention.delete_batch(RetentionTable.LA_PUSH, age, 10)
        marked = await db.fetchval(
            "SELECT pushes_purged_at IS NOT NULL FROM fixture WHERE id = $1", fixture_id
        )
        seen.append((batch.deleted, batch.full, batch.fixtures_purged, marked))

    assert seen == [(10, True, 0, False), (10, True, 0, False), (5, False, 1, True)]
    again = await retention.delete_batch(RetentionTable.LA_PUSH, age, 10)
    assert (again.deleted, again.full) == (0, False), "a purged match is not looked at again"


async def test_mailboxes_stop_owing_before_any_push_they_want_goes(
    db: asyncpg.Connection, retention: RetentionActivities
) -> None:
    """25 mailboxes owe a match's newest push: they are closed 10 a batch, and its 3 pushes go only in
    the batch that closes the last one, so no batch leaves a mailbox wanting a deleted push."""
    old = older_than(AGES.la_push_age_seconds)
    fixture_id = await rows.fixture(db, changed_days_ago=old)
    stamps = await rows.pushes(db, 3, old)
    await rows.mailboxes(db, 25, stamps[-1])
    age = AGES.la_push_age_seconds
    assert age is not None

    seen = []
    for _ in range(3):
        batch = await retention.delete_batch(RetentionTable.LA_PUSH, age, 10)
        wanting_deleted = await db.fetchval(
            """SELECT count(*) FROM live_activity la WHERE la.fixture_id = $1
              AND (la.want_stamp IS NOT NULL OR la.alert_stamp IS NOT NULL)
              AND NOT EXISTS (SELECT 1 FROM la_push p
                              WHERE p.fixture_id = la.fixture_id AND p.stamp = la.want_stamp)""",
            fixture_id,
        )
        seen.append((batch.deleted, batch.full, batch.fixtures_purged, wanting_deleted))

    assert seen == [(0, True, 0, 0), (0, True, 0, 0), (3, False, 1, 0)]
    left = await db.fetch(
        """SELECT status, ended_at IS NOT NULL AS ended, want_stamp, alert_stamp, next_try_at, lease_owner
        FROM live_activity WHERE fixture_id = $1""",
        fixture_id,
    )
    assert {tuple(row) for row in left} == {("ended", True, None, None, None, None)}
    assert len(left) == 25


async def test_superseded_document_versions_go_and_the_served_one_stays(
    db: asyncpg.Connection, engine: AsyncEngine, retention: RetentionActivities
) -> None:
    """Versions replaced longer ago than the age go; the latest of each document stays, however old."""
    async with engine.begin() as conn:
        for home in range(3):
            await publish(conn, "match/81000001", {"score": {"home": home, "away": 0}}, 8)
        await publish(conn, "fixtures/2026-01-01", {"fixtures": []}, None)
    await db.execute(
        "UPDATE published_document SET created_at = now() - interval '40 days' WHERE version = 1"
    )
    await db.execute(
        "UPDATE published_document SET created_at = now() - interval '20 days' WHERE doc_key = 'match/81000001' AND version = 2"
    )
    async with engine.connect() as conn:
        served = await latest_version(conn, "match/81000001")

    result = await purge(retention, RetentionTable.DOCUMENT, AGES.document_age_seconds)

    assert result.deleted == 1
    left = await db.fetch("SELECT doc_key, version FROM published_document ORDER BY 1, 2")
    assert [tuple(row) for row in left] == [
        ("fixtures/2026-01-01", 1),
        ("match/81000001", 2),
        ("match/81000001", 3),
    ]
    async with engine.connect() as conn:
        assert await latest_version(conn, "match/81000001") == served
        assert await latest_version(conn, "fixtures/2026-01-01") is not None


async def test_deleting_an_old_command_keeps_the_log_entry_it_made(
    db: asyncpg.Connection, retention: RetentionActivities
) -> None:
    """The command row goes after its age; its `timeline_item` stays, still carrying the key."""
    await rows.fixture(db)
    [key] = await rows.commands(db, 1, older_than(AGES.command_age_seconds))

    result = await purge(retention, RetentionTable.COMMAND, AGES.command_age_seconds)

    assert result.deleted == 1
    assert await rows.count(db, "command") == 0
    assert await db.fetch("SELECT seq, command_id FROM timeline_item") == [(1, key)]


async def test_35_old_rows_go_in_4_batches_of_10(
    db: asyncpg.Connection, retention: RetentionActivities
) -> None:
    """Three full batches and a short one, all in one activity call."""
    await rows.fixture(db)
    await rows.push_attempts(db, 35, older_than(AGES.push_attempt_age_seconds))

    result = await purge(retention, RetentionTable.PUSH_ATTEMPT, AGES.push_attempt_age_seconds, batch=10)

    assert result == PurgeResult(deleted=35, batches=4, done=True)
    assert await rows.count(db, "push_attempt") == 0


async def test_a_spent_budget_hands_back_before_the_table_is_done(
    db: asyncpg.Connection, retention: RetentionActivities
) -> None:
    """Past its budget the activity returns after the batch in hand, `done=False`, so the workflow calls again."""
    await rows.fixture(db)
    await rows.push_attempts(db, 35, older_than(AGES.push_attempt_age_seconds))
    age = AGES.push_attempt_age_seconds
    assert age is not None

    result = await ActivityEnvironment().run(
        retention.purge_old_rows,
        PurgeInput(table=RetentionTable.PUSH_ATTEMPT, age_seconds=age, batch=10, budget_seconds=1e-6),
    )

    assert result == PurgeResult(deleted=10, batches=1, done=False)
    assert await rows.count(db, "push_attempt") == 25
