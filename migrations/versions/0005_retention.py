"""Retention: the indexes its batched deletes walk, `fixture.effects_purged_at`, log entries outlive commands.

The indexes are built `CONCURRENTLY` (outside the migration's transaction): the tables they serve
are the ones that grew without bound, and a plain `CREATE INDEX` would block every ingest and push
while it read them.

`timeline_item.command_id` loses its foreign key: the command row is deleted after
`RETENTION_COMMAND_AGE`, the log entry it made is kept forever (with `ON DELETE CASCADE` deleting a
command deleted its entry; `SET NULL` would rewrite the append-only log). The column keeps the
sender's key.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-29 13:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

INDEXES: tuple[tuple[str, str, list[str]], ...] = (
    ("ix_domain_event_created_at", "domain_event", ["created_at"]),
    ("ix_push_attempt_created_at", "push_attempt", ["created_at"]),
    ("ix_command_created_at", "command", ["created_at"]),
    ("ix_effect_log_fixture_id_created_at", "effect_log", ["fixture_id", "created_at"]),
    ("ix_published_document_created_at", "published_document", ["created_at"]),
)
UNPURGED = "ix_fixture_updated_at_effects_unpurged"
COMMAND_ID_COMMENT = (
    "the desk command's key; no foreign key: the command row is deleted after its retention age"
)


def upgrade() -> None:
    op.add_column(
        "fixture",
        sa.Column(
            "effects_purged_at",
            sa.DateTime(timezone=True),
            nullable=True,
            comment="when retention deleted this match's effect_log: nothing is pushed for it again",
        ),
    )
    op.drop_constraint("fk_timeline_item_command_id_command", "timeline_item", type_="foreignkey")
    op.alter_column(
        "timeline_item",
        "command_id",
        existing_type=sa.Text(),
        existing_nullable=True,
        comment=COMMAND_ID_COMMENT,
    )
    with op.get_context().autocommit_block():
        for name, table, columns in INDEXES:
            op.create_index(name, table, columns, unique=False, postgresql_concurrently=True)
        op.create_index(
            UNPURGED,
            "fixture",
            ["updated_at"],
            unique=False,
            postgresql_where=sa.text("effects_purged_at IS NULL"),
            postgresql_concurrently=True,
        )


def downgrade() -> None:
    with op.get_context().autocommit_block():
        op.drop_index(UNPURGED, table_name="fixture", postgresql_concurrently=True)
        for name, table, _ in reversed(INDEXES):
            op.drop_index(name, table_name=table, postgresql_concurrently=True)
    # The constraint cannot come back while entries name commands retention deleted.
    op.execute(
        "UPDATE timeline_item t SET command_id = NULL WHERE command_id IS NOT NULL"
        " AND NOT EXISTS (SELECT 1 FROM command c WHERE c.command_id = t.command_id)"
    )
    op.alter_column(
        "timeline_item",
        "command_id",
        existing_type=sa.Text(),
        existing_nullable=True,
        comment=None,
        existing_comment=COMMAND_ID_COMMENT,
    )
    op.create_foreign_key(
        "fk_timeline_item_command_id_command",
        "timeline_item",
        "command",
        ["command_id"],
        ["command_id"],
        ondelete="CASCADE",
    )
    op.drop_column("fixture", "effects_purged_at")
