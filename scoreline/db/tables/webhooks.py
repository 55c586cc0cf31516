"""What partners are sent: their webhook endpoints, the messages each is owed, and every attempt."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    Column,
    DateTime,
    ForeignKey,
    Identity,
    Index,
    Integer,
    SmallInteger,
    Table,
    Text,
    UniqueConstraint,
)
from sqlalchemy.dialects.postgresql import JSONB

from scoreline.db.tables.schema import created_at, metadata

webhook_endpoint = Table(
    "webhook_endpoint",
    metadata,
    Column("id", BigInteger, Identity(), primary_key=True),
    Column("partner_id", BigInteger, ForeignKey("partner.id", ondelete="CASCADE"), nullable=False),
    Column("url", Text, nullable=False),
    Column("secret", Text, nullable=False, comment="whsec_<base64>: signs every message (Standard Webhooks)"),
    Column("previous_secret", Text, comment="the secret before the last rotation, signing beside it a while"),
    Column("previous_secret_until", DateTime(timezone=True)),
    Column(
        "delay_seconds",
        SmallInteger,
        nullable=False,
        server_default="0",
        comment="broadcast delay: each change is sent this long after its commit, never earlier",
    ),
    Column(
        "paused_at",
        DateTime(timezone=True),
        comment="nothing is sent while set (a day of failures, or an operator); nothing is dropped",
    ),
    Column("paused_reason", Text),
    created_at(),
    UniqueConstraint("partner_id", "url"),
    CheckConstraint("delay_seconds BETWEEN 0 AND 300", name="delay_seconds"),
)
"""A partner's HTTPS receiver of every change of the matches in its competitions."""

webhook_message = Table(
    "webhook_message",
    metadata,
    Column(
        "endpoint_id", BigInteger, ForeignKey("webhook_endpoint.id", ondelete="CASCADE"), primary_key=True
    ),
    Column("fixture_id", BigInteger, ForeignKey("fixture.id", ondelete="CASCADE"), primary_key=True),
    Column("seq", BigInteger, primary_key=True, comment="the log entry this change is"),
    Column("body", JSONB, nullable=False, comment="what is POSTed, the same on every attempt"),
    Column(
        "committed_at",
        DateTime(timezone=True),
        nullable=False,
        comment="when the change committed: with the endpoint's delay, the first moment it may be sent",
    ),
    Column("attempts", Integer, nullable=False, server_default="0"),
    Column("next_attempt_at", DateTime(timezone=True), nullable=False),
    Column(
        "leased_until",
        DateTime(timezone=True),
        comment="a sender holds this message (and its match) until then; no claim takes the match",
    ),
    Column(
        "failing_since",
        DateTime(timezone=True),
        comment="its first attempt without a 2xx: a day of them pauses the endpoint",
    ),
    Column("delivered_at", DateTime(timezone=True)),
)
"""What each endpoint is owed, one row per log entry: sent strictly in `seq` order per
(endpoint, fixture), each after the one before it was answered 2xx."""
Index(
    "ix_webhook_message_owed",
    webhook_message.c.endpoint_id,
    webhook_message.c.fixture_id,
    webhook_message.c.seq,
    postgresql_where=webhook_message.c.delivered_at.is_(None),
)

webhook_attempt = Table(
    "webhook_attempt",
    metadata,
    Column("id", BigInteger, Identity(), primary_key=True),
    Column("endpoint_id", BigInteger, ForeignKey("webhook_endpoint.id", ondelete="CASCADE"), nullable=False),
    Column("fixture_id", BigInteger, nullable=False),
    Column("seq", BigInteger, nullable=False),
    Column("message_id", Text, nullable=False, comment="the webhook-id header"),
    Column("status", SmallInteger, comment="the receiver's HTTP status; null when no answer came"),
    Column("latency_ms", Integer, nullable=False),
    Column("answer_head", Text, nullable=False, server_default="", comment="the first bytes of the answer"),
    Column("error", Text, comment="the network failure, when no answer came"),
    created_at(),
)
"""The delivery log a partner reads: every attempt, kept 30 days."""
Index("ix_webhook_attempt_endpoint_id_id", webhook_attempt.c.endpoint_id, webhook_attempt.c.id)
