"""Live Activities: each device's activity per match, the pushes a match published, and every
request made to APNs for them.

`la_push (fixture_id, event_key, event)` is unique, so a replayed publish adds nothing.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Column,
    DateTime,
    ForeignKey,
    Identity,
    Index,
    Integer,
    PrimaryKeyConstraint,
    SmallInteger,
    Table,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB, UUID

from scoreline.db.tables.schema import created_at, metadata, updated_at

live_activity = Table(
    "live_activity",
    metadata,
    Column("id", BigInteger, Identity(), primary_key=True),
    Column("device_id", UUID(as_uuid=True), ForeignKey("device.id", ondelete="CASCADE"), nullable=False),
    Column("fixture_id", BigInteger, ForeignKey("fixture.id", ondelete="CASCADE"), nullable=False),
    Column("status", Text, nullable=False, server_default="pending"),
    Column("push_token", Text),
    Column("push_token_active", Boolean, nullable=False, server_default=text("true")),
    Column("started_at", DateTime(timezone=True)),
    Column("ended_at", DateTime(timezone=True)),
    created_at(),
    updated_at(),
    Column(
        "generation",
        Integer,
        nullable=False,
        server_default=text("1"),
        comment="1 from kick-off; the next after each renewal before Apple's 8 h cap or each stumps",
    ),
    Column("want_stamp", BigInteger, comment="la_push.stamp of the newest state this activity should show"),
    Column(
        "want_end",
        Boolean,
        nullable=False,
        server_default=text("false"),
        comment="that state is an end: only a newer end replaces it",
    ),
    Column("alert_stamp", BigInteger, comment="la_push.stamp whose alert is still owed (at most one)"),
    Column(
        "alert_marked_at",
        DateTime(timezone=True),
        comment="an alert or start request may be on its way since",
    ),
    Column(
        "alert_marked_stamp", BigInteger, comment="what that request carried: its alert's (or start's) stamp"
    ),
    Column(
        "alert_dropped_stamp",
        BigInteger,
        comment="the alert the last take dropped as in doubt, until a late answer that did not deliver gives it back",
    ),
    Column(
        "alert_dropped_mark",
        DateTime(timezone=True),
        comment="the alert_marked_at of the request whose outcome was in doubt when its alert was dropped",
    ),
    Column("sent_stamp", BigInteger, comment="the newest stamp APNs accepted for the current token"),
    Column(
        "next_try_at",
        DateTime(timezone=True),
        comment="when a drainer should try; null: nothing to do now",
    ),
    Column(
        "tries",
        Integer,
        nullable=False,
        server_default=text("0"),
        comment="answers in a row that did not deliver (backoff)",
    ),
    Column("lease_owner", Text, comment="the drainer that took the row; it alone writes the outcome"),
    Column("lease_until", DateTime(timezone=True), comment="until then no other drainer takes the row"),
    Column("routine_sent_at", DateTime(timezone=True), comment="when a routine update last went out"),
    UniqueConstraint("device_id", "fixture_id", "generation"),
    CheckConstraint("status IN ('pending', 'active', 'ended', 'failed')", name="status"),
    CheckConstraint("generation >= 1", name="generation"),
)
Index("ix_live_activity_fixture_id_status", live_activity.c.fixture_id, live_activity.c.status)
Index(
    "ix_live_activity_next_try_at",
    live_activity.c.next_try_at,
    postgresql_where=live_activity.c.next_try_at.isnot(None),
)
Index("ix_live_activity_fixture_id_generation", live_activity.c.fixture_id, live_activity.c.generation)
Index(
    "ix_live_activity_push_token",
    live_activity.c.push_token,
    postgresql_where=live_activity.c.push_token_active,
)
"""A 410 switches its token off wherever it is live (`activities.push.statements.SETTLE`)."""

la_push = Table(
    "la_push",
    metadata,
    Column("fixture_id", BigInteger, ForeignKey("fixture.id", ondelete="CASCADE"), nullable=False),
    Column("stamp", BigInteger, nullable=False, comment="aps.timestamp; grows with each publish"),
    Column("event_key", Text, nullable=False),
    Column("event", Text, nullable=False),
    Column("generation", Integer, nullable=False),
    Column("priority", SmallInteger, nullable=False),
    Column("routine", Boolean, nullable=False),
    Column("content_state", JSONB, nullable=False),
    Column("alert", JSONB, comment="a key moment's (or the end's) alert"),
    Column("attributes", JSONB, nullable=False, comment="a start's static attributes"),
    Column("stale_date", BigInteger, nullable=False),
    Column("dismissal_date", BigInteger, nullable=False),
    Column("trace_id", Text),
    created_at(),
    PrimaryKeyConstraint("fixture_id", "stamp"),
    UniqueConstraint("fixture_id", "event_key", "event"),
    CheckConstraint("event IN ('start', 'update', 'end')", name="event"),
    comment="every Live Activity push a match published, newest stamp last",
)

push_attempt = Table(
    "push_attempt",
    metadata,
    Column("id", BigInteger, Identity(), primary_key=True),
    Column("fixture_id", BigInteger, ForeignKey("fixture.id", ondelete="CASCADE"), nullable=False),
    Column("event_key", Text, nullable=False),
    Column("effect", Text, nullable=False, comment="la.start | la.alert | la.update | la.end"),
    Column("device_id", UUID(as_uuid=True), ForeignKey("device.id", ondelete="CASCADE"), nullable=False),
    Column("live_activity_id", BigInteger, ForeignKey("live_activity.id", ondelete="CASCADE")),
    Column("token_kind", Text, nullable=False, comment="push_to_start | update"),
    Column("attempt", SmallInteger, nullable=False, comment="1, 2, 3 … within one activity attempt"),
    Column("priority", SmallInteger, nullable=False),
    Column("payload_bytes", Integer, nullable=False),
    Column("apns_id", UUID(as_uuid=True), comment="null when no request reached APNs"),
    Column("status", SmallInteger, comment="APNs' HTTP status; null when no answer came"),
    Column("reason", Text, comment="APNs' reason, or the network failure"),
    Column("latency_ms", Integer, nullable=False),
    Column("trace_id", Text),
    created_at(),
    CheckConstraint("token_kind IN ('push_to_start', 'update')", name="token_kind"),
)
"""Every request to APNs (and every failure to make one), for support: who got what, when, and why not."""
Index("ix_push_attempt_device_id_created_at", push_attempt.c.device_id, push_attempt.c.created_at)
Index("ix_push_attempt_fixture_id_event_key", push_attempt.c.fixture_id, push_attempt.c.event_key)
Index("ix_push_attempt_created_at", push_attempt.c.created_at)
