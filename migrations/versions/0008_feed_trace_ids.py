"""Feed document versions record the traces of the changes they show: `published_document.trace_ids`.

Every other row of a change (command, log entry, outbox row, push attempt) carries its trace id;
a feed version is built from several outbox rows at once, so it keeps the list of their trace ids,
and `scoreline trace` finds the builds that showed a change. Versions saved before this migration
list none (`'{}'`). A constant default makes adding the column a catalogue change in Postgres 11+:
no table rewrite, only a brief lock.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-02 10:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "published_document",
        sa.Column(
            "trace_ids",
            postgresql.ARRAY(sa.Text()),
            server_default="{}",
            nullable=False,
            comment="the traces of the changes gathered into the rebuild that saved this version",
        ),
    )


def downgrade() -> None:
    op.drop_column("published_document", "trace_ids")
