"""The alert a take dropped as in doubt, and the mark of the request that carried it:
`live_activity.alert_dropped_stamp` and `alert_dropped_mark`.

A late answer of that very request saying it did not deliver gives the alert back
(docs/live-activities.md, concept 6).

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-07 19:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

STAMP = "the alert the last take dropped as in doubt, until a late answer that did not deliver gives it back"
MARK = "the alert_marked_at of the request whose outcome was in doubt when its alert was dropped"


def upgrade() -> None:
    op.add_column("live_activity", sa.Column("alert_dropped_stamp", sa.BigInteger(), comment=STAMP))
    op.add_column("live_activity", sa.Column("alert_dropped_mark", sa.DateTime(timezone=True), comment=MARK))


def downgrade() -> None:
    op.drop_column("live_activity", "alert_dropped_mark")
    op.drop_column("live_activity", "alert_dropped_stamp")
