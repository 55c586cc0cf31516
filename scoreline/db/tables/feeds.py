"""What partners read: the published documents and the partners whose keys read them."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Column,
    Identity,
    Index,
    PrimaryKeyConstraint,
    SmallInteger,
    Table,
    Text,
    text,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB

from scoreline.db.tables.schema import created_at, metadata

published_document = Table(
    "published_document",
    metadata,
    Column("doc_key", Text, nullable=False, comment="e.g. match/81000001, fixtures/2026-03-14"),
    Column("version", BigInteger, nullable=False),
    Column("content_hash", Text, nullable=False, comment="of the body without timestamps"),
    Column("etag", Text, nullable=False),
    Column("body", JSONB, nullable=False),
    Column("competition_id", BigInteger),
    created_at(),
    Column(
        "trace_ids",
        ARRAY(Text),
        nullable=False,
        server_default="{}",
        comment="the traces of the changes gathered into the rebuild that saved this version",
    ),
    PrimaryKeyConstraint("doc_key", "version"),
)
Index("ix_published_document_created_at", published_document.c.created_at)

partner = Table(
    "partner",
    metadata,
    Column("id", BigInteger, Identity(), primary_key=True),
    Column("name", Text, nullable=False, unique=True),
    Column("api_key_hash", Text, nullable=False, unique=True),
    Column("competitions", ARRAY(BigInteger), nullable=False, server_default="{}"),
    Column("active", Boolean, nullable=False, server_default=text("true")),
    Column(
        "delay_seconds",
        SmallInteger,
        nullable=False,
        server_default="0",
        comment="broadcast delay of what the partner's key reads: each change this long after its commit",
    ),
    created_at(),
    CheckConstraint("delay_seconds BETWEEN 0 AND 300", name="delay_seconds"),
)
