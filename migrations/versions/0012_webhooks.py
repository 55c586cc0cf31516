"""Partner webhooks and broadcast delay: `webhook_endpoint`, `webhook_message` (what each endpoint
is owed, one row per log entry), `webhook_attempt` (the delivery log) and `partner.delay_seconds`.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-06 22:33:50.914171
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "webhook_endpoint",
        sa.Column("id", sa.BigInteger(), sa.Identity(always=False), nullable=False),
        sa.Column("partner_id", sa.BigInteger(), nullable=False),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column(
            "secret",
            sa.Text(),
            nullable=False,
            comment="whsec_<base64>: signs every message (Standard Webhooks)",
        ),
        sa.Column(
            "previous_secret",
            sa.Text(),
            nullable=True,
            comment="the secret before the last rotation, signing beside it a while",
        ),
        sa.Column("previous_secret_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column(
            "delay_seconds",
            sa.SmallInteger(),
            server_default="0",
            nullable=False,
            comment="broadcast delay: each change is sent this long after its commit, never earlier",
        ),
        sa.Column(
            "paused_at",
            sa.DateTime(timezone=True),
            nullable=True,
            comment="nothing is sent while set (a day of failures, or an operator); nothing is dropped",
        ),
        sa.Column("paused_reason", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.CheckConstraint("delay_seconds BETWEEN 0 AND 300", name=op.f("ck_webhook_endpoint_delay_seconds")),
        sa.ForeignKeyConstraint(
            ["partner_id"],
            ["partner.id"],
            name=op.f("fk_webhook_endpoint_partner_id_partner"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_webhook_endpoint")),
        sa.UniqueConstraint("partner_id", "url", name=op.f("uq_webhook_endpoint_partner_id_url")),
    )
    op.create_table(
        "webhook_attempt",
        sa.Column("id", sa.BigInteger(), sa.Identity(always=False), nullable=False),
        sa.Column("endpoint_id", sa.BigInteger(), nullable=False),
        sa.Column("fixture_id", sa.BigInteger(), nullable=False),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.Column("message_id", sa.Text(), nullable=False, comment="the webhook-id header"),
        sa.Column(
            "status",
            sa.SmallInteger(),
            nullable=True,
            comment="the receiver's HTTP status; null when no answer came",
        ),
        sa.Column("latency_ms", sa.Integer(), nullable=False),
        sa.Column(
            "answer_head",
            sa.Text(),
            server_default="",
            nullable=False,
            comment="the first bytes of the answer",
        ),
        sa.Column("error", sa.Text(), nullable=True, comment="the network failure, when no answer came"),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.ForeignKeyConstraint(
            ["endpoint_id"],
            ["webhook_endpoint.id"],
            name=op.f("fk_webhook_attempt_endpoint_id_webhook_endpoint"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_webhook_attempt")),
    )
    op.create_index(
        "ix_webhook_attempt_endpoint_id_id", "webhook_attempt", ["endpoint_id", "id"], unique=False
    )
    op.create_table(
        "webhook_message",
        sa.Column("endpoint_id", sa.BigInteger(), nullable=False),
        sa.Column("fixture_id", sa.BigInteger(), nullable=False),
        sa.Column("seq", sa.BigInteger(), nullable=False, comment="the log entry this change is"),
        sa.Column(
            "body",
            postgresql.JSONB(astext_type=sa.Text()),
            nullable=False,
            comment="what is POSTed, the same on every attempt",
        ),
        sa.Column(
            "committed_at",
            sa.DateTime(timezone=True),
            nullable=False,
            comment="when the change committed: with the endpoint's delay, the first moment it may be sent",
        ),
        sa.Column("attempts", sa.Integer(), server_default="0", nullable=False),
        sa.Column("next_attempt_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column(
            "leased_until",
            sa.DateTime(timezone=True),
            nullable=True,
            comment="a sender holds this message (and its match) until then; no claim takes the match",
        ),
        sa.Column(
            "failing_since",
            sa.DateTime(timezone=True),
            nullable=True,
            comment="its first attempt without a 2xx: a day of them pauses the endpoint",
        ),
        sa.Column("delivered_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["endpoint_id"],
            ["webhook_endpoint.id"],
            name=op.f("fk_webhook_message_endpoint_id_webhook_endpoint"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["fixture_id"],
            ["fixture.id"],
            name=op.f("fk_webhook_message_fixture_id_fixture"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("endpoint_id", "fixture_id", "seq", name=op.f("pk_webhook_message")),
    )
    op.create_index(
        "ix_webhook_message_owed",
        "webhook_message",
        ["endpoint_id", "fixture_id", "seq"],
        unique=False,
        postgresql_where=sa.text("delivered_at IS NULL"),
    )
    op.add_column(
        "partner",
        sa.Column(
            "delay_seconds",
            sa.SmallInteger(),
            server_default="0",
            nullable=False,
            comment="broadcast delay of what the partner's key reads: each change this long after its commit",
        ),
    )
    op.create_check_constraint(op.f("ck_partner_delay_seconds"), "partner", "delay_seconds BETWEEN 0 AND 300")


def downgrade() -> None:
    op.drop_constraint(op.f("ck_partner_delay_seconds"), "partner", type_="check")
    op.drop_column("partner", "delay_seconds")
    op.drop_index(
        "ix_webhook_message_owed",
        table_name="webhook_message",
        postgresql_where=sa.text("delivered_at IS NULL"),
    )
    op.drop_table("webhook_message")
    op.drop_index("ix_webhook_attempt_endpoint_id_id", table_name="webhook_attempt")
    op.drop_table("webhook_attempt")
    op.drop_table("webhook_endpoint")
