"""Followers waiting for their Live Activity: one row per match, so a follow signals its run once.

A follow after kick-off must start that follower's Live Activity, which the match workflow of this
revision does by walking the followers that have none yet. A signal per follow would make 10,000
follows 10,000 signals (and as many walks), so the follow's transaction marks the match in
`followers_waiting` and signals only when it set the mark (or the mark is old enough that the
signal may have been lost); the walk clears it when it begins, so a follow during a walk marks it
again and gets a walk of its own. Migration 0013 drops the table: from then on a follow after
kick-off fills its own mailbox.

The follower walk reads `follow` by `(fixture_id, device_id)`: the index that serves it replaces
the one on `fixture_id` alone (both built and dropped concurrently).

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01 11:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "followers_waiting",
        sa.Column(
            "fixture_id",
            sa.BigInteger(),
            sa.ForeignKey("fixture.id", ondelete="CASCADE", name="fk_followers_waiting_fixture_id_fixture"),
            nullable=False,
        ),
        sa.Column("since", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
        sa.PrimaryKeyConstraint("fixture_id", name="pk_followers_waiting"),
        comment="matches with followers whose Live Activity is not started yet; the walk clears it",
    )
    # Concurrently, outside the migration's transaction: follows keep working while it builds.
    with op.get_context().autocommit_block():
        op.create_index(
            "ix_follow_fixture_id_device_id",
            "follow",
            ["fixture_id", "device_id"],
            postgresql_concurrently=True,
            if_not_exists=True,
        )
        op.drop_index(
            "ix_follow_fixture_id", table_name="follow", postgresql_concurrently=True, if_exists=True
        )


def downgrade() -> None:
    with op.get_context().autocommit_block():
        op.create_index(
            "ix_follow_fixture_id", "follow", ["fixture_id"], postgresql_concurrently=True, if_not_exists=True
        )
        op.drop_index(
            "ix_follow_fixture_id_device_id",
            table_name="follow",
            postgresql_concurrently=True,
            if_exists=True,
        )
    op.drop_table("followers_waiting")
