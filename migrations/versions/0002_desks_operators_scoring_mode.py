"""Desks, operators, and desk-scored fixtures: scoring mode, squads, ids no provider uses.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29 10:40:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

DESK_FIXTURE_IDS_START = 1_000_000_000_000
"""Far above any provider fixture id, and still exact as a JavaScript number."""


def upgrade() -> None:
    op.add_column(
        "fixture",
        sa.Column(
            "scoring_mode",
            sa.Text(),
            server_default="provider",
            nullable=False,
            comment="who owns the score now: provider | desk (switched by an operator command)",
        ),
    )
    op.add_column(
        "fixture",
        sa.Column(
            "squads",
            postgresql.JSONB(astext_type=sa.Text()),
            nullable=True,
            comment="{home|away: [{id, name, shirt_number, starting}]} for desk-scored fixtures",
        ),
    )
    op.create_check_constraint("scoring_mode", "fixture", "scoring_mode IN ('provider', 'desk')")
    op.add_column(
        "scoreboard",
        sa.Column(
            "rule_state",
            postgresql.JSONB(astext_type=sa.Text()),
            nullable=True,
            comment="the sport rules' state after the last desk command: a new workflow run resumes from it",
        ),
    )
    op.execute(sa.schema.CreateSequence(sa.Sequence("desk_fixture_id", start=DESK_FIXTURE_IDS_START)))
    op.create_table(
        "desk",
        sa.Column("id", sa.BigInteger(), sa.Identity(always=False), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("token_hash", sa.Text(), nullable=False, comment="sha-256 of the desk's bearer token"),
        sa.Column(
            "fixtures",
            postgresql.ARRAY(sa.BigInteger()),
            nullable=False,
            comment="the fixtures this desk may score",
        ),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_desk")),
        sa.UniqueConstraint("name", name=op.f("uq_desk_name")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_desk_token_hash")),
    )
    op.create_table(
        "operator",
        sa.Column("id", sa.BigInteger(), sa.Identity(always=False), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("token_hash", sa.Text(), nullable=False, comment="sha-256 of the operator's bearer token"),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_operator")),
        sa.UniqueConstraint("name", name=op.f("uq_operator_name")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_operator_token_hash")),
    )


def downgrade() -> None:
    op.drop_table("operator")
    op.drop_table("desk")
    op.execute(sa.schema.DropSequence(sa.Sequence("desk_fixture_id")))
    op.drop_column("scoreboard", "rule_state")
    op.drop_constraint(op.f("ck_fixture_scoring_mode"), "fixture", type_="check")
    op.drop_column("fixture", "squads")
    op.drop_column("fixture", "scoring_mode")
