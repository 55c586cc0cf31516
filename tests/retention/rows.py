"""Rows of every table retention deletes from, written with a chosen age (`created_at` in the past)."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta

import asyncpg

from domain.retention import DAY, RetentionInput

FIXTURE_ID = 81_000_001
AGES = RetentionInput()
"""The default ages (7 days outbox and documents, 30 days the rest)."""


def ago(days: float) -> datetime:
    return datetime.now(UTC) - timedelta(days=days)


async def fixture(
    db: asyncpg.Connection,
    fixture_id: int = FIXTURE_ID,
    *,
    state: str = "finished",
    changed_days_ago: float = 0,
) -> int:
    """A fixture (and its scoreboard) whose last change was `changed_days_ago`."""
    at = ago(changed_days_ago)
    await db.execute(
        """INSERT INTO fixture (id, name, state, home_team, away_team, created_at, updated_at)
        VALUES ($1, 'Riverside FC vs Harbour United', $2, $3::jsonb, $4::jsonb, $5, $5)""",
        fixture_id,
        state,
        json.dumps({"id": 1, "name": "Riverside FC"}),
        json.dumps({"id": 2, "name": "Harbour United"}),
        at,
    )
    await db.execute(
        """INSERT INTO scoreboard (fixture_id, version, state, body, updated_at)
        VALUES ($1, 1, $2, '{}', $3)""",
        fixture_id,
        state,
        at,
    )
    return fixture_id


async def outbox(
    db: asyncpg.Connection, count: int, days_ago: float, fixture_id: int = FIXTURE_ID
) -> list[int]:
    """`count` domain_event rows, each in its own transaction (as ingests write them); their ids."""
    ids = []
    for _ in range(count):
        ids.append(
            await db.fetchval(
                """INSERT INTO domain_event (fixture_id, kind, payload, created_at)
                VALUES ($1, 'match.changed', '{}', $2) RETURNING id""",
                fixture_id,
                ago(days_ago),
            )
        )
    return ids


async def consumer_at(db: asyncpg.Connection, consumer: str, event_id: int) -> None:
    """Move durable consumer `consumer` to just after outbox row `event_id` (as the feed builder does)."""
    await db.execute(
        """INSERT INTO feed_cursor (consumer, last_xid, last_event_id)
        SELECT $1, xid, id FROM domain_event WHERE id = $2
        ON CONFLICT (consumer) DO UPDATE SET last_xid = excluded.last_xid, last_event_id = excluded.last_event_id""",
        consumer,
        event_id,
    )


async def device(db: asyncpg.Connection) -> uuid.UUID:
    device_id: uuid.UUID = await db.fetchval(
        """INSERT INTO device (install_id, platform, environment, token_hash)
        VALUES ('install-' || gen_random_uuid(), 'ios', 'sandbox', 'unused') RETURNING id"""
    )
    return device_id


async def push_attempts(
    db: asyncpg.Connection, count: int, days_ago: float, fixture_id: int = FIXTURE_ID
) -> None:
    await db.execute(
        """INSERT INTO push_attempt (fixture_id, event_key, effect, device_id, token_kind, attempt,
            priority, payload_bytes, status, latency_ms, created_at)
        SELECT $1, 'v' || n, 'la.update', $2, 'update', 1, 5, 300, 200, 12, $3
        FROM generate_series(1, $4) AS n""",
        fixture_id,
        await device(db),
        ago(days_ago),
        count,
    )


async def commands(
    db: asyncpg.Connection, count: int, days_ago: float, fixture_id: int = FIXTURE_ID
) -> list[str]:
    """Accepted desk commands, each with the log entry it made (seq after the fixture's last); their keys."""
    keys = [f"key-{uuid.uuid4()}" for _ in range(count)]
    first = int(
        await db.fetchval(
            "SELECT COALESCE(max(seq), 0) + 1 FROM timeline_item WHERE fixture_id = $1", fixture_id
        )
    )
    await db.execute(
        """INSERT INTO command (command_id, fixture_id, sender, code, input, payload_hash, outcome,
            answer, created_at)
        SELECT k, $2, 'desk-1', 'match.commentary', '{}', 'h', 'accepted', '{}', $3 FROM unnest($1::text[]) AS k""",
        keys,
        fixture_id,
        ago(days_ago),
    )
    await db.execute(
        """INSERT INTO timeline_item (fixture_id, seq, kind, origin, command_id, body, created_at)
        SELECT $2, $3 + ordinality - 1, 'command', 'desk', k, '{}', $4
        FROM unnest($1::text[]) WITH ORDINALITY AS v(k, ordinality)""",
        keys,
        fixture_id,
        first,
        ago(days_ago),
    )
    return keys


async def pushes(
    db: asyncpg.Connection, count: int, days_ago: float, fixture_id: int = FIXTURE_ID
) -> list[int]:
    """`count` published `la_push` updates, stamped after the fixture's last; their stamps."""
    stamps: list[int] = await db.fetchval(
        """WITH last AS (SELECT COALESCE(max(stamp), 1000) AS stamp FROM la_push WHERE fixture_id = $1),
        made AS (
            INSERT INTO la_push (fixture_id, stamp, event_key, event, generation, priority, routine,
                content_state, attributes, stale_date, dismissal_date, created_at)
            SELECT $1, last.stamp + n, 'v' || (last.stamp + n), 'update', 1, 5, true, '{}', '{}',
                last.stamp + n + 900, last.stamp + n + 900, $2
            FROM last, generate_series(1, $3) AS n RETURNING stamp)
        SELECT array_agg(stamp ORDER BY stamp) FROM made""",
        fixture_id,
        ago(days_ago),
        count,
    )
    return stamps


async def mailboxes(
    db: asyncpg.Connection, count: int, want_stamp: int, fixture_id: int = FIXTURE_ID
) -> None:
    """`count` running Live Activities of followers, each owing push `want_stamp` and its alert, due now."""
    await db.execute(
        """WITH d AS (
            INSERT INTO device (install_id, platform, environment, token_hash)
            SELECT 'install-' || gen_random_uuid(), 'ios', 'sandbox', 'unused' FROM generate_series(1, $1)
            RETURNING id)
        INSERT INTO live_activity (device_id, fixture_id, status, push_token, started_at, want_stamp,
            alert_stamp, next_try_at)
        SELECT d.id, $2, 'active', md5(d.id::text), now(), $3, $3, now() FROM d""",
        count,
        fixture_id,
        want_stamp,
    )


async def document(db: asyncpg.Connection, doc_key: str, version: int, days_ago: float) -> None:
    await db.execute(
        """INSERT INTO published_document (doc_key, version, content_hash, etag, body, created_at)
        VALUES ($1, $2::bigint, 'h' || $2::text, 'e' || $2::text, jsonb_build_object('version', $2::bigint), $3)""",
        doc_key,
        version,
        ago(days_ago),
    )


async def count(db: asyncpg.Connection, table: str, where: str = "true") -> int:
    return int(await db.fetchval(f"SELECT count(*) FROM {table} WHERE {where}"))


def older_than(age_seconds: float | None) -> float:
    """Days a row must be old to be past `age_seconds`, with a day to spare."""
    assert age_seconds is not None
    return age_seconds / DAY + 1
