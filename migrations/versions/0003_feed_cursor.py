"""Feed builder cursor: where the durable outbox consumer of partner feeds stands.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-29 10:45:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.types import UserDefinedType

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


class _Xid8(UserDefinedType[int]):
    """Frozen copy of the xid8 column type, so this migration never changes with the app code."""

    cache_ok = True

    def get_col_spec(self, **_: object) -> str:
        return "xid8"


def upgrade() -> None:
    op.create_table(
        "feed_cursor",
        sa.Column("consumer", sa.Text(), nullable=False, comment="a durable outbox consumer, e.g. feeds"),
        sa.Column(
            "last_xid",
            _Xid8(),
            nullable=False,
            comment="with last_event_id: the last domain_event handled",
        ),
        sa.Column("last_event_id", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.PrimaryKeyConstraint("consumer", name=op.f("pk_feed_cursor")),
    )


def downgrade() -> None:
    op.drop_table("feed_cursor")
