"""The push whose request to a Live Activity may be on its way: `live_activity.sending_timestamp`
and `sending_at`.

The Live Activity sender of this revision lets two workers send two pushes of one fixture to one
activity side by side. A newer push's claim stops an older one that has not checked yet, but not
one that checked and whose request is still on its way (late behind a busy event loop on another
worker), so a phone could get an older routine update after the newer one. The sender's last
check before a request records here which push it let go, and a newer push's check waits while
that mark stands: an older update never lands after a newer one.

Nullable columns without a default: adding them rewrites nothing, and they are indexed nowhere,
so the updates that set them stay heap-only. Migration 0013 drops both with that sender; in its
place each activity's mailbox is leased to one drainer at a time (docs/live-activities.md).

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-06 04:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "live_activity",
        sa.Column(
            "sending_timestamp",
            sa.BigInteger(),
            nullable=True,
            comment="the aps timestamp of the push whose request may be on its way (its last look let it go)",
        ),
    )
    op.add_column(
        "live_activity",
        sa.Column(
            "sending_at",
            sa.DateTime(timezone=True),
            nullable=True,
            comment="when that look let it go: the mark holds newer pushes back for a few seconds at most",
        ),
    )


def downgrade() -> None:
    op.drop_column("live_activity", "sending_at")
    op.drop_column("live_activity", "sending_timestamp")
