"""Initial schema: fixtures, the per-match log, commands, outbox, devices, feeds, partners.

Revision ID: 0001
Revises:
Create Date: 2026-11-29 07:16:26.687760
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql
from sqlalchemy.types import UserDefinedType


class _Xid8(UserDefinedType[int]):
    """Frozen copy of the xid8 column type, so this migration never changes with the app code."""

    cache_ok = True

    def get_col_spec(self, **_: object) -> str:
        return "xid8"


revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "device",
        sa.Column("id", sa.UUID(), server_default=sa.text("gen_random_uuid()"), nullable=False),
        sa.Column("install_id", sa.Text(), nullable=False),
        sa.Column("platform", sa.Text(), nullable=False),
        sa.Column("environment", sa.Text(), nullable=False),
        sa.Column("token_hash", sa.Text(), nullable=False, comment="sha-256 of the device's API secret"),
        sa.Column("push_to_start_token", sa.Text(), nullable=True),
        sa.Column("push_to_start_active", sa.Boolean(), server_default=sa.text("true"), nullable=False),
        sa.Column("app_version", sa.Text(), nullable=True),
        sa.Column("locale", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.CheckConstraint("environment IN ('sandbox', 'production')", name=op.f("ck_device_environment")),
        sa.CheckConstraint("platform IN ('ios')", name=op.f("ck_device_platform")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_device")),
        sa.UniqueConstraint("install_id", name=op.f("uq_device_install_id")),
    )
    op.create_table(
        "fixture",
        sa.Column(
            "id", sa.BigInteger(), autoincrement=False, nullable=False, comment="the provider's fixture id"
        ),
        sa.Column("sport", sa.Text(), server_default="football", nullable=False),
        sa.Column("league_id", sa.BigInteger(), nullable=True),
        sa.Column("season_id", sa.BigInteger(), nullable=True),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("starting_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("venue_id", sa.BigInteger(), nullable=True),
        sa.Column(
            "home_team",
            postgresql.JSONB(astext_type=sa.Text()),
            nullable=True,
            comment="{id, name, short_code, image}",
        ),
        sa.Column("away_team", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column(
            "competition", postgresql.JSONB(astext_type=sa.Text()), nullable=True, comment="{id, name}"
        ),
        sa.Column("state", sa.Text(), server_default="scheduled", nullable=False, comment="normalised state"),
        sa.Column("provider_state_id", sa.Integer(), nullable=True),
        sa.Column("source", sa.Text(), server_default="provider", nullable=False, comment="provider | desk"),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.CheckConstraint("source IN ('provider', 'desk')", name=op.f("ck_fixture_source")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_fixture")),
    )
    op.create_index("ix_fixture_state_starting_at", "fixture", ["state", "starting_at"], unique=False)
    op.create_table(
        "partner",
        sa.Column("id", sa.BigInteger(), sa.Identity(always=False), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("api_key_hash", sa.Text(), nullable=False),
        sa.Column("competitions", postgresql.ARRAY(sa.BigInteger()), server_default="{}", nullable=False),
        sa.Column("active", sa.Boolean(), server_default=sa.text("true"), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_partner")),
        sa.UniqueConstraint("api_key_hash", name=op.f("uq_partner_api_key_hash")),
        sa.UniqueConstraint("name", name=op.f("uq_partner_name")),
    )
    op.create_table(
        "published_document",
        sa.Column("doc_key", sa.Text(), nullable=False, comment="e.g. match/81000001, fixtures/2026-03-14"),
        sa.Column("version", sa.BigInteger(), nullable=False),
        sa.Column("content_hash", sa.Text(), nullable=False, comment="of the body without timestamps"),
        sa.Column("etag", sa.Text(), nullable=False),
        sa.Column("body", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("competition_id", sa.BigInteger(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.PrimaryKeyConstraint("doc_key", "version", name=op.f("pk_published_document")),
    )
    op.create_table(
        "command",
        sa.Column("command_id", sa.Text(), nullable=False, comment="the sender's key, resent on every retry"),
        sa.Column("fixture_id", sa.BigInteger(), nullable=False),
        sa.Column("sender", sa.Text(), nullable=False, comment="the desk or operator that sent it"),
        sa.Column("code", sa.Text(), nullable=False),
        sa.Column("input", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("payload_hash", sa.Text(), nullable=False),
        sa.Column("saw", sa.BigInteger(), nullable=True),
        sa.Column("outcome", sa.Text(), nullable=False),
        sa.Column(
            "answer",
            postgresql.JSONB(astext_type=sa.Text()),
            nullable=False,
            comment="the exact answer, returned again to a duplicate",
        ),
        sa.Column("seq", sa.BigInteger(), nullable=True),
        sa.Column("sent_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("trace_id", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.CheckConstraint("outcome IN ('accepted', 'refused', 'conflict')", name=op.f("ck_command_outcome")),
        sa.ForeignKeyConstraint(
            ["fixture_id"], ["fixture.id"], name=op.f("fk_command_fixture_id_fixture"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("command_id", name=op.f("pk_command")),
    )
    op.create_index("ix_command_fixture_id", "command", ["fixture_id"], unique=False)
    op.create_table(
        "domain_event",
        sa.Column("id", sa.BigInteger(), sa.Identity(always=False), nullable=False),
        sa.Column(
            "xid",
            _Xid8(),
            server_default=sa.text("pg_current_xact_id()"),
            nullable=False,
            comment="xid8: readers stop below pg_snapshot_xmin so a late commit is never skipped",
        ),
        sa.Column("fixture_id", sa.BigInteger(), nullable=False),
        sa.Column("seq", sa.BigInteger(), nullable=True),
        sa.Column("kind", sa.Text(), nullable=False),
        sa.Column("payload", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("trace_id", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.ForeignKeyConstraint(
            ["fixture_id"],
            ["fixture.id"],
            name=op.f("fk_domain_event_fixture_id_fixture"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_domain_event")),
    )
    op.create_index("ix_domain_event_xid_id", "domain_event", ["xid", "id"], unique=False)
    op.create_table(
        "effect_log",
        sa.Column("id", sa.BigInteger(), sa.Identity(always=False), nullable=False),
        sa.Column("fixture_id", sa.BigInteger(), nullable=False),
        sa.Column("event_key", sa.Text(), nullable=False),
        sa.Column("effect", sa.Text(), nullable=False, comment="e.g. la.alert, la.start, la.end"),
        sa.Column("target", sa.Text(), nullable=False, comment="e.g. a live_activity id"),
        sa.Column("outcome", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.ForeignKeyConstraint(
            ["fixture_id"], ["fixture.id"], name=op.f("fk_effect_log_fixture_id_fixture"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_effect_log")),
        sa.UniqueConstraint(
            "fixture_id",
            "event_key",
            "effect",
            "target",
            name=op.f("uq_effect_log_fixture_id_event_key_effect_target"),
        ),
    )
    op.create_table(
        "follow",
        sa.Column("device_id", sa.UUID(), nullable=False),
        sa.Column("fixture_id", sa.BigInteger(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.ForeignKeyConstraint(
            ["device_id"], ["device.id"], name=op.f("fk_follow_device_id_device"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["fixture_id"], ["fixture.id"], name=op.f("fk_follow_fixture_id_fixture"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("device_id", "fixture_id", name=op.f("pk_follow")),
    )
    op.create_index("ix_follow_fixture_id", "follow", ["fixture_id"], unique=False)
    op.create_table(
        "live_activity",
        sa.Column("id", sa.BigInteger(), sa.Identity(always=False), nullable=False),
        sa.Column("device_id", sa.UUID(), nullable=False),
        sa.Column("fixture_id", sa.BigInteger(), nullable=False),
        sa.Column("status", sa.Text(), server_default="pending", nullable=False),
        sa.Column("push_token", sa.Text(), nullable=True),
        sa.Column("push_token_active", sa.Boolean(), server_default=sa.text("true"), nullable=False),
        sa.Column(
            "last_timestamp",
            sa.BigInteger(),
            nullable=True,
            comment="the aps timestamp of the last update sent",
        ),
        sa.Column("last_content_state", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column("last_routine_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.CheckConstraint(
            "status IN ('pending', 'active', 'ended', 'failed')", name=op.f("ck_live_activity_status")
        ),
        sa.ForeignKeyConstraint(
            ["device_id"], ["device.id"], name=op.f("fk_live_activity_device_id_device"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["fixture_id"],
            ["fixture.id"],
            name=op.f("fk_live_activity_fixture_id_fixture"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_live_activity")),
        sa.UniqueConstraint("device_id", "fixture_id", name=op.f("uq_live_activity_device_id_fixture_id")),
    )
    op.create_index(
        "ix_live_activity_fixture_id_status", "live_activity", ["fixture_id", "status"], unique=False
    )
    op.create_table(
        "match_event",
        sa.Column("id", sa.BigInteger(), sa.Identity(always=False), nullable=False),
        sa.Column("fixture_id", sa.BigInteger(), nullable=False),
        sa.Column(
            "stream", sa.Text(), nullable=False, comment="events | timeline: SportMonks' two id spaces"
        ),
        sa.Column("provider_event_id", sa.BigInteger(), nullable=False),
        sa.Column("type", sa.Text(), nullable=False),
        sa.Column("provider_type_id", sa.Integer(), nullable=True),
        sa.Column("minute", sa.SmallInteger(), nullable=True),
        sa.Column("extra_minute", sa.SmallInteger(), nullable=True),
        sa.Column("sort_order", sa.Integer(), nullable=True),
        sa.Column("side", sa.Text(), nullable=True, comment="home | away | null"),
        sa.Column(
            "body",
            postgresql.JSONB(astext_type=sa.Text()),
            nullable=False,
            comment="the normalised item as last seen",
        ),
        sa.Column("body_hash", sa.Text(), nullable=False),
        sa.Column("source", sa.Text(), nullable=False, comment="live | reconcile | postmatch | replay"),
        sa.Column("missing_count", sa.SmallInteger(), server_default="0", nullable=False),
        sa.Column("retracted_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column(
            "first_seen_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False
        ),
        sa.Column(
            "last_seen_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False
        ),
        sa.CheckConstraint("side IS NULL OR side IN ('home', 'away')", name=op.f("ck_match_event_side")),
        sa.CheckConstraint(
            "source IN ('live', 'reconcile', 'postmatch', 'replay')", name=op.f("ck_match_event_source")
        ),
        sa.CheckConstraint("stream IN ('events', 'timeline')", name=op.f("ck_match_event_stream")),
        sa.ForeignKeyConstraint(
            ["fixture_id"], ["fixture.id"], name=op.f("fk_match_event_fixture_id_fixture"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_match_event")),
        sa.UniqueConstraint(
            "fixture_id",
            "stream",
            "provider_event_id",
            name=op.f("uq_match_event_fixture_id_stream_provider_event_id"),
        ),
    )
    op.create_table(
        "scoreboard",
        sa.Column("fixture_id", sa.BigInteger(), nullable=False),
        sa.Column("version", sa.BigInteger(), nullable=False, comment="the last timeline seq folded in"),
        sa.Column("state", sa.Text(), nullable=False),
        sa.Column("home_score", sa.SmallInteger(), server_default="0", nullable=False),
        sa.Column("away_score", sa.SmallInteger(), server_default="0", nullable=False),
        sa.Column(
            "body",
            postgresql.JSONB(astext_type=sa.Text()),
            nullable=False,
            comment="period scores, clock, cards, sport-specific",
        ),
        sa.Column("updated_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.ForeignKeyConstraint(
            ["fixture_id"], ["fixture.id"], name=op.f("fk_scoreboard_fixture_id_fixture"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("fixture_id", name=op.f("pk_scoreboard")),
    )
    op.create_table(
        "timeline_item",
        sa.Column("id", sa.BigInteger(), sa.Identity(always=False), nullable=False),
        sa.Column("fixture_id", sa.BigInteger(), nullable=False),
        sa.Column("seq", sa.BigInteger(), nullable=False, comment="1, 2, 3 … per fixture: the version"),
        sa.Column(
            "kind",
            sa.Text(),
            nullable=False,
            comment="event | amendment | retraction | state | score | command",
        ),
        sa.Column("origin", sa.Text(), nullable=False, comment="provider | desk"),
        sa.Column("match_event_id", sa.BigInteger(), nullable=True),
        sa.Column("command_id", sa.Text(), nullable=True),
        sa.Column(
            "target_seq",
            sa.BigInteger(),
            nullable=True,
            comment="the entry an amendment, retraction or undo refers to",
        ),
        sa.Column("minute", sa.SmallInteger(), nullable=True),
        sa.Column("extra_minute", sa.SmallInteger(), nullable=True),
        sa.Column("body", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("trace_id", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.CheckConstraint(
            "kind IN ('event', 'amendment', 'retraction', 'state', 'score', 'command')",
            name=op.f("ck_timeline_item_kind"),
        ),
        sa.CheckConstraint("origin IN ('provider', 'desk')", name=op.f("ck_timeline_item_origin")),
        sa.CheckConstraint("seq > 0", name=op.f("ck_timeline_item_seq_positive")),
        sa.ForeignKeyConstraint(
            ["command_id"],
            ["command.command_id"],
            name=op.f("fk_timeline_item_command_id_command"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["fixture_id"],
            ["fixture.id"],
            name=op.f("fk_timeline_item_fixture_id_fixture"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["match_event_id"],
            ["match_event.id"],
            name=op.f("fk_timeline_item_match_event_id_match_event"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_timeline_item")),
        sa.UniqueConstraint("fixture_id", "seq", name=op.f("uq_timeline_item_fixture_id_seq")),
    )


def downgrade() -> None:
    op.drop_table("timeline_item")
    op.drop_table("scoreboard")
    op.drop_table("match_event")
    op.drop_index("ix_live_activity_fixture_id_status", table_name="live_activity")
    op.drop_table("live_activity")
    op.drop_index("ix_follow_fixture_id", table_name="follow")
    op.drop_table("follow")
    op.drop_table("effect_log")
    op.drop_index("ix_domain_event_xid_id", table_name="domain_event")
    op.drop_table("domain_event")
    op.drop_index("ix_command_fixture_id", table_name="command")
    op.drop_table("command")
    op.drop_table("published_document")
    op.drop_table("partner")
    op.drop_index("ix_fixture_state_starting_at", table_name="fixture")
    op.drop_table("fixture")
    op.drop_table("device")
