"""The people behind bearer tokens: desks, which score the fixtures they are given, and operators."""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, DateTime, Identity, Table, Text
from sqlalchemy.dialects.postgresql import ARRAY

from scoreline.db.tables.schema import created_at, metadata

desk = Table(
    "desk",
    metadata,
    Column("id", BigInteger, Identity(), primary_key=True),
    Column("name", Text, nullable=False, unique=True),
    Column("token_hash", Text, nullable=False, unique=True, comment="sha-256 of the desk's bearer token"),
    Column("fixtures", ARRAY(BigInteger), nullable=False, comment="the fixtures this desk may score"),
    Column("revoked_at", DateTime(timezone=True)),
    created_at(),
)

operator = Table(
    "operator",
    metadata,
    Column("id", BigInteger, Identity(), primary_key=True),
    Column("name", Text, nullable=False, unique=True),
    Column("token_hash", Text, nullable=False, unique=True, comment="sha-256 of the operator's bearer token"),
    Column("revoked_at", DateTime(timezone=True)),
    created_at(),
)
