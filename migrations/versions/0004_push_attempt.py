"""Push attempts: every request the Live Activity sender made to APNs, for support.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-29 11:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "push_attempt",
        sa.Column("id", sa.BigInteger(), sa.Identity(always=False), nullable=False),
        sa.Column("fixture_id", sa.BigInteger(), nullable=False),
        sa.Column("event_key", sa.Text(), nullable=False),
        sa.Column("effect", sa.Text(), nullable=False, comment="la.start | la.alert | la.update | la.end"),
        sa.Column("device_id", sa.UUID(), nullable=False),
        sa.Column("live_activity_id", sa.BigInteger(), nullable=True),
        sa.Column("token_kind", sa.Text(), nullable=False, comment="push_to_start | update"),
        sa.Column(
            "attempt", sa.SmallInteger(), nullable=False, comment="1, 2, 3 … within one activity attempt"
        ),
        sa.Column("priority", sa.SmallInteger(), nullable=False),
        sa.Column("payload_bytes", sa.Integer(), nullable=False),
        sa.Column("apns_id", sa.UUID(), nullable=True, comment="null when no request reached APNs"),
        sa.Column(
            "status", sa.SmallInteger(), nullable=True, comment="APNs' HTTP status; null when no answer came"
        ),
        sa.Column("reason", sa.Text(), nullable=True, comment="APNs' reason, or the network failure"),
        sa.Column("latency_ms", sa.Integer(), nullable=False),
        sa.Column("trace_id", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.CheckConstraint(
            "token_kind IN ('push_to_start', 'update')", name=op.f("ck_push_attempt_token_kind")
        ),
        sa.ForeignKeyConstraint(
            ["device_id"], ["device.id"], name=op.f("fk_push_attempt_device_id_device"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["fixture_id"],
            ["fixture.id"],
            name=op.f("fk_push_attempt_fixture_id_fixture"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["live_activity_id"],
            ["live_activity.id"],
            name=op.f("fk_push_attempt_live_activity_id_live_activity"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_push_attempt")),
    )
    op.create_index(
        "ix_push_attempt_device_id_created_at", "push_attempt", ["device_id", "created_at"], unique=False
    )
    op.create_index(
        "ix_push_attempt_fixture_id_event_key", "push_attempt", ["fixture_id", "event_key"], unique=False
    )


def downgrade() -> None:
    op.drop_index("ix_push_attempt_fixture_id_event_key", table_name="push_attempt")
    op.drop_index("ix_push_attempt_device_id_created_at", table_name="push_attempt")
    op.drop_table("push_attempt")
