"""A match and its log: the fixture, the provider's events, the log entries, the scoreboard
folded from them, and the desk commands that wrote some of them.

`match_event (fixture_id, stream, provider_event_id)`, `timeline_item (fixture_id, seq)` and
`command.command_id` are unique, so a retried or replayed write of a match's log adds nothing.
"""

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
    Sequence,
    SmallInteger,
    Table,
    Text,
    UniqueConstraint,
    func,
)
from sqlalchemy.dialects.postgresql import JSONB

from scoreline.db.tables.schema import created_at, metadata, updated_at

fixture = Table(
    "fixture",
    metadata,
    Column("id", BigInteger, primary_key=True, autoincrement=False, comment="the provider's fixture id"),
    Column("sport", Text, nullable=False, server_default="football"),
    Column("league_id", BigInteger),
    Column("season_id", BigInteger),
    Column("name", Text, nullable=False),
    Column("starting_at", DateTime(timezone=True)),
    Column("venue_id", BigInteger),
    Column("home_team", JSONB, comment="{id, name, short_code, image}"),
    Column("away_team", JSONB),
    Column("competition", JSONB, comment="{id, name}"),
    Column("state", Text, nullable=False, server_default="scheduled", comment="normalised state"),
    Column("provider_state_id", Integer),
    Column("source", Text, nullable=False, server_default="provider", comment="provider | desk"),
    created_at(),
    updated_at(),
    Column(
        "scoring_mode",
        Text,
        nullable=False,
        server_default="provider",
        comment="who owns the score now: provider | desk (switched by an operator command)",
    ),
    Column(
        "squads",
        JSONB,
        comment="{home|away: [{id, name, shirt_number, starting}]} for desk-scored fixtures",
    ),
    Column(
        "pushes_purged_at",
        DateTime(timezone=True),
        comment="when retention deleted this match's la_push rows: nothing is pushed for it again",
    ),
    CheckConstraint("source IN ('provider', 'desk')", name="source"),
    CheckConstraint("scoring_mode IN ('provider', 'desk')", name="scoring_mode"),
)
Index("ix_fixture_state_starting_at", fixture.c.state, fixture.c.starting_at)
Index(
    "ix_fixture_updated_at_pushes_unpurged",
    fixture.c.updated_at,
    postgresql_where=fixture.c.pushes_purged_at.is_(None),
)
"""Over matches whose published pushes retention has yet to delete (`activities.retention`)."""

match_event = Table(
    "match_event",
    metadata,
    Column("id", BigInteger, Identity(), primary_key=True),
    Column("fixture_id", BigInteger, ForeignKey("fixture.id", ondelete="CASCADE"), nullable=False),
    Column("stream", Text, nullable=False, comment="events | timeline | balls: the provider's id spaces"),
    Column("provider_event_id", BigInteger, nullable=False),
    Column("type", Text, nullable=False),
    Column("provider_type_id", Integer),
    Column("minute", SmallInteger),
    Column("extra_minute", SmallInteger),
    Column("sort_order", Integer),
    Column("side", Text, comment="home | away | null"),
    Column("body", JSONB, nullable=False, comment="the normalised item as last seen"),
    Column("body_hash", Text, nullable=False),
    Column("source", Text, nullable=False, comment="live | reconcile | postmatch | replay"),
    Column("missing_count", SmallInteger, nullable=False, server_default="0"),
    Column("retracted_at", DateTime(timezone=True)),
    Column("first_seen_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    Column("last_seen_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    UniqueConstraint("fixture_id", "stream", "provider_event_id"),
    CheckConstraint("stream IN ('events', 'timeline', 'balls')", name="stream"),
    CheckConstraint("side IS NULL OR side IN ('home', 'away')", name="side"),
    CheckConstraint("source IN ('live', 'reconcile', 'postmatch', 'replay')", name="source"),
)

command = Table(
    "command",
    metadata,
    Column("command_id", Text, primary_key=True, comment="the sender's key, resent on every retry"),
    Column("fixture_id", BigInteger, ForeignKey("fixture.id", ondelete="CASCADE"), nullable=False),
    Column("sender", Text, nullable=False, comment="the desk or operator that sent it"),
    Column("code", Text, nullable=False),
    Column("input", JSONB, nullable=False),
    Column("payload_hash", Text, nullable=False),
    Column("saw", BigInteger),
    Column("outcome", Text, nullable=False),
    Column("answer", JSONB, nullable=False, comment="the exact answer, returned again to a duplicate"),
    Column("seq", BigInteger),
    Column("sent_at", DateTime(timezone=True)),
    Column("trace_id", Text),
    created_at(),
    CheckConstraint("outcome IN ('accepted', 'refused', 'conflict')", name="outcome"),
)
Index("ix_command_fixture_id", command.c.fixture_id)
Index("ix_command_created_at", command.c.created_at)

timeline_item = Table(
    "timeline_item",
    metadata,
    Column("id", BigInteger, Identity(), primary_key=True),
    Column("fixture_id", BigInteger, ForeignKey("fixture.id", ondelete="CASCADE"), nullable=False),
    Column("seq", BigInteger, nullable=False, comment="1, 2, 3 … per fixture: the version"),
    Column(
        "kind",
        Text,
        nullable=False,
        comment="event | amendment | retraction | state | score | command",
    ),
    Column("origin", Text, nullable=False, comment="provider | desk"),
    Column("match_event_id", BigInteger, ForeignKey("match_event.id", ondelete="CASCADE")),
    Column(
        "command_id",
        Text,
        comment="the desk command's key; no foreign key: the command row is deleted after its retention age",
    ),
    Column("target_seq", BigInteger, comment="the entry an amendment, retraction or undo refers to"),
    Column("minute", SmallInteger),
    Column("extra_minute", SmallInteger),
    Column("body", JSONB, nullable=False),
    Column("trace_id", Text),
    created_at(),
    UniqueConstraint("fixture_id", "seq"),
    CheckConstraint("seq > 0", name="seq_positive"),
    CheckConstraint("origin IN ('provider', 'desk')", name="origin"),
    CheckConstraint("kind IN ('event', 'amendment', 'retraction', 'state', 'score', 'command')", name="kind"),
)

scoreboard = Table(
    "scoreboard",
    metadata,
    Column("fixture_id", BigInteger, ForeignKey("fixture.id", ondelete="CASCADE"), primary_key=True),
    Column("version", BigInteger, nullable=False, comment="the last timeline seq folded in"),
    Column("state", Text, nullable=False),
    Column("home_score", SmallInteger, nullable=False, server_default="0"),
    Column("away_score", SmallInteger, nullable=False, server_default="0"),
    Column("body", JSONB, nullable=False, comment="period scores, clock, cards, sport-specific"),
    updated_at(),
    Column(
        "rule_state",
        JSONB,
        comment="the sport rules' state after the last desk command: a new workflow run resumes from it",
    ),
)

desk_fixture_id = Sequence("desk_fixture_id", start=1_000_000_000_000, metadata=metadata)
"""Ids of fixtures no provider knows: far above any provider id, and exact as a JavaScript number."""
