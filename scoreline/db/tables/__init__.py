"""The schema, as SQLAlchemy Core tables: what the code reads and writes, one module per area.

Alembic migrations under `migrations/versions/` are the only way the database changes; a test
compares these tables with a freshly migrated database so the two never drift.

Callers import every table from here: whichever table they name, this package declares all of them
on the one shared `metadata`, which the migrations' drift check and the foreign keys between areas
need whole, and a table can change area without its callers noticing.
"""

from scoreline.db.tables.accounts import desk, operator
from scoreline.db.tables.devices import device, follow
from scoreline.db.tables.feeds import partner, published_document
from scoreline.db.tables.live_activities import la_push, live_activity, push_attempt
from scoreline.db.tables.matches import (
    command,
    desk_fixture_id,
    fixture,
    match_event,
    scoreboard,
    timeline_item,
)
from scoreline.db.tables.outbox import domain_event, feed_cursor
from scoreline.db.tables.schema import NAMING_CONVENTION, Xid8, metadata
from scoreline.db.tables.webhooks import webhook_attempt, webhook_endpoint, webhook_message

__all__ = [
    "NAMING_CONVENTION",
    "Xid8",
    "command",
    "desk",
    "desk_fixture_id",
    "device",
    "domain_event",
    "feed_cursor",
    "fixture",
    "follow",
    "la_push",
    "live_activity",
    "match_event",
    "metadata",
    "operator",
    "partner",
    "published_document",
    "push_attempt",
    "scoreboard",
    "timeline_item",
    "webhook_attempt",
    "webhook_endpoint",
    "webhook_message",
]
