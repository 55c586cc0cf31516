"""Saving a document version in Postgres when, and only when, its content changed.

`published_document` keeps every version (key, version) with its content hash and ETag. A rebuild
whose content hashes the same as the latest version saves nothing: version and ETag stay, so a
partner's `If-None-Match` keeps matching. The served body adds `doc`, `version` and `published_at`
to the content; none of them is hashed. A new version also records the trace ids of the changes
its rebuild gathered (`trace_ids`), so `scoreline trace` can tell which build showed a change.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from scoreline.db.tables import published_document
from scoreline.feeds.content import canonical_json, content_hash, make_etag

ENVELOPE = frozenset({"doc", "version", "published_at"})
"""Fields the served body adds around the content; never part of the hash."""


@dataclass(frozen=True, slots=True)
class Published:
    """One version of a document, as Redis holds it and the API serves it.

    Attributes:
        body: The served body as canonical JSON bytes.
        competition_id: The competition of a match document (what a partner must be granted);
            None for a day's fixture list, which the API filters per partner instead.
    """

    doc_key: str
    version: int
    etag: str
    competition_id: int | None
    body: bytes


async def publish(
    conn: AsyncConnection,
    doc_key: str,
    content: dict[str, Any],
    competition_id: int | None,
    *,
    trace_ids: Sequence[str] = (),
) -> tuple[Published, bool]:
    """Save `content` as the next version of `doc_key` unless the latest version has the same hash.

    Runs in the caller's transaction; the caller keeps one builder per database (the builder's
    leader lock), so the next version number is never claimed twice. `trace_ids` (the changes this
    rebuild gathered) are saved with a new version; a rebuild that saves nothing records none.

    Returns:
        The latest version after the call, and whether this call created it.
    """
    if ENVELOPE & content.keys():
        raise ValueError(f"content must not carry {sorted(ENVELOPE & content.keys())}")
    hash_ = content_hash(content)
    latest = (
        await conn.execute(
            select(
                published_document.c.version,
                published_document.c.content_hash,
                published_document.c.etag,
                published_document.c.body["published_at"].astext.label("published_at"),
            )
            .where(published_document.c.doc_key == doc_key)
            .order_by(published_document.c.version.desc())
            .limit(1)
        )
    ).first()
    if latest is not None and latest.content_hash == hash_:
        # Same hash, same content: the stored body is this content in the stored envelope.
        body = _envelope(content, doc_key, latest.version, latest.published_at)
        return Published(doc_key, latest.version, latest.etag, competition_id, canonical_json(body)), False
    version = 1 if latest is None else latest.version + 1
    etag = make_etag(doc_key, version, hash_)
    published_at = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    body = _envelope(content, doc_key, version, published_at)
    await conn.execute(
        published_document.insert().values(
            doc_key=doc_key,
            version=version,
            content_hash=hash_,
            etag=etag,
            body=body,
            competition_id=competition_id,
            trace_ids=list(trace_ids),
        )
    )
    return Published(doc_key, version, etag, competition_id, canonical_json(body)), True


def _envelope(content: dict[str, Any], doc_key: str, version: int, published_at: str) -> dict[str, Any]:
    return {**content, "doc": doc_key, "version": version, "published_at": published_at}


async def latest_version(
    conn: AsyncConnection, doc_key: str, *, older_than: timedelta | None = None
) -> Published | None:
    """The newest saved version of `doc_key`, or None if it was never published.

    With `older_than`, the newest saved at least that long ago (by the database's clock): what a
    partner with a broadcast delay reads. A version is saved after the changes it shows committed,
    so such a partner never sees a change sooner than its delay after the commit.
    """
    query = (
        select(
            published_document.c.version,
            published_document.c.etag,
            published_document.c.competition_id,
            published_document.c.body,
        )
        .where(published_document.c.doc_key == doc_key)
        .order_by(published_document.c.version.desc())
        .limit(1)
    )
    if older_than is not None:
        query = query.where(published_document.c.created_at <= func.now() - older_than)
    row = (await conn.execute(query)).first()
    if row is None:
        return None
    # JSONB gives back a value, not our bytes: re-serialised canonically, the bytes are the same.
    return Published(doc_key, row.version, row.etag, row.competition_id, canonical_json(row.body))
