"""Live Activity mailboxes: `la_push` (what a match published) and the mailbox columns of
`live_activity` (what each activity should show and still owes); the claims' columns go.

Design: docs/live-activities.md. A push is published by one set-based statement that moves every
target's mailbox forward; drainers on every worker take due mailboxes and send each the newest
state. `followers_waiting` goes: a follow after kick-off fills the new follower's mailbox itself.
`effect_log` goes too (it gated the old fan-out's pushes, its only writer): retention purges a
long-over match's `la_push` rows instead, marking `fixture.pushes_purged_at`.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-07 01:40:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OLD_UNPURGED = "ix_fixture_updated_at_effects_unpurged"
NEW_UNPURGED = "ix_fixture_updated_at_pushes_unpurged"
_GONE = (
    ("last_timestamp", sa.BigInteger()),
    ("last_content_state", postgresql.JSONB()),
    ("last_routine_at", sa.DateTime(timezone=True)),
    ("sending_timestamp", sa.BigInteger()),
    ("sending_at", sa.DateTime(timezone=True)),
)
_MAILBOX = (
    ("want_stamp", sa.BigInteger(), None, "la_push.stamp of the newest state this activity should show"),
    ("want_end", sa.Boolean(), sa.text("false"), "that state is an end: only a newer end replaces it"),
    ("alert_stamp", sa.BigInteger(), None, "la_push.stamp whose alert is still owed (at most one)"),
    (
        "alert_marked_at",
        sa.DateTime(timezone=True),
        None,
        "an alert or start request may be on its way since",
    ),
    (
        "alert_marked_stamp",
        sa.BigInteger(),
        None,
        "what that request carried: its alert's (or start's) stamp",
    ),
    ("sent_stamp", sa.BigInteger(), None, "the newest stamp APNs accepted for the current token"),
    ("next_try_at", sa.DateTime(timezone=True), None, "when a drainer should try; null: nothing to do now"),
    ("tries", sa.Integer(), sa.text("0"), "answers in a row that did not deliver (backoff)"),
    ("lease_owner", sa.Text(), None, "the drainer that took the row; it alone writes the outcome"),
    ("lease_until", sa.DateTime(timezone=True), None, "until then no other drainer takes the row"),
    ("routine_sent_at", sa.DateTime(timezone=True), None, "when a routine update last went out"),
)


def upgrade() -> None:
    op.create_table(
        "la_push",
        sa.Column("fixture_id", sa.BigInteger(), nullable=False),
        sa.Column("stamp", sa.BigInteger(), nullable=False, comment="aps.timestamp; grows with each publish"),
        sa.Column("event_key", sa.Text(), nullable=False),
        sa.Column("event", sa.Text(), nullable=False),
        sa.Column("generation", sa.Integer(), nullable=False),
        sa.Column("priority", sa.SmallInteger(), nullable=False),
        sa.Column("routine", sa.Boolean(), nullable=False),
        sa.Column("content_state", postgresql.JSONB(), nullable=False),
        sa.Column("alert", postgresql.JSONB(), nullable=True, comment="a key moment's (or the end's) alert"),
        sa.Column("attributes", postgresql.JSONB(), nullable=False, comment="a start's static attributes"),
        sa.Column("stale_date", sa.BigInteger(), nullable=False),
        sa.Column("dismissal_date", sa.BigInteger(), nullable=False),
        sa.Column("trace_id", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.CheckConstraint("event IN ('start', 'update', 'end')", name=op.f("ck_la_push_event")),
        sa.ForeignKeyConstraint(
            ["fixture_id"], ["fixture.id"], name=op.f("fk_la_push_fixture_id_fixture"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("fixture_id", "stamp", name=op.f("pk_la_push")),
        sa.UniqueConstraint(
            "fixture_id", "event_key", "event", name=op.f("uq_la_push_fixture_id_event_key_event")
        ),
        comment="every Live Activity push a match published, newest stamp last",
    )
    for name, _ in _GONE:
        op.drop_column("live_activity", name)
    for name, type_, default, comment in _MAILBOX:
        op.add_column(
            "live_activity",
            sa.Column(name, type_, nullable=default is None, server_default=default, comment=comment),
        )
    op.create_index(
        "ix_live_activity_next_try_at",
        "live_activity",
        ["next_try_at"],
        postgresql_where=sa.text("next_try_at IS NOT NULL"),
    )
    op.create_index("ix_live_activity_fixture_id_generation", "live_activity", ["fixture_id", "generation"])
    op.create_index(
        "ix_live_activity_push_token",
        "live_activity",
        ["push_token"],
        postgresql_where=sa.text("push_token_active"),
    )
    op.drop_table("followers_waiting")
    op.drop_table("effect_log")
    op.alter_column("fixture", "effects_purged_at", new_column_name="pushes_purged_at")
    op.alter_column(
        "fixture",
        "pushes_purged_at",
        comment="when retention deleted this match's la_push rows: nothing is pushed for it again",
    )
    op.execute(f"ALTER INDEX {OLD_UNPURGED} RENAME TO {NEW_UNPURGED}")


def downgrade() -> None:
    op.execute(f"ALTER INDEX {NEW_UNPURGED} RENAME TO {OLD_UNPURGED}")
    op.alter_column("fixture", "pushes_purged_at", new_column_name="effects_purged_at")
    op.create_table(
        "effect_log",
        sa.Column("id", sa.BigInteger(), sa.Identity(always=False), nullable=False),
        sa.Column("fixture_id", sa.BigInteger(), nullable=False),
        sa.Column("event_key", sa.Text(), nullable=False),
        sa.Column("effect", sa.Text(), nullable=False),
        sa.Column("target", sa.Text(), nullable=False),
        sa.Column("outcome", postgresql.JSONB(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.ForeignKeyConstraint(
            ["fixture_id"], ["fixture.id"], name="fk_effect_log_fixture_id_fixture", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_effect_log"),
        sa.UniqueConstraint(
            "fixture_id",
            "event_key",
            "effect",
            "target",
            name="uq_effect_log_fixture_id_event_key_effect_target",
        ),
    )
    op.create_index("ix_effect_log_fixture_id_created_at", "effect_log", ["fixture_id", "created_at"])
    op.create_table(
        "followers_waiting",
        sa.Column("fixture_id", sa.BigInteger(), nullable=False),
        sa.Column("since", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.ForeignKeyConstraint(
            ["fixture_id"], ["fixture.id"], name="fk_followers_waiting_fixture_id_fixture", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("fixture_id", name="pk_followers_waiting"),
    )
    op.drop_index("ix_live_activity_push_token", table_name="live_activity")
    op.drop_index("ix_live_activity_fixture_id_generation", table_name="live_activity")
    op.drop_index("ix_live_activity_next_try_at", table_name="live_activity")
    for name, _, _, _ in _MAILBOX:
        op.drop_column("live_activity", name)
    for name, type_ in _GONE:
        op.add_column("live_activity", sa.Column(name, type_, nullable=True))
    op.drop_table("la_push")
