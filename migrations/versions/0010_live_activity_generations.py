"""Generations of a follower's Live Activity for one fixture: `live_activity.generation`.

Apple ends a Live Activity after 8 hours (apns.md §1.3 limits); an ODI or a Test day lasts longer,
and a Test stops overnight at stumps. So a follower may have several activities for one fixture in
turn: the match workflow ends generation N and push-to-starts generation N + 1 before the cap, and
ends the day's at stumps. Each one is its own row (its own update token, its own `effect_log`
targets); the unique key becomes (device, fixture, generation). Existing rows are generation 1.

Adding a column with a constant default rewrites nothing. The new unique index is built
concurrently, outside the migration's transaction (activities keep being reported meanwhile), and
then becomes the constraint that replaces the old one.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-02 10:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NEW_KEY = "uq_live_activity_device_id_fixture_id_generation"
OLD_KEY = "uq_live_activity_device_id_fixture_id"


def upgrade() -> None:
    op.add_column(
        "live_activity",
        sa.Column(
            "generation",
            sa.Integer(),
            server_default=sa.text("1"),
            nullable=False,
            comment="1 from kick-off; the next after each renewal before Apple's 8 h cap or each stumps",
        ),
    )
    op.create_check_constraint("generation", "live_activity", "generation >= 1")
    with op.get_context().autocommit_block():
        op.create_index(
            NEW_KEY,
            "live_activity",
            ["device_id", "fixture_id", "generation"],
            unique=True,
            postgresql_concurrently=True,
            if_not_exists=True,
        )
    op.execute(f"ALTER TABLE live_activity ADD CONSTRAINT {NEW_KEY} UNIQUE USING INDEX {NEW_KEY}")
    op.drop_constraint(op.f(OLD_KEY), "live_activity", type_="unique")


def downgrade() -> None:
    # One activity per (device, fixture) again: the newest generation of each is kept.
    op.execute(
        """DELETE FROM live_activity old USING live_activity newer
        WHERE newer.device_id = old.device_id AND newer.fixture_id = old.fixture_id
          AND newer.generation > old.generation"""
    )
    op.create_unique_constraint(op.f(OLD_KEY), "live_activity", ["device_id", "fixture_id"])
    op.drop_constraint(op.f(NEW_KEY), "live_activity", type_="unique")
    op.drop_constraint(op.f("ck_live_activity_generation"), "live_activity", type_="check")
    op.drop_column("live_activity", "generation")
