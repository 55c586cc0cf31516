"""Device rows: registration (with secret rotation), push-to-start tokens, follows, Live Activities.

Every write is one transaction that checks what it depends on first (the fixture exists, the
activity has not ended, a known install's caller holds its current token), so a refused request
leaves nothing behind.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from domain.failures import UnknownFixture
from domain.states import BEGUN_STATES, OVER_STATES, OVERNIGHT_STATES
from scoreline.devices.tokens import hash_token, matches, new_token

Environment = Literal["sandbox", "production"]


@dataclass(frozen=True)
class Registration:
    install_id: str
    platform: str
    environment: Environment
    push_to_start_token: str | None
    app_version: str | None
    locale: str | None


@dataclass(frozen=True)
class Registered:
    device_id: uuid.UUID
    token: str
    created: bool
    """False: the install was known and the caller held its token; same id, new secret (the old one
    stops working)."""


@dataclass(frozen=True)
class ActivityRow:
    fixture_id: int
    generation: int
    status: str
    push_token_active: bool
    has_push_token: bool
    started_at: datetime | None
    ended_at: datetime | None
    updated_at: datetime


class InstallRegisteredError(LookupError):
    """The install id belongs to a device, and the caller did not present that device's current token."""

    def __init__(self, device_id: uuid.UUID) -> None:
        super().__init__(f"install registered to device {device_id}")
        self.device_id = device_id


class ActivityEndedError(RuntimeError):
    """The device's activity for this fixture has ended; a token for it is no use any more."""


class UnknownActivityError(LookupError):
    """The report names a generation of the device's activity for this fixture that Scoreline never
    push-started."""


class NotFollowingError(LookupError):
    """The device does not follow the fixture: no activity of it is pushed to."""


async def register(engine: AsyncEngine, registration: Registration, token: str | None) -> Registered:
    """Create the device, or refresh a known install and rotate its secret.

    A known install is refreshed only for a caller presenting its current `token`: the install id
    is no secret (logs, backups, a shared phone), and rotating on it alone would hand the device to
    anyone who learned it while its owner's token stopped working. A push-to-start token given here
    is live again even if an earlier copy of it was deactivated: the app re-registering it is
    Apple's sign that it works (apns.md §3, 410 handling).

    Raises:
        InstallRegisteredError: The install is known and `token` is missing or not its current one.
    """
    values = {
        "install_id": registration.install_id,
        "platform": registration.platform,
        "environment": registration.environment,
        "push_to_start_token": registration.push_to_start_token,
        "app_version": registration.app_version,
        "locale": registration.locale,
    }
    async with engine.begin() as conn:
        device_id = uuid.uuid4()
        secret = new_token(device_id)
        inserted = await conn.execute(
            text(
                """INSERT INTO device (id, install_id, platform, environment, token_hash,
                    push_to_start_token, app_version, locale)
                VALUES (:id, :install_id, :platform, :environment, :token_hash,
                    :push_to_start_token, :app_version, :locale)
                ON CONFLICT (install_id) DO NOTHING
                RETURNING id"""
            ),
            {**values, "id": device_id, "token_hash": hash_token(secret)},
        )
        if inserted.first() is not None:
            return Registered(device_id, secret, created=True)
        # Locked, so two re-registrations with the same token cannot both rotate it.
        known = (
            await conn.execute(
                text("SELECT id, token_hash FROM device WHERE install_id = :install_id FOR UPDATE"),
                {"install_id": registration.install_id},
            )
        ).one()
        if token is None or not matches(token, known.token_hash):
            raise InstallRegisteredError(known.id)
        secret = new_token(known.id)
        await conn.execute(
            text(
                """UPDATE device SET
                    platform = :platform, environment = :environment, token_hash = :token_hash,
                    push_to_start_token = COALESCE(CAST(:push_to_start_token AS text), push_to_start_token),
                    push_to_start_active = CASE WHEN CAST(:push_to_start_token AS text) IS NULL
                        THEN push_to_start_active ELSE true END,
                    app_version = :app_version, locale = :locale, updated_at = now()
                WHERE id = :id"""
            ),
            {**values, "id": known.id, "token_hash": hash_token(secret)},
        )
    return Registered(known.id, secret, created=False)


async def stored_token_hash(engine: AsyncEngine, device_id: uuid.UUID) -> str | None:
    async with engine.connect() as conn:
        value = (
            await conn.execute(text("SELECT token_hash FROM device WHERE id = :id"), {"id": device_id})
        ).scalar()
    return None if value is None else str(value)


async def set_push_to_start_token(engine: AsyncEngine, device_id: uuid.UUID, push_token: str) -> None:
    async with engine.begin() as conn:
        await conn.execute(
            text(
                """UPDATE device SET push_to_start_token = :token, push_to_start_active = true, updated_at = now()
                WHERE id = :id"""
            ),
            {"id": device_id, "token": push_token},
        )


@dataclass(frozen=True)
class Followed:
    created: bool
    """False: the device followed the fixture already."""
    tell_the_match: bool
    """This follow marked the match as having followers waiting: signal its run (once for all the
    follows until its walk begins; again if the mark is older than `RESIGNAL_AFTER_SECONDS`)."""


RESIGNAL_AFTER_SECONDS = 30
"""A mark this old may stand for a signal that never arrived (Temporal was down): signal again."""


async def expire_followers_mark(engine: AsyncEngine, fixture_id: int) -> None:
    """The signal for this mark did not go out: the next follow (or sweep) signals at once."""
    async with engine.begin() as conn:
        await conn.execute(
            text("UPDATE followers_waiting SET since = '-infinity' WHERE fixture_id = :fixture_id"),
            {"fixture_id": fixture_id},
        )


async def claim_stale_followers_marks(engine: AsyncEngine) -> list[int]:
    """Live matches whose followers have waited past `RESIGNAL_AFTER_SECONDS` without a walk (the
    signal was lost and no one followed since): their marks are renewed, and the caller signals
    them (a match halted by rain included). Marks of matches that are over are dropped: no Live
    Activity is started any more. Those of a match at stumps wait: no activity starts overnight,
    and the start when play resumes walks every follower (its run clears the mark)."""
    over = [state.value for state in OVER_STATES]
    live = [state.value for state in BEGUN_STATES - OVER_STATES - OVERNIGHT_STATES]
    async with engine.begin() as conn:
        await conn.execute(
            text(
                """DELETE FROM followers_waiting w USING scoreboard s
                WHERE s.fixture_id = w.fixture_id AND s.state = ANY(CAST(:over AS text[]))"""
            ),
            {"over": over},
        )
        rows = await conn.execute(
            text(
                """UPDATE followers_waiting w SET since = now()
                FROM scoreboard s
                WHERE s.fixture_id = w.fixture_id AND s.state = ANY(CAST(:live AS text[]))
                  AND w.since < now() - make_interval(secs => :resignal)
                RETURNING w.fixture_id"""
            ),
            {"live": live, "resignal": RESIGNAL_AFTER_SECONDS},
        )
        return [int(row.fixture_id) for row in rows]


async def follow(engine: AsyncEngine, device_id: uuid.UUID, fixture_id: int) -> Followed:
    """Follow a fixture, marking its match as having followers waiting for a Live Activity.

    Raises:
        UnknownFixture: No such fixture.
    """
    async with engine.begin() as conn:
        await _require_fixture(conn, fixture_id)
        inserted = await conn.execute(
            text(
                """INSERT INTO follow (device_id, fixture_id) VALUES (:device_id, :fixture_id)
                ON CONFLICT DO NOTHING RETURNING device_id"""
            ),
            {"device_id": device_id, "fixture_id": fixture_id},
        )
        if inserted.first() is None:
            return Followed(created=False, tell_the_match=False)
        marked = await conn.execute(
            text(
                """INSERT INTO followers_waiting (fixture_id) VALUES (:fixture_id)
                ON CONFLICT (fixture_id) DO UPDATE SET since = now()
                WHERE followers_waiting.since < now() - make_interval(secs => :resignal)
                RETURNING fixture_id"""
            ),
            {"fixture_id": fixture_id, "resignal": RESIGNAL_AFTER_SECONDS},
        )
        return Followed(created=True, tell_the_match=marked.first() is not None)


async def unfollow(engine: AsyncEngine, device_id: uuid.UUID, fixture_id: int) -> None:
    async with engine.begin() as conn:
        await conn.execute(
            text("DELETE FROM follow WHERE device_id = :device_id AND fixture_id = :fixture_id"),
            {"device_id": device_id, "fixture_id": fixture_id},
        )


async def report_activity_token(
    engine: AsyncEngine, device_id: uuid.UUID, fixture_id: int, push_token: str, generation: int | None = None
) -> ActivityRow:
    """The app's update token for its activity of `fixture_id`: the activity is now `active`.

    Only a follower's report is taken: every change of the match is pushed to an active token, so
    a token reported for a match the device does not follow would let anyone aim the fan-outs at
    any number of tokens. The follow is locked until the report commits, so an unfollow
    cannot slip between them.

    A follower may have several activities for one fixture in turn (`live_activity.generation`: a
    long match renews its activity before Apple's 8-hour cap, a Test ends the day's at stumps).
    A report naming `generation` is for the push-to-start whose attributes carried it: Scoreline's
    start walk made that row before it sent the start, so without the row Scoreline never started
    it and the report is refused. So a late report for an ended activity (its token rotated just
    before the end) is refused too, and never revives it nor lands on its successor. A report
    without a generation is for the newest; with no activity stored at all the app started one
    itself (as the start walk allows: it never starts a second over it), and generation 1 is
    created. A report for the activity that runs replaces the token (ActivityKit rotated it).

    Raises:
        UnknownFixture: No such fixture.
        NotFollowingError: The device does not follow the fixture.
        ActivityEndedError: That activity has ended already.
        UnknownActivityError: `generation` names an activity Scoreline never started for the device.
    """
    async with engine.begin() as conn:
        await _require_fixture(conn, fixture_id)
        await _require_follow(conn, device_id, fixture_id)
        stored = (
            await conn.execute(
                text(
                    """SELECT id, generation, status FROM live_activity
                    WHERE device_id = :device_id AND fixture_id = :fixture_id
                    ORDER BY generation DESC FOR UPDATE"""
                ),
                {"device_id": device_id, "fixture_id": fixture_id},
            )
        ).all()
        chosen = next((r for r in stored if generation in (None, r.generation)), None)
        if chosen is None and generation is not None:
            raise UnknownActivityError(f"no live activity {generation} for fixture {fixture_id} was started")
        if chosen is not None and chosen.status == "ended":
            raise ActivityEndedError(f"the live activity for fixture {fixture_id} has ended")
        # New (the app's own), or the chosen one: an activity the fan-out inserted meanwhile is
        # updated in place, unless it ended meanwhile.
        row = (
            await conn.execute(
                text(
                    f"""INSERT INTO live_activity
                        (device_id, fixture_id, generation, status, push_token, push_token_active)
                    VALUES (:device_id, :fixture_id, :generation, 'active', :token, true)
                    ON CONFLICT (device_id, fixture_id, generation) DO UPDATE SET
                        status = 'active', push_token = excluded.push_token, push_token_active = true,
                        updated_at = now()
                    WHERE live_activity.status <> 'ended'
                    RETURNING {_ACTIVITY_COLUMNS}"""
                ),
                {
                    "device_id": device_id,
                    "fixture_id": fixture_id,
                    "generation": 1 if chosen is None else chosen.generation,
                    "token": push_token,
                },
            )
        ).first()
        if row is None:
            raise ActivityEndedError(f"the live activity for fixture {fixture_id} has ended")
    return _activity(row)


async def activities(engine: AsyncEngine, device_id: uuid.UUID) -> list[ActivityRow]:
    """The device's Live Activities, newest first (a fixture's generations newest first too)."""
    async with engine.connect() as conn:
        rows = (
            await conn.execute(
                text(
                    f"""SELECT {_ACTIVITY_COLUMNS} FROM live_activity WHERE device_id = :device_id
                    ORDER BY created_at DESC, id DESC"""
                ),
                {"device_id": device_id},
            )
        ).all()
    return [_activity(row) for row in rows]


_ACTIVITY_COLUMNS = """fixture_id, generation, status, push_token_active,
    push_token IS NOT NULL AS has_push_token, started_at, ended_at, updated_at"""


async def _require_fixture(conn: AsyncConnection, fixture_id: int) -> None:
    found = await conn.execute(text("SELECT 1 FROM fixture WHERE id = :id"), {"id": fixture_id})
    if found.first() is None:
        raise UnknownFixture(f"no fixture {fixture_id}")


async def _require_follow(conn: AsyncConnection, device_id: uuid.UUID, fixture_id: int) -> None:
    found = await conn.execute(
        text("SELECT 1 FROM follow WHERE device_id = :device_id AND fixture_id = :fixture_id FOR KEY SHARE"),
        {"device_id": device_id, "fixture_id": fixture_id},
    )
    if found.first() is None:
        raise NotFollowingError(f"the device does not follow fixture {fixture_id}")


def _activity(row: Any) -> ActivityRow:
    return ActivityRow(
        fixture_id=int(row.fixture_id),
        generation=int(row.generation),
        status=str(row.status),
        push_token_active=bool(row.push_token_active),
        has_push_token=bool(row.has_push_token),
        started_at=row.started_at,
        ended_at=row.ended_at,
        updated_at=row.updated_at,
    )
