"""The alert a take dropped as in doubt: `live_activity.alert_dropped_stamp`.

A late answer saying that request did not deliver gives exactly that alert back
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

COMMENT = (
    "the alert the last take dropped as in doubt, until a late answer that did not deliver gives it back"
)


def upgrade() -> None:
    op.add_column("live_activity", sa.Column("alert_dropped_stamp", sa.BigInteger(), comment=COMMENT))


def downgrade() -> None:
    op.drop_column("live_activity", "alert_dropped_stamp")
