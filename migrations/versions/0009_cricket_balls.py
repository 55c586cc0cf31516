"""Cricket's balls are provider events of their own stream: `match_event.stream` admits `balls`.

A ball is keyed by its provider id like a football event, so the same unique constraint keeps it
stored once whatever retries or replays happen; an edit in place becomes an amendment of that row.
Swapping a CHECK constraint takes a brief lock and a scan of `match_event`, no rewrite.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-01 19:40:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.drop_constraint("stream", "match_event", type_="check")
    op.create_check_constraint("stream", "match_event", "stream IN ('events', 'timeline', 'balls')")
    op.alter_column(
        "match_event",
        "stream",
        existing_type=sa.Text(),
        existing_nullable=False,
        comment="events | timeline | balls: the provider's id spaces",
        existing_comment="events | timeline: SportMonks' two id spaces",
    )


def downgrade() -> None:
    op.drop_constraint("stream", "match_event", type_="check")
    op.create_check_constraint("stream", "match_event", "stream IN ('events', 'timeline')")
    op.alter_column(
        "match_event",
        "stream",
        existing_type=sa.Text(),
        existing_nullable=False,
        comment="events | timeline: SportMonks' two id spaces",
        existing_comment="events | timeline | balls: the provider's id spaces",
    )
