"""Bearer tokens for desks and operators: made once, shown once, stored only as a hash.

A token is `sl_desk_<43 url-safe chars>` or `sl_op_<43 url-safe chars>`: 32 random bytes behind a
readable prefix, so a leaked token is recognisable in a log or a secret scanner and the API knows
which table to look in without asking Postgres about junk.

The database keeps the sha-256 hex digest only. A fast hash is enough here: a slow KDF (bcrypt,
argon2) protects low-entropy passwords from guessing, but guessing 256 random bits is hopeless at
any speed, and a fast hash lets the API find a sender by `token_hash` in one indexed lookup. That
lookup is also why a constant-time comparison is not needed: no secret is ever compared in Python.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from typing import Final

from domain.rules import Actor

TOKEN_BYTES: Final = 32
PREFIXES: Final[dict[Actor, str]] = {"desk": "sl_desk_", "operator": "sl_op_"}
_SHAPE: Final = re.compile(r"sl_(desk|op)_[A-Za-z0-9_-]{43}")
_KIND_OF_PREFIX: Final[dict[str, Actor]] = {"desk": "desk", "op": "operator"}


def new_token(kind: Actor) -> str:
    """A fresh bearer token for a desk or an operator."""
    return PREFIXES[kind] + secrets.token_urlsafe(TOKEN_BYTES)


def hash_token(token: str) -> str:
    """What the database stores and is searched by: the token's sha-256, hex."""
    return hashlib.sha256(token.encode()).hexdigest()


def token_kind(token: str) -> Actor | None:
    """`desk` or `operator` for a well-formed token, None for anything we never issue."""
    match = _SHAPE.fullmatch(token)
    return None if match is None else _KIND_OF_PREFIX[match.group(1)]
