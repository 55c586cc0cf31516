"""The one `MetaData` every table is declared on, and the column types and columns the areas share.

Alembic's drift check and the tests read this single `metadata`, so a table declared anywhere else
would be invisible to both.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Column, DateTime, MetaData, func
from sqlalchemy.dialects.postgresql import base as postgresql_base
from sqlalchemy.types import UserDefinedType

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

metadata = MetaData(naming_convention=NAMING_CONVENTION)


class Xid8(UserDefinedType[int]):
    """Postgres' 64-bit transaction id, which SQLAlchemy has no type for."""

    cache_ok = True

    def get_col_spec(self, **_: object) -> str:
        return "xid8"


# Let reflection (Alembic's drift check) recognise the column instead of warning about it.
postgresql_base.ischema_names["xid8"] = Xid8


def created_at() -> Column[datetime]:
    """When the row was inserted, by the database clock."""
    return Column("created_at", DateTime(timezone=True), nullable=False, server_default=func.now())


def updated_at() -> Column[datetime]:
    """When the row last changed: the default stamps the insert; no trigger exists, so each update sets it."""
    return Column("updated_at", DateTime(timezone=True), nullable=False, server_default=func.now())
