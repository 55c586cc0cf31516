"""Desks and operators in Postgres: create (token shown once), revoke, and find by token.

Names are unique and never reused, also after a revocation, so `command.sender` labels and logs
keep meaning one account. Revocation is a timestamp, not a delete: the row explains old commands.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import Row, Table, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine
from sqlalchemy.sql import func

from domain.rules.commands import MAX_ID
from scoreline.accounts.models import Desk, Operator, Sender
from scoreline.accounts.tokens import hash_token, new_token, token_kind
from scoreline.db.tables import desk, fixture, operator
from scoreline.logging import get_logger

MAX_NAME_LENGTH = 100

log = get_logger("scoreline.accounts")


class AccountError(ValueError):
    """A request about accounts that cannot be done; the message says why, for a person."""


class NameTakenError(AccountError):
    def __init__(self, kind: str, name: str) -> None:
        super().__init__(f"a {kind} named {name!r} already exists (names are never reused)")


class UnknownFixturesError(AccountError):
    def __init__(self, fixture_ids: list[int]) -> None:
        super().__init__(f"no such fixture: {', '.join(str(i) for i in fixture_ids)}")
        self.fixture_ids = fixture_ids


class AccountNotFoundError(AccountError):
    def __init__(self, kind: str, name: str) -> None:
        super().__init__(f"no {kind} named {name!r}")


async def create_desk(engine: AsyncEngine, name: str, fixture_ids: Iterable[int]) -> tuple[Desk, str]:
    """Create a desk allowed to score `fixture_ids`; return it and its token (not stored anywhere).

    Raises:
        UnknownFixturesError: some fixture does not exist; nothing is written.
        NameTakenError: the name is in use (also by a revoked desk).
        AccountError: an empty or over-long name, or no fixtures.
    """
    clean = _checked_name(name)
    wanted = sorted(set(fixture_ids))
    if not wanted:
        raise AccountError("a desk needs at least one fixture")
    token = new_token("desk")
    async with engine.begin() as conn:
        await _require_fixtures(conn, wanted)
        statement = (
            insert(desk)
            .values(name=clean, token_hash=hash_token(token), fixtures=wanted)
            .on_conflict_do_nothing(index_elements=[desk.c.name])
            .returning(*desk.c)
        )
        row = (await conn.execute(statement)).one_or_none()
    if row is None:
        raise NameTakenError("desk", clean)
    created = _desk(row)
    log.info("desk.created", desk_id=created.id, name=created.name, fixtures=wanted)
    return created, token


async def create_operator(engine: AsyncEngine, name: str) -> tuple[Operator, str]:
    """Create an operator; return it and its token (not stored anywhere).

    Raises:
        NameTakenError: the name is in use (also by a revoked operator).
        AccountError: an empty or over-long name.
    """
    clean = _checked_name(name)
    token = new_token("operator")
    statement = (
        insert(operator)
        .values(name=clean, token_hash=hash_token(token))
        .on_conflict_do_nothing(index_elements=[operator.c.name])
        .returning(*operator.c)
    )
    async with engine.begin() as conn:
        row = (await conn.execute(statement)).one_or_none()
    if row is None:
        raise NameTakenError("operator", clean)
    created = _operator(row)
    log.info("operator.created", operator_id=created.id, name=created.name)
    return created, token


async def revoke_desk(engine: AsyncEngine, name: str) -> Desk:
    """Stop the desk's token from authenticating. Revoking twice keeps the first time.

    Raises:
        AccountNotFoundError: no desk has that name.
    """
    row = await _revoke(engine, desk, name)
    if row is None:
        raise AccountNotFoundError("desk", name)
    revoked = _desk(row)
    log.info("desk.revoked", desk_id=revoked.id, name=revoked.name)
    return revoked


async def revoke_operator(engine: AsyncEngine, name: str) -> Operator:
    """Stop the operator's token from authenticating. Revoking twice keeps the first time.

    Raises:
        AccountNotFoundError: no operator has that name.
    """
    row = await _revoke(engine, operator, name)
    if row is None:
        raise AccountNotFoundError("operator", name)
    revoked = _operator(row)
    log.info("operator.revoked", operator_id=revoked.id, name=revoked.name)
    return revoked


async def authenticate(engine: AsyncEngine, token: str) -> Sender | None:
    """The sender a bearer token belongs to; None if it is malformed, unknown or revoked.

    The prefix picks the table, so a token we never issued costs no query at all.
    """
    kind = token_kind(token)
    if kind is None:
        return None
    table = desk if kind == "desk" else operator
    statement = select(table).where(table.c.token_hash == hash_token(token), table.c.revoked_at.is_(None))
    async with engine.connect() as conn:
        row = (await conn.execute(statement)).one_or_none()
    if row is None:
        return None
    fixtures = frozenset(row.fixtures) if kind == "desk" else None
    return Sender(kind=kind, id=row.id, name=row.name, fixtures=fixtures)


def _checked_name(name: str) -> str:
    clean = name.strip()
    if not 1 <= len(clean) <= MAX_NAME_LENGTH:
        raise AccountError(f"a name needs 1 to {MAX_NAME_LENGTH} characters")
    return clean


async def _require_fixtures(conn: AsyncConnection, wanted: list[int]) -> None:
    """Raise unless every id is a fixture; the rows stay key-locked until the desk is written."""
    in_range = [i for i in wanted if 1 <= i <= MAX_ID]
    statement = select(fixture.c.id).where(fixture.c.id.in_(in_range)).with_for_update(key_share=True)
    found = set((await conn.execute(statement)).scalars())
    missing = [i for i in wanted if i not in found]
    if missing:
        raise UnknownFixturesError(missing)


async def _revoke(engine: AsyncEngine, table: Table, name: str) -> Row[Any] | None:
    statement = (
        update(table)
        .where(table.c.name == name.strip())
        .values(revoked_at=func.coalesce(table.c.revoked_at, func.now()))
        .returning(*table.c)
    )
    async with engine.begin() as conn:
        row: Row[Any] | None = (await conn.execute(statement)).one_or_none()
    return row


def _desk(row: Row[Any]) -> Desk:
    return Desk(
        id=row.id,
        name=row.name,
        fixtures=frozenset(row.fixtures),
        created_at=row.created_at,
        revoked_at=row.revoked_at,
    )


def _operator(row: Row[Any]) -> Operator:
    return Operator(id=row.id, name=row.name, created_at=row.created_at, revoked_at=row.revoked_at)
