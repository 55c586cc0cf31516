"""The fans' devices and the matches each follows."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Column,
    ForeignKey,
    Index,
    PrimaryKeyConstraint,
    Table,
    Text,
    text,
)
from sqlalchemy.dialects.postgresql import UUID

from scoreline.db.tables.schema import created_at, metadata, updated_at

device = Table(
    "device",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True, server_default=text("gen_random_uuid()")),
    Column("install_id", Text, nullable=False, unique=True),
    Column("platform", Text, nullable=False),
    Column("environment", Text, nullable=False),
    Column("token_hash", Text, nullable=False, comment="sha-256 of the device's API secret"),
    Column("push_to_start_token", Text),
    Column("push_to_start_active", Boolean, nullable=False, server_default=text("true")),
    Column("app_version", Text),
    Column("locale", Text),
    created_at(),
    updated_at(),
    CheckConstraint("platform IN ('ios')", name="platform"),
    CheckConstraint("environment IN ('sandbox', 'production')", name="environment"),
)

follow = Table(
    "follow",
    metadata,
    Column("device_id", UUID(as_uuid=True), ForeignKey("device.id", ondelete="CASCADE"), nullable=False),
    Column("fixture_id", BigInteger, ForeignKey("fixture.id", ondelete="CASCADE"), nullable=False),
    created_at(),
    PrimaryKeyConstraint("device_id", "fixture_id"),
)
Index("ix_follow_fixture_id_device_id", follow.c.fixture_id, follow.c.device_id)
