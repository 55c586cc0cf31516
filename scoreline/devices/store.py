"""Device rows: registration (with secret rotation), push-to-start tokens, follows, Live Activities.

Every write is one transaction that checks what it depends on first (the fixture exists, the
device follows the fixture, a known install's caller holds its current token), so a refused request
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
from scoreline.devices.mailbox import lock_pushes, notify_due, running_generation, wanted_by
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
    """A new push-to-start token: the device's starts still owed go to it at once."""
    async with engine.begin() as conn:
        await conn.execute(
            text(
                """UPDATE device SET push_to_start_token = :token, push_to_start_active = true, updated_at = now()
                WHERE id = :id"""
            ),
            {"id": device_id, "token": push_token},
        )
        owed = await conn.execute(
            text(
                """UPDATE live_activity SET next_try_at = now(), tries = 0, updated_at = now()
                WHERE device_id = :id AND status = 'pending' AND started_at IS NULL
                  AND push_token IS NULL AND want_stamp IS NOT NULL AND NOT want_end
                  AND EXISTS (SELECT 1 FROM follow f WHERE f.device_id = live_activity.device_id
                                AND f.fixture_id = live_activity.fixture_id)"""
            ),
            {"id": device_id},
        )
        if owed.rowcount:
            await notify_due(conn)


async def follow(engine: AsyncEngine, device_id: uuid.UUID, fixture_id: int) -> bool:
    """Follow a fixture; False if it was followed already. While a generation of the match's Live
    Activities runs, the new follower's mailbox is filled here, wanting the state it shows (its
    start goes out at once); before kick-off, overnight and after the end, the next start publish
    covers it (the fixture's push lock orders the two: docs/live-activities.md).

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
            return False
        await lock_pushes(conn, fixture_id, shared=True)
        running = await running_generation(conn, fixture_id)
        if running is not None:
            filled = await conn.execute(
                text(
                    """INSERT INTO live_activity
                        (device_id, fixture_id, generation, status, want_stamp, next_try_at)
                    VALUES (:device_id, :fixture_id, :generation, 'pending', :stamp, now())
                    ON CONFLICT (device_id, fixture_id, generation) DO NOTHING"""
                ),
                {
                    "device_id": device_id,
                    "fixture_id": fixture_id,
                    "generation": running.generation,
                    "stamp": running.stamp,
                },
            )
            if filled.rowcount:
                await notify_due(conn)
        return True


async def unfollow(engine: AsyncEngine, device_id: uuid.UUID, fixture_id: int) -> None:
    """Stop following: the device's activities of the fixture get no more updates (a state owed
    now is dropped), only the match's end, which takes them off the screen. Following again
    resumes them with the next change."""
    async with engine.begin() as conn:
        # Shared with publishes' exclusive lock: a publish running now has moved these mailboxes
        # before the unfollow, or sees the follow gone.
        await lock_pushes(conn, fixture_id, shared=True)
        await conn.execute(
            text("DELETE FROM follow WHERE device_id = :device_id AND fixture_id = :fixture_id"),
            {"device_id": device_id, "fixture_id": fixture_id},
        )
        await conn.execute(
            text(
                """UPDATE live_activity SET next_try_at = NULL, updated_at = now()
                WHERE device_id = :device_id AND fixture_id = :fixture_id AND NOT want_end"""
            ),
            {"device_id": device_id, "fixture_id": fixture_id},
        )


async def report_activity_token(
    engine: AsyncEngine, device_id: uuid.UUID, fixture_id: int, push_token: str, generation: int | None = None
) -> ActivityRow:
    """The app's update token for its activity of `fixture_id`: the activity runs on this token.

    Only a follower's report is taken: every change of the match is pushed to a reported token, so
    a token reported for a match the device does not follow would let anyone aim the drainers at
    any number of tokens. The follow is locked until the report commits, so an unfollow cannot
    slip between them.

    A report naming `generation` is for the push-to-start whose attributes carried it: without
    its row Scoreline never started it, and the report is refused. Without a generation it is for
    the newest; with no activity stored at all the app started one itself, and generation 1 is
    created wanting what generation 1 shows now. A new token (ActivityKit rotated it, or the last
    one died) makes the activity due at once with what the old token got forgotten: the new token
    gets the current state and any owed alert, and the end if the activity has ended (an ended
    activity drops a second end, one still on screen needs it). The first report after
    Scoreline's start keeps what the start delivered: only what changed since goes out.

    Raises:
        UnknownFixture: No such fixture.
        NotFollowingError: The device does not follow the fixture.
        UnknownActivityError: `generation` names an activity Scoreline never started for the device.
    """
    async with engine.begin() as conn:
        await _require_fixture(conn, fixture_id)
        await _require_follow(conn, device_id, fixture_id)
        await lock_pushes(conn, fixture_id, shared=True)
        ids = {"device_id": device_id, "fixture_id": fixture_id}
        stored = (await conn.execute(text(_STORED_ACTIVITIES), ids)).all()
        chosen = next((r for r in stored if generation in (None, r.generation)), None)
        if chosen is None and generation is not None:
            raise UnknownActivityError(f"no live activity {generation} for fixture {fixture_id} was started")
        if chosen is None:
            wanted = await wanted_by(conn, fixture_id, 1)
            app_started = {
                **ids,
                "token": push_token,
                "stamp": None if wanted is None else wanted.stamp,
                "end": wanted is not None and wanted.end,
            }
            row = (await conn.execute(text(_APP_STARTED_ACTIVITY), app_started)).one()
        else:
            row = (await conn.execute(text(_NEW_TOKEN), {"id": chosen.id, "token": push_token})).one()
        await notify_due(conn)
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


_KNOWN_TOKEN = "(push_token IS NULL OR (push_token = :token AND push_token_active))"
"""A report that tells nothing new about what the phone shows: the first after Scoreline's start
(the phone shows what the start delivered) or the same live token again. Any other token is a
rotated one: what the old token got is forgotten, and the new one gets the current state."""

_ACTIVITY_COLUMNS = """fixture_id, generation, status, push_token_active,
    push_token IS NOT NULL AS has_push_token, started_at, ended_at, updated_at"""

_STORED_ACTIVITIES = """SELECT id, generation FROM live_activity
    WHERE device_id = :device_id AND fixture_id = :fixture_id
    ORDER BY generation DESC FOR NO KEY UPDATE"""
"""A device's activities of a fixture, newest generation first, locked until the report commits."""
_APP_STARTED_ACTIVITY = f"""INSERT INTO live_activity (device_id, fixture_id, generation, status,
        push_token, want_stamp, want_end, next_try_at)
    VALUES (:device_id, :fixture_id, 1, 'active', :token, :stamp, :end,
        CASE WHEN CAST(:stamp AS bigint) IS NULL THEN NULL ELSE now() END)
    RETURNING {_ACTIVITY_COLUMNS}"""
"""The activity the app started itself: generation 1, wanting what generation 1 shows now."""
_NEW_TOKEN = f"""UPDATE live_activity SET push_token = :token, push_token_active = true,
        status = CASE WHEN status = 'ended' THEN 'ended' ELSE 'active' END,
        sent_stamp = CASE WHEN {_KNOWN_TOKEN} THEN sent_stamp END, tries = 0,
        next_try_at = CASE
            WHEN want_stamp IS NULL THEN NULL
            WHEN {_KNOWN_TOKEN} AND want_stamp <= COALESCE(sent_stamp, 0)
                 AND alert_stamp IS NULL THEN next_try_at
            ELSE now() END,
        updated_at = now()
    WHERE id = :id RETURNING {_ACTIVITY_COLUMNS}"""
"""The activity runs on the reported token; a token it did not know forgets what was sent."""


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
