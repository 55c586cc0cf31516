"""Publishing a Live Activity push: one `la_push` row, and every target's mailbox moved to it.

The match workflow publishes its pushes in order, one `publish_live_activity_push` activity each
(docs/live-activities.md, "Publishing"). A publish is a few set-based statements in one
transaction under the fixture's push lock; it never waits for APNs (the drainers send), and a
retry or a replay changes nothing: the push's `(fixture, event_key, event)` is published once,
and a mailbox only ever moves forward.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine
from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.push.payloads import FixtureNames, alert, content_state
from domain.failures import UNKNOWN_FIXTURE
from domain.pushes import Published, PushInput
from scoreline.devices.mailbox import lock_pushes, notify_due
from scoreline.logging import get_logger
from scoreline.tracing import bound_trace

log = get_logger(__name__)


class PublishActivities:
    """The database, injected once per worker; `routine_interval` is `LA_MIN_UPDATE_INTERVAL`."""

    def __init__(self, engine: AsyncEngine, routine_interval: float) -> None:
        self._engine = engine
        self._routine_interval = routine_interval

    @activity.defn(name="publish_live_activity_push")
    async def publish_live_activity_push(self, push: PushInput) -> Published:
        """Publish `push` to every target's mailbox (see the module docstring)."""
        # The change's own trace (a poll's or a desk request's) wins over the workflow's.
        with bound_trace(push.trace_id) if push.trace_id else contextlib.nullcontext():
            published = await publish(self._engine, push, self._routine_interval)
            log.info(
                "push.published",
                fixture_id=push.fixture_id,
                event_key=push.event_key,
                kind=push.kind,
                stamp=published.stamp,
                mailboxes=published.mailboxes,
            )
            return published


async def publish(engine: AsyncEngine, push: PushInput, routine_interval: float) -> Published:
    """Record `push` and move its targets' mailboxes to it, in one transaction."""
    async with engine.begin() as conn:
        await lock_pushes(conn, push.fixture_id, shared=False)
        fixture = (
            await conn.execute(
                text(
                    """SELECT name, home_team, away_team, competition, pushes_purged_at
                    FROM fixture WHERE id = :id"""
                ),
                {"id": push.fixture_id},
            )
        ).first()
        if fixture is None:
            raise ApplicationError(f"no fixture {push.fixture_id}", type=UNKNOWN_FIXTURE, non_retryable=True)
        if fixture.pushes_purged_at is not None:
            # Retention deleted its pushes (the match has long been over): a replay must not
            # publish its alerts to phones a second time.
            return Published(stamp=0)
        names = _names(fixture)
        stamp = await _record(conn, push, names)
        params = {
            "fixture_id": push.fixture_id,
            "generation": push.generation,
            "stamp": stamp,
            "alert": push.alert and push.kind != "start",
            "routine": push.routine,
            "interval": routine_interval,
        }
        moved = 0
        for statement in _MOVES[push.kind]:
            moved += (await conn.execute(text(statement), params)).rowcount
        if moved:
            await notify_due(conn)
    return Published(stamp=stamp, mailboxes=moved)


def _names(row: Any) -> FixtureNames:
    """The names a payload shows, from the fixture row."""
    home, away = _name(row.home_team), _name(row.away_team)
    if home is None or away is None:
        # A fixture without participants (rare): fall back on "Home vs Away" from its name.
        left, _, right = str(row.name).partition(" vs ")
        home, away = home or left or "Home", away or right or "Away"
    return FixtureNames(home=home, away=away, competition=_name(row.competition))


async def _record(conn: AsyncConnection, push: PushInput, names: FixtureNames) -> int:
    """The push's stamp: the one it was published with before, or later than every earlier push
    of the fixture (so a new run, whose clock may lag the last stamp, never goes back)."""
    known = await conn.scalar(
        text(
            """SELECT stamp FROM la_push
            WHERE fixture_id = :fixture_id AND event_key = :event_key AND event = :event"""
        ),
        {"fixture_id": push.fixture_id, "event_key": push.event_key, "event": push.kind},
    )
    if known is not None:
        return int(known)
    attributes: dict[str, Any] = {
        "fixtureId": push.fixture_id,
        "homeTeam": names.home,
        "awayTeam": names.away,
    }
    if names.competition:
        attributes["competition"] = names.competition
    if push.generation > 1:
        attributes["generation"] = push.generation
    stamp = await conn.scalar(
        text(
            """INSERT INTO la_push (fixture_id, stamp, event_key, event, generation, priority, routine,
                content_state, alert, attributes, stale_date, dismissal_date, trace_id)
            SELECT :fixture_id, s.stamp, :event_key, :event, :generation, :priority, :routine,
                CAST(:state AS jsonb), CAST(:alert AS jsonb), CAST(:attributes AS jsonb),
                s.stamp + :stale_after, s.stamp + :dismiss_after, :trace_id
            FROM (SELECT GREATEST(:asked, COALESCE(MAX(stamp) + 1, 0)) AS stamp
                  FROM la_push WHERE fixture_id = :fixture_id) AS s
            RETURNING stamp"""
        ),
        {
            "fixture_id": push.fixture_id,
            "event_key": push.event_key,
            "event": push.kind,
            "generation": push.generation,
            "priority": push.priority,
            "routine": push.routine,
            "state": json.dumps(content_state(push.state, push.moment, names)),
            "alert": json.dumps(alert(push, names)) if push.alert and push.kind != "start" else None,
            "attributes": json.dumps(attributes),
            "stale_after": push.stale_after_seconds,
            "dismiss_after": push.dismiss_after_seconds,
            "trace_id": push.trace_id,
            "asked": push.timestamp,
        },
    )
    return int(stamp)


def _name(value: Any) -> str | None:
    """`name` of a `{id, name, …}` JSONB column."""
    if isinstance(value, dict) and isinstance(value.get("name"), str) and value["name"]:
        return str(value["name"])
    return None


_FORWARD = "(la.want_stamp IS NULL OR la.want_stamp < :stamp)"
"""A mailbox only moves forward: a retried or replayed publish moves none already there."""
_DUE = """CASE
    WHEN la.tries > 0 AND la.next_try_at IS NOT NULL THEN la.next_try_at
    WHEN :routine AND NOT :alert AND la.alert_stamp IS NULL THEN LEAST(
        COALESCE(la.next_try_at, 'infinity'),
        GREATEST(now(), la.routine_sent_at + make_interval(secs => :interval)))
    ELSE now() END"""
"""When a moved mailbox is due: a backoff in progress stands (a token answering 429 is not sent to
faster because the match moves); a routine change waits for the activity's routine interval
unless something louder is owed already; anything else goes now."""

_START = (
    # Every follower without an activity of this generation gets a mailbox wanting the start.
    """INSERT INTO live_activity (device_id, fixture_id, generation, status, want_stamp, next_try_at)
    SELECT f.device_id, :fixture_id, :generation, 'pending', :stamp, now()
    FROM follow f WHERE f.fixture_id = :fixture_id
    ON CONFLICT (device_id, fixture_id, generation) DO NOTHING""",
    # An activity of this generation already there (the app's own, reported before kick-off).
    f"""UPDATE live_activity la SET want_stamp = :stamp, next_try_at = {_DUE}, updated_at = now()
    WHERE la.fixture_id = :fixture_id AND la.generation = :generation AND la.status <> 'ended'
      AND NOT la.want_end AND {_FORWARD}""",
)
_UPDATE = (
    # Followers only: an unfollowed activity hears nothing more until the end, which clears it.
    f"""UPDATE live_activity la SET want_stamp = :stamp,
        alert_stamp = CASE WHEN :alert THEN :stamp ELSE la.alert_stamp END,
        next_try_at = {_DUE}, updated_at = now()
    WHERE la.fixture_id = :fixture_id AND la.generation = :generation AND la.status <> 'ended'
      AND NOT la.want_end AND {_FORWARD}
      AND EXISTS (SELECT 1 FROM follow f WHERE f.device_id = la.device_id AND f.fixture_id = la.fixture_id)""",
)
_END = (
    # A start that never went out (and none is on its way): the phone never showed it.
    """UPDATE live_activity la SET want_stamp = :stamp, want_end = true, next_try_at = NULL,
        status = 'ended', ended_at = now(), updated_at = now()
    WHERE la.fixture_id = :fixture_id AND la.generation <= :generation AND la.status = 'pending'
      AND la.started_at IS NULL AND la.push_token IS NULL AND la.alert_marked_at IS NULL""",
    f"""UPDATE live_activity la SET want_stamp = :stamp, want_end = true,
        alert_stamp = CASE WHEN :alert THEN :stamp ELSE la.alert_stamp END,
        next_try_at = {_DUE}, updated_at = now()
    WHERE la.fixture_id = :fixture_id AND la.generation <= :generation AND la.status <> 'ended'
      AND {_FORWARD}""",
)
_MOVES = {"start": _START, "update": _UPDATE, "end": _END}
