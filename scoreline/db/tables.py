"""The schema, as SQLAlchemy Core tables: what the code reads and writes.

Alembic migrations under `migrations/versions/` are the only way the database changes; a test
compares these tables with a freshly migrated database so the two never drift.

The exactly-once guarantees of design §3 are constraints here, not code elsewhere:
`match_event` (fixture, stream, provider id), `command.command_id`, `timeline_item` (fixture, seq)
and `la_push` (fixture, event key, event) are unique, so a retried or replayed write is a no-op by
construction.
"""

from __future__ import annotations

from datetime import datetime

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
    MetaData,
    PrimaryKeyConstraint,
    Sequence,
    SmallInteger,
    Table,
    Text,
    UniqueConstraint,
    func,
    text,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB, UUID
from sqlalchemy.dialects.postgresql import base as postgresql_base
from sqlalchemy.types import UserDefinedType

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

metadata = MetaData(naming_convention=NAMING_CONVENTION)


class Xid8(UserDefinedType[int]):
    """Postgres' 64-bit transaction id, which SQLAlchemy has no type for."""

    cache_ok = True

    def get_col_spec(self, **_: object) -> str:
        return "xid8"


# Let reflection (Alembic's drift check) recognise the column instead of warning about it.
postgresql_base.ischema_names["xid8"] = Xid8


def _created_at() -> Column[datetime]:
    return Column("created_at", DateTime(timezone=True), nullable=False, server_default=func.now())


def _updated_at() -> Column[datetime]:
    return Column("updated_at", DateTime(timezone=True), nullable=False, server_default=func.now())


fixture = Table(
    "fixture",
    metadata,
    Column("id", BigInteger, primary_key=True, autoincrement=False, comment="the provider's fixture id"),
    Column("sport", Text, nullable=False, server_default="football"),
    Column("league_id", BigInteger),
    Column("season_id", BigInteger),
    Column("name", Text, nullable=False),
    Column("starting_at", DateTime(timezone=True)),
    Column("venue_id", BigInteger),
    Column("home_team", JSONB, comment="{id, name, short_code, image}"),
    Column("away_team", JSONB),
    Column("competition", JSONB, comment="{id, name}"),
    Column("state", Text, nullable=False, server_default="scheduled", comment="normalised state"),
    Column("provider_state_id", Integer),
    Column("source", Text, nullable=False, server_default="provider", comment="provider | desk"),
    _created_at(),
    _updated_at(),
    Column(
        "scoring_mode",
        Text,
        nullable=False,
        server_default="provider",
        comment="who owns the score now: provider | desk (switched by an operator command)",
    ),
    Column(
        "squads",
        JSONB,
        comment="{home|away: [{id, name, shirt_number, starting}]} for desk-scored fixtures",
    ),
    Column(
        "pushes_purged_at",
        DateTime(timezone=True),
        comment="when retention deleted this match's la_push rows: nothing is pushed for it again",
    ),
    CheckConstraint("source IN ('provider', 'desk')", name="source"),
    CheckConstraint("scoring_mode IN ('provider', 'desk')", name="scoring_mode"),
)
Index("ix_fixture_state_starting_at", fixture.c.state, fixture.c.starting_at)
Index(
    "ix_fixture_updated_at_pushes_unpurged",
    fixture.c.updated_at,
    postgresql_where=fixture.c.pushes_purged_at.is_(None),
)
"""Over matches whose published pushes retention has yet to delete (`activities.retention`)."""

match_event = Table(
    "match_event",
    metadata,
    Column("id", BigInteger, Identity(), primary_key=True),
    Column("fixture_id", BigInteger, ForeignKey("fixture.id", ondelete="CASCADE"), nullable=False),
    Column("stream", Text, nullable=False, comment="events | timeline | balls: the provider's id spaces"),
    Column("provider_event_id", BigInteger, nullable=False),
    Column("type", Text, nullable=False),
    Column("provider_type_id", Integer),
    Column("minute", SmallInteger),
    Column("extra_minute", SmallInteger),
    Column("sort_order", Integer),
    Column("side", Text, comment="home | away | null"),
    Column("body", JSONB, nullable=False, comment="the normalised item as last seen"),
    Column("body_hash", Text, nullable=False),
    Column("source", Text, nullable=False, comment="live | reconcile | postmatch | replay"),
    Column("missing_count", SmallInteger, nullable=False, server_default="0"),
    Column("retracted_at", DateTime(timezone=True)),
    Column("first_seen_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    Column("last_seen_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    UniqueConstraint("fixture_id", "stream", "provider_event_id"),
    CheckConstraint("stream IN ('events', 'timeline', 'balls')", name="stream"),
    CheckConstraint("side IS NULL OR side IN ('home', 'away')", name="side"),
    CheckConstraint("source IN ('live', 'reconcile', 'postmatch', 'replay')", name="source"),
)

command = Table(
    "command",
    metadata,
    Column("command_id", Text, primary_key=True, comment="the sender's key, resent on every retry"),
    Column("fixture_id", BigInteger, ForeignKey("fixture.id", ondelete="CASCADE"), nullable=False),
    Column("sender", Text, nullable=False, comment="the desk or operator that sent it"),
    Column("code", Text, nullable=False),
    Column("input", JSONB, nullable=False),
    Column("payload_hash", Text, nullable=False),
    Column("saw", BigInteger),
    Column("outcome", Text, nullable=False),
    Column("answer", JSONB, nullable=False, comment="the exact answer, returned again to a duplicate"),
    Column("seq", BigInteger),
    Column("sent_at", DateTime(timezone=True)),
    Column("trace_id", Text),
    _created_at(),
    CheckConstraint("outcome IN ('accepted', 'refused', 'conflict')", name="outcome"),
)
Index("ix_command_fixture_id", command.c.fixture_id)
Index("ix_command_created_at", command.c.created_at)

timeline_item = Table(
    "timeline_item",
    metadata,
    Column("id", BigInteger, Identity(), primary_key=True),
    Column("fixture_id", BigInteger, ForeignKey("fixture.id", ondelete="CASCADE"), nullable=False),
    Column("seq", BigInteger, nullable=False, comment="1, 2, 3 … per fixture: the version"),
    Column(
        "kind",
        Text,
        nullable=False,
        comment="event | amendment | retraction | state | score | command",
    ),
    Column("origin", Text, nullable=False, comment="provider | desk"),
    Column("match_event_id", BigInteger, ForeignKey("match_event.id", ondelete="CASCADE")),
    Column(
        "command_id",
        Text,
        comment="the desk command's key; no foreign key: the command row is deleted after its retention age",
    ),
    Column("target_seq", BigInteger, comment="the entry an amendment, retraction or undo refers to"),
    Column("minute", SmallInteger),
    Column("extra_minute", SmallInteger),
    Column("body", JSONB, nullable=False),
    Column("trace_id", Text),
    _created_at(),
    UniqueConstraint("fixture_id", "seq"),
    CheckConstraint("seq > 0", name="seq_positive"),
    CheckConstraint("origin IN ('provider', 'desk')", name="origin"),
    CheckConstraint("kind IN ('event', 'amendment', 'retraction', 'state', 'score', 'command')", name="kind"),
)

scoreboard = Table(
    "scoreboard",
    metadata,
    Column("fixture_id", BigInteger, ForeignKey("fixture.id", ondelete="CASCADE"), primary_key=True),
    Column("version", BigInteger, nullable=False, comment="the last timeline seq folded in"),
    Column("state", Text, nullable=False),
    Column("home_score", SmallInteger, nullable=False, server_default="0"),
    Column("away_score", SmallInteger, nullable=False, server_default="0"),
    Column("body", JSONB, nullable=False, comment="period scores, clock, cards, sport-specific"),
    _updated_at(),
    Column(
        "rule_state",
        JSONB,
        comment="the sport rules' state after the last desk command: a new workflow run resumes from it",
    ),
)

domain_event = Table(
    "domain_event",
    metadata,
    Column("id", BigInteger, Identity(), primary_key=True),
    Column(
        "xid",
        Xid8(),
        nullable=False,
        server_default=text("pg_current_xact_id()"),
        comment="xid8: readers stop below pg_snapshot_xmin so a late commit is never skipped",
    ),
    Column("fixture_id", BigInteger, ForeignKey("fixture.id", ondelete="CASCADE"), nullable=False),
    Column("seq", BigInteger),
    Column("kind", Text, nullable=False),
    Column("payload", JSONB, nullable=False),
    Column("trace_id", Text),
    _created_at(),
)

Index("ix_domain_event_xid_id", domain_event.c.xid, domain_event.c.id)
Index("ix_domain_event_created_at", domain_event.c.created_at)

device = Table(
    "device",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True, server_default=text("gen_random_uuid()")),
    Column("install_id", Text, nullable=False, unique=True),
    Column("platform", Text, nullable=False),
    Column("environment", Text, nullable=False),
    Column("token_hash", Text, nullable=False, comment="sha-256 of the device's API secret"),
    Column("push_to_start_token", Text),
    Column("push_to_start_active", Boolean, nullable=False, server_default=text("true")),
    Column("app_version", Text),
    Column("locale", Text),
    _created_at(),
    _updated_at(),
    CheckConstraint("platform IN ('ios')", name="platform"),
    CheckConstraint("environment IN ('sandbox', 'production')", name="environment"),
)

follow = Table(
    "follow",
    metadata,
    Column("device_id", UUID(as_uuid=True), ForeignKey("device.id", ondelete="CASCADE"), nullable=False),
    Column("fixture_id", BigInteger, ForeignKey("fixture.id", ondelete="CASCADE"), nullable=False),
    _created_at(),
    PrimaryKeyConstraint("device_id", "fixture_id"),
)
Index("ix_follow_fixture_id_device_id", follow.c.fixture_id, follow.c.device_id)

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
    _created_at(),
    _updated_at(),
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
    _created_at(),
    PrimaryKeyConstraint("fixture_id", "stamp"),
    UniqueConstraint("fixture_id", "event_key", "event"),
    CheckConstraint("event IN ('start', 'update', 'end')", name="event"),
    comment="every Live Activity push a match published, newest stamp last",
)

published_document = Table(
    "published_document",
    metadata,
    Column("doc_key", Text, nullable=False, comment="e.g. match/81000001, fixtures/2026-03-14"),
    Column("version", BigInteger, nullable=False),
    Column("content_hash", Text, nullable=False, comment="of the body without timestamps"),
    Column("etag", Text, nullable=False),
    Column("body", JSONB, nullable=False),
    Column("competition_id", BigInteger),
    _created_at(),
    Column(
        "trace_ids",
        ARRAY(Text),
        nullable=False,
        server_default="{}",
        comment="the traces of the changes gathered into the rebuild that saved this version",
    ),
    PrimaryKeyConstraint("doc_key", "version"),
)
Index("ix_published_document_created_at", published_document.c.created_at)

partner = Table(
    "partner",
    metadata,
    Column("id", BigInteger, Identity(), primary_key=True),
    Column("name", Text, nullable=False, unique=True),
    Column("api_key_hash", Text, nullable=False, unique=True),
    Column("competitions", ARRAY(BigInteger), nullable=False, server_default="{}"),
    Column("active", Boolean, nullable=False, server_default=text("true")),
    Column(
        "delay_seconds",
        SmallInteger,
        nullable=False,
        server_default="0",
        comment="broadcast delay of what the partner's key reads: each change this long after its commit",
    ),
    _created_at(),
    CheckConstraint("delay_seconds BETWEEN 0 AND 300", name="delay_seconds"),
)

webhook_endpoint = Table(
    "webhook_endpoint",
    metadata,
    Column("id", BigInteger, Identity(), primary_key=True),
    Column("partner_id", BigInteger, ForeignKey("partner.id", ondelete="CASCADE"), nullable=False),
    Column("url", Text, nullable=False),
    Column("secret", Text, nullable=False, comment="whsec_<base64>: signs every message (Standard Webhooks)"),
    Column("previous_secret", Text, comment="the secret before the last rotation, signing beside it a while"),
    Column("previous_secret_until", DateTime(timezone=True)),
    Column(
        "delay_seconds",
        SmallInteger,
        nullable=False,
        server_default="0",
        comment="broadcast delay: each change is sent this long after its commit, never earlier",
    ),
    Column(
        "paused_at",
        DateTime(timezone=True),
        comment="nothing is sent while set (a day of failures, or an operator); nothing is dropped",
    ),
    Column("paused_reason", Text),
    _created_at(),
    UniqueConstraint("partner_id", "url"),
    CheckConstraint("delay_seconds BETWEEN 0 AND 300", name="delay_seconds"),
)
"""A partner's HTTPS receiver of every change of the matches in its competitions."""

webhook_message = Table(
    "webhook_message",
    metadata,
    Column(
        "endpoint_id", BigInteger, ForeignKey("webhook_endpoint.id", ondelete="CASCADE"), primary_key=True
    ),
    Column("fixture_id", BigInteger, ForeignKey("fixture.id", ondelete="CASCADE"), primary_key=True),
    Column("seq", BigInteger, primary_key=True, comment="the log entry this change is"),
    Column("body", JSONB, nullable=False, comment="what is POSTed, the same on every attempt"),
    Column(
        "committed_at",
        DateTime(timezone=True),
        nullable=False,
        comment="when the change committed: with the endpoint's delay, the first moment it may be sent",
    ),
    Column("attempts", Integer, nullable=False, server_default="0"),
    Column("next_attempt_at", DateTime(timezone=True), nullable=False),
    Column(
        "leased_until",
        DateTime(timezone=True),
        comment="a sender holds this message (and its match) until then; no claim takes the match",
    ),
    Column(
        "failing_since",
        DateTime(timezone=True),
        comment="its first attempt without a 2xx: a day of them pauses the endpoint",
    ),
    Column("delivered_at", DateTime(timezone=True)),
)
"""What each endpoint is owed, one row per log entry: sent strictly in `seq` order per
(endpoint, fixture), each after the one before it was answered 2xx."""
Index(
    "ix_webhook_message_owed",
    webhook_message.c.endpoint_id,
    webhook_message.c.fixture_id,
    webhook_message.c.seq,
    postgresql_where=webhook_message.c.delivered_at.is_(None),
)

webhook_attempt = Table(
    "webhook_attempt",
    metadata,
    Column("id", BigInteger, Identity(), primary_key=True),
    Column("endpoint_id", BigInteger, ForeignKey("webhook_endpoint.id", ondelete="CASCADE"), nullable=False),
    Column("fixture_id", BigInteger, nullable=False),
    Column("seq", BigInteger, nullable=False),
    Column("message_id", Text, nullable=False, comment="the webhook-id header"),
    Column("status", SmallInteger, comment="the receiver's HTTP status; null when no answer came"),
    Column("latency_ms", Integer, nullable=False),
    Column("answer_head", Text, nullable=False, server_default="", comment="the first bytes of the answer"),
    Column("error", Text, comment="the network failure, when no answer came"),
    _created_at(),
)
"""The delivery log a partner reads: every attempt, kept 30 days."""
Index("ix_webhook_attempt_endpoint_id_id", webhook_attempt.c.endpoint_id, webhook_attempt.c.id)

desk_fixture_id = Sequence("desk_fixture_id", start=1_000_000_000_000, metadata=metadata)
"""Ids of fixtures no provider knows: far above any provider id, and exact as a JavaScript number."""

desk = Table(
    "desk",
    metadata,
    Column("id", BigInteger, Identity(), primary_key=True),
    Column("name", Text, nullable=False, unique=True),
    Column("token_hash", Text, nullable=False, unique=True, comment="sha-256 of the desk's bearer token"),
    Column("fixtures", ARRAY(BigInteger), nullable=False, comment="the fixtures this desk may score"),
    Column("revoked_at", DateTime(timezone=True)),
    _created_at(),
)

operator = Table(
    "operator",
    metadata,
    Column("id", BigInteger, Identity(), primary_key=True),
    Column("name", Text, nullable=False, unique=True),
    Column("token_hash", Text, nullable=False, unique=True, comment="sha-256 of the operator's bearer token"),
    Column("revoked_at", DateTime(timezone=True)),
    _created_at(),
)

feed_cursor = Table(
    "feed_cursor",
    metadata,
    Column("consumer", Text, primary_key=True, comment="a durable outbox consumer, e.g. feeds"),
    Column("last_xid", Xid8(), nullable=False, comment="with last_event_id: the last domain_event handled"),
    Column("last_event_id", BigInteger, nullable=False),
    _updated_at(),
)
"""Where each durable consumer of `domain_event` stands, in the reader's `(xid, id)` order."""

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
    _created_at(),
    CheckConstraint("token_kind IN ('push_to_start', 'update')", name="token_kind"),
)
"""Every request to APNs (and every failure to make one), for support: who got what, when, and why not."""
Index("ix_push_attempt_device_id_created_at", push_attempt.c.device_id, push_attempt.c.created_at)
Index("ix_push_attempt_fixture_id_event_key", push_attempt.c.fixture_id, push_attempt.c.event_key)
Index("ix_push_attempt_created_at", push_attempt.c.created_at)
