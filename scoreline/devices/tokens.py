"""A device's API secret (made once per registration, stored only as a hash) and APNs token shapes.

A secret is `sl_dev_<device id, 32 hex>_<43 url-safe chars>` (32 random bytes). The device id
inside lets the API look the device up by primary key and tell "not your device" (403) from "not a
valid token" (401) without an index on the hash; the random part is what proves possession. The
database keeps the sha-256 hex digest: 256 random bits need no slow KDF.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import uuid
from typing import Final

TOKEN_BYTES: Final = 32
PREFIX: Final = "sl_dev_"
_SHAPE: Final = re.compile(r"sl_dev_(?P<device>[0-9a-f]{32})_(?P<secret>[A-Za-z0-9_-]{43})")

APNS_TOKEN_PATTERN: Final = r"^(?:[0-9a-fA-F]{2}){32,100}$"
"""An APNs push-to-start or activity update token: whole hex bytes, 64 to 200 hex digits."""


def new_token(device_id: uuid.UUID) -> str:
    """A fresh secret for `device_id`; shown to the app once."""
    return f"{PREFIX}{device_id.hex}_{secrets.token_urlsafe(TOKEN_BYTES)}"


def hash_token(token: str) -> str:
    """What the database stores: the token's sha-256, hex."""
    return hashlib.sha256(token.encode()).hexdigest()


def device_of(token: str) -> uuid.UUID | None:
    """The device a well-formed token names, or None for anything we never issue."""
    match = _SHAPE.fullmatch(token)
    return uuid.UUID(hex=match["device"]) if match else None


def matches(token: str, stored_hash: str) -> bool:
    """Whether `token` hashes to `stored_hash` (constant time: the hash is looked up by device id)."""
    return hmac.compare_digest(hash_token(token), stored_hash)
