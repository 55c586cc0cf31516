"""Rows for push tests: a fixture, devices that follow it, and running Live Activities, in bulk."""

from __future__ import annotations

import json
import secrets
import uuid
from dataclasses import dataclass

import asyncpg

FIXTURE_ID = 81_000_001
HOME, AWAY = "Riverside FC", "Harbour United"


@dataclass(frozen=True)
class Follower:
    device_id: uuid.UUID
    push_to_start_token: str


@dataclass(frozen=True)
class RunningActivity:
    live_activity_id: int
    device_id: uuid.UUID
    push_token: str


def apns_token() -> str:
    """A Live-Activity-length token (80 bytes, 160 hex digits), unique per call."""
    return secrets.token_hex(80)


async def fixture(
    db: asyncpg.Connection, fixture_id: int = FIXTURE_ID, home: str = HOME, away: str = AWAY
) -> int:
    await db.execute(
        """INSERT INTO fixture (id, name, state, home_team, away_team, competition)
        VALUES ($1, $2, 'live_first_half', $3::jsonb, $4::jsonb, $5::jsonb)""",
        fixture_id,
        f"{home} vs {away}",
        json.dumps({"id": 1, "name": home}),
        json.dumps({"id": 2, "name": away}),
        json.dumps({"id": 8, "name": "Premier League"}),
    )
    return fixture_id


async def followers(
    db: asyncpg.Connection, count: int, fixture_id: int = FIXTURE_ID, environment: str = "sandbox"
) -> list[Follower]:
    """`count` devices with a push-to-start token, each following the fixture."""
    tokens = [apns_token() for _ in range(count)]
    rows = await db.fetch(
        """INSERT INTO device (install_id, platform, environment, token_hash, push_to_start_token)
        SELECT 'install-' || gen_random_uuid(), 'ios', $2, 'unused', t FROM unnest($1::text[]) AS t
        RETURNING id, push_to_start_token""",
        tokens,
        environment,
    )
    await db.execute(
        "INSERT INTO follow (device_id, fixture_id) SELECT unnest($1::uuid[]), $2",
        [row["id"] for row in rows],
        fixture_id,
    )
    return [Follower(row["id"], row["push_to_start_token"]) for row in rows]


async def running_activities(
    db: asyncpg.Connection, count: int, fixture_id: int = FIXTURE_ID
) -> list[RunningActivity]:
    """`count` followers whose activity is running and reported its update token."""
    devices = await followers(db, count, fixture_id)
    tokens = [apns_token() for _ in devices]
    rows = await db.fetch(
        """INSERT INTO live_activity (device_id, fixture_id, status, push_token, started_at)
        SELECT d, $3, 'active', t, now() FROM unnest($1::uuid[], $2::text[]) AS v(d, t)
        RETURNING id, device_id, push_token""",
        [device.device_id for device in devices],
        tokens,
        fixture_id,
    )
    return [RunningActivity(row["id"], row["device_id"], row["push_token"]) for row in rows]
