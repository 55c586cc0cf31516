"""Partners and their API keys: made once, shown once, stored only as a hash.

A key is `sl_partner_` and 43 url-safe characters: 32 random bytes behind a prefix that a secret
scanner or a log reader recognises. The database keeps its sha-256 hex digest. A fast hash is
enough: a slow KDF (bcrypt, argon2) exists to make guessing low-entropy passwords expensive, but
256 random bits cannot be guessed at any speed, and a fast hash lets the API check a key in memory
on every request (a KDF would cost tens of milliseconds of CPU per request) and find it by its
digest in one dictionary lookup, with no secret ever compared in Python.

Every change commits with `pg_notify(PARTNERS_CHANNEL)`, so API processes reload their snapshot
(`directory.PartnerDirectory`) at once.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

import asyncpg
from sqlalchemy import func, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from scoreline.db.tables import partner

PARTNERS_CHANNEL: Final = "scoreline_partners"
KEY_PREFIX: Final = "sl_partner_"
KEY_BYTES: Final = 32
MAX_NAME_LENGTH: Final = 100
_BIGINT_MAX: Final = 2**63 - 1


class PartnerError(Exception):
    """A partner command that cannot be carried out (the message says why)."""


@dataclass(frozen=True, slots=True)
class Partner:
    name: str
    competitions: frozenset[int]
    active: bool
    delay_seconds: int = 0
    """Broadcast delay of what the key reads: nothing committed less than this long ago."""


def new_api_key() -> str:
    return KEY_PREFIX + secrets.token_urlsafe(KEY_BYTES)


def hash_api_key(api_key: str) -> str:
    """What the database stores and the API looks a key up by: sha-256, hex."""
    return hashlib.sha256(api_key.encode()).hexdigest()


async def create_partner(engine: AsyncEngine, name: str, competitions: Iterable[int]) -> tuple[Partner, str]:
    """Create a partner granted `competitions`; returns it with its API key (shown once).

    Raises:
        PartnerError: a bad name or competition list, or the name is taken.
    """
    name = _checked_name(name)
    granted = frozenset(competitions)
    if not granted or not all(0 < competition <= _BIGINT_MAX for competition in granted):
        raise PartnerError("give one or more positive competition ids")
    api_key = new_api_key()
    async with engine.begin() as conn:
        created = (
            await conn.execute(
                insert(partner)
                .values(name=name, api_key_hash=hash_api_key(api_key), competitions=sorted(granted))
                .on_conflict_do_nothing(index_elements=[partner.c.name])
                .returning(partner.c.id)
            )
        ).scalar_one_or_none()
        if created is None:
            raise PartnerError(f"a partner named {name!r} already exists")
        await _announce(conn, name)
    return Partner(name=name, competitions=granted, active=True), api_key


async def revoke_partner(engine: AsyncEngine, name: str) -> Partner:
    """Revoke a partner's key; its requests are refused from the next snapshot reload (at once).

    Raises:
        PartnerError: there is no partner of that name.
    """
    name = _checked_name(name)
    async with engine.begin() as conn:
        row = (
            await conn.execute(
                partner.update()
                .where(partner.c.name == name)
                .values(active=False)
                .returning(partner.c.competitions)
            )
        ).first()
        if row is None:
            raise PartnerError(f"there is no partner named {name!r}")
        await _announce(conn, name)
    return Partner(name=name, competitions=frozenset(row.competitions), active=False)


async def load_partners(connection: asyncpg.Connection) -> dict[str, Partner]:
    """Every partner, revoked ones included (so a revoked key gets 403, not 401), by key hash."""
    rows = await connection.fetch(
        "SELECT name, api_key_hash, competitions, active, delay_seconds FROM partner"
    )
    return {
        row["api_key_hash"]: Partner(
            name=row["name"],
            competitions=frozenset(row["competitions"]),
            active=row["active"],
            delay_seconds=row["delay_seconds"],
        )
        for row in rows
    }


def _checked_name(name: str) -> str:
    name = name.strip()
    if not 0 < len(name) <= MAX_NAME_LENGTH:
        raise PartnerError(f"a partner name has 1 to {MAX_NAME_LENGTH} characters")
    return name


async def _announce(conn: AsyncConnection, name: str) -> None:
    await conn.execute(select(func.pg_notify(PARTNERS_CHANNEL, name)))
