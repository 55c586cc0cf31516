"""Run the Alembic migrations programmatically (`scoreline migrate`, the dev stack, the test harness)."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config

import migrations

MIGRATIONS_DIR = Path(migrations.__file__).parent


def alembic_config(database_url: str) -> Config:
    """An Alembic config that needs no alembic.ini, so an installed package can migrate."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    # ConfigParser interpolation would read a '%' in a password as a reference.
    config.set_main_option("sqlalchemy.url", database_url.replace("%", "%%"))
    return config


def upgrade(database_url: str, revision: str = "head") -> None:
    """Bring the schema up to `revision`. Blocking: call it from a thread inside an event loop."""
    command.upgrade(alembic_config(database_url), revision)


def downgrade(database_url: str, revision: str) -> None:
    """Take the schema down to `revision` (`base` empties it)."""
    command.downgrade(alembic_config(database_url), revision)


def current_head() -> str:
    """The newest revision the code knows."""
    from alembic.script import ScriptDirectory

    head = ScriptDirectory.from_config(alembic_config("postgresql://unused/unused")).get_current_head()
    if head is None:
        raise RuntimeError("no migrations found")
    return head
