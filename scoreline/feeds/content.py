"""Canonical JSON, the content hash and the ETag of a document.

Every body leaves Scoreline as canonical JSON (sorted keys, no spaces, UTF-8), whether it came from
Redis or was read back from Postgres' JSONB (which keeps neither key order nor spacing): the bytes
of a version are then the same everywhere, as a strong ETag promises.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any


def canonical_json(value: Any) -> bytes:
    """The one byte form of a JSON value: what is hashed, stored in Redis and served."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def content_hash(content: Any) -> str:
    """sha-256 of the content's canonical JSON: equal content, equal hash, on any machine."""
    return hashlib.sha256(canonical_json(content)).hexdigest()


def make_etag(doc_key: str, version: int, hash_: str) -> str:
    """A strong ETag (quotes included) from the document, its version and its content hash.

    The version leads so a tag is readable in a log; the digest ties it to the key and the content,
    so two documents, or a version number reused after a database restore, never share a tag.
    """
    digest = hashlib.sha256(f"{doc_key}\n{version}\n{hash_}".encode()).hexdigest()
    return f'"{version}-{digest[:24]}"'


_OUR_ETAG = re.compile(r'"(\d{1,18})-[0-9a-f]{24}(?:-[0-9a-z]+)*"')
"""Our strong ETags (`make_etag`, with `variant_etag` suffixes): the version is the first group."""


def held_version(if_none_match: str | None) -> int | None:
    """The newest version an `If-None-Match` proves the client holds: only our own strong tags
    count (`"{version}-{24 hex digits}"`, a variant suffix allowed); weak and foreign tags prove
    nothing. None if it names none."""
    if if_none_match is None:
        return None
    versions = [
        int(found[1]) for tag in if_none_match.split(",") if (found := _OUR_ETAG.fullmatch(tag.strip()))
    ]
    return max(versions, default=None)


def variant_etag(etag: str, variant: str) -> str:
    """The strong ETag of another representation of the same version (a coding, a filtered view)."""
    return f'{etag[:-1]}-{variant}"'
