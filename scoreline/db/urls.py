"""One DATABASE_URL, spelled the way each driver wants it.

Operators write the plain libpq form (`postgresql://user@host:5432/db`); SQLAlchemy's async engine
needs the `+asyncpg` driver suffix and asyncpg itself refuses it.
"""

from __future__ import annotations

from sqlalchemy.engine import URL, make_url

_PLAIN_SCHEMES = ("postgresql", "postgres")


def sqlalchemy_url(database_url: str) -> URL:
    """`postgresql+asyncpg://...` for SQLAlchemy's async engine."""
    url = make_url(database_url)
    if url.drivername in _PLAIN_SCHEMES or url.drivername.startswith("postgresql+"):
        return url.set(drivername="postgresql+asyncpg")
    raise ValueError(f"DATABASE_URL must be a postgresql:// URL, got {url.drivername}://")


def asyncpg_dsn(database_url: str) -> str:
    """`postgresql://...` for asyncpg (LISTEN connections, raw COPY, health checks)."""
    url = sqlalchemy_url(database_url).set(drivername="postgresql")
    return url.render_as_string(hide_password=False)


def with_database(database_url: str, database: str) -> str:
    """The same server, another database (test isolation, `CREATE DATABASE` from `postgres`)."""
    url = make_url(database_url).set(database=database)
    return url.render_as_string(hide_password=False)
