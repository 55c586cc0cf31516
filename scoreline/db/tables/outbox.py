"""The outbox: one `domain_event` row per commit to a match's log, and where each durable consumer
of it stands; both are ordered by transaction id so a late commit is never skipped.
"""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, ForeignKey, Identity, Index, Table, Text, text
from sqlalchemy.dialects.postgresql import JSONB

from scoreline.db.tables.schema import Xid8, created_at, metadata, updated_at

domain_event = Table(
    "domain_event",
    metadata,
    Column("id", BigInteger, Identity(), primary_key=True),
    Column(
        "xid",
        Xid8(),
        nullable=False,
        server_default=text("pg_current_xact_id()"),
        comment="xid8: readers stop below pg_snapshot_xmin so a late commit is never skipped",
    ),
    Column("fixture_id", BigInteger, ForeignKey("fixture.id", ondelete="CASCADE"), nullable=False),
    Column("seq", BigInteger),
    Column("kind", Text, nullable=False),
    Column("payload", JSONB, nullable=False),
    Column("trace_id", Text),
    created_at(),
)

Index("ix_domain_event_xid_id", domain_event.c.xid, domain_event.c.id)
Index("ix_domain_event_created_at", domain_event.c.created_at)

feed_cursor = Table(
    "feed_cursor",
    metadata,
    Column("consumer", Text, primary_key=True, comment="a durable outbox consumer, e.g. feeds"),
    Column("last_xid", Xid8(), nullable=False, comment="with last_event_id: the last domain_event handled"),
    Column("last_event_id", BigInteger, nullable=False),
    updated_at(),
)
"""Where each durable consumer of `domain_event` stands, in the reader's `(xid, id)` order."""
