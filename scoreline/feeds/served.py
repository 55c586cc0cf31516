"""The API process's copies of published documents: refreshed from Redis, Postgres when it cannot.

A copy is trusted for `fresh_for` seconds; the first request after that asks Redis for the version
only (one small round trip per document per second, whatever the request rate) and fetches a body
only when the version moved. A miss, a failure or a Redis behind what the process already holds
reads the latest version from Postgres instead. Versions never go backwards within a process, and a
client whose `If-None-Match` names a newer version than the copy (another process served it) makes
the copy refresh at once: a partner never sees an ETag it already had after a newer one. Concurrent requests for a document
that needs refreshing share one refresh.

Each version is rendered once when it arrives: the canonical JSON and its gzip, each with its strong
ETag (the gzip one carries `-gz`: a strong validator names one exact byte sequence). A fixture list
filtered to a partner's competitions is rendered once per version and grant set.
"""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import json
import time
from dataclasses import dataclass
from datetime import timedelta

import redis.asyncio as aioredis
from redis.exceptions import RedisError
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine

from scoreline.feeds.content import canonical_json, variant_etag
from scoreline.feeds.published import Published, latest_version
from scoreline.feeds.store import read_published, read_version
from scoreline.logging import get_logger

log = get_logger(__name__)

READ_TIMEOUT = 0.5
"""Seconds a stalled Redis may cost a refresh before Postgres answers instead."""
CAPACITY = 10_000
"""Documents (and known misses) kept per process; the least recently refreshed go first."""
GZIP_LEVEL = 6

_REDIS_ERRORS = (RedisError, OSError, TimeoutError, ValueError)
"""ValueError: a damaged entry (a version that is not a number) counts as a miss."""


class FeedUnavailableError(Exception):
    """Neither Redis nor Postgres could say what the document is, and no copy was held."""


@dataclass(frozen=True, slots=True)
class Representation:
    """One body in both codings, with the strong ETag of each."""

    etag: str
    body: bytes
    gzip_etag: str
    gzipped: bytes


def represent(etag: str, body: bytes) -> Representation:
    gzipped = gzip.compress(body, compresslevel=GZIP_LEVEL, mtime=0)
    return Representation(etag, body, variant_etag(etag, "gz"), gzipped)


class Document:
    """One version of a document in this process, rendered once."""

    __slots__ = ("_views", "full", "published")

    def __init__(self, published: Published) -> None:
        self.published = published
        self.full = represent(published.etag, published.body)
        self._views: dict[frozenset[int], Representation] = {}

    @property
    def version(self) -> int:
        return self.published.version

    def for_competitions(self, competitions: frozenset[int]) -> Representation:
        """A fixture list keeping only the fixtures of `competitions` (rendered once per grant set)."""
        view = self._views.get(competitions)
        if view is None:
            body = json.loads(self.published.body)
            body["fixtures"] = [
                entry for entry in body["fixtures"] if entry["competition_id"] in competitions
            ]
            grants = ",".join(str(competition) for competition in sorted(competitions))
            tag = variant_etag(self.published.etag, "p" + hashlib.sha256(grants.encode()).hexdigest()[:12])
            view = self._views[competitions] = represent(tag, canonical_json(body))
        return view


@dataclass(frozen=True, slots=True)
class _Slot:
    document: Document | None
    checked: float


class DocumentCopies:
    """`get(doc_key)` answers from memory while fresh; one instance per API process."""

    def __init__(
        self, engine: AsyncEngine, redis: aioredis.Redis, *, fresh_for: timedelta = timedelta(seconds=1)
    ) -> None:
        self._engine = engine
        self._redis = redis
        self._fresh_for = fresh_for.total_seconds()
        self._slots: dict[str, _Slot] = {}
        self._refreshing: dict[str, asyncio.Future[Document | None]] = {}

    async def get(self, doc_key: str, *, at_least: int | None = None) -> Document | None:
        """The latest version known, or None if the document was never published. A copy older
        than `at_least` (a version the client proves it holds: another process served it) is
        refreshed now, however fresh; the caller decides what to answer if it stays older.

        Raises:
            FeedUnavailableError: Redis and Postgres both failed and this process holds no copy.
        """
        slot = self._slots.get(doc_key)
        if (
            slot is not None
            and time.monotonic() - slot.checked < self._fresh_for
            and (at_least is None or (slot.document is not None and slot.document.version >= at_least))
        ):
            return slot.document
        refreshing = self._refreshing.get(doc_key)
        if refreshing is None:
            refreshing = asyncio.ensure_future(
                self._refresh(doc_key, None if slot is None else slot.document, at_least)
            )
            self._refreshing[doc_key] = refreshing
            refreshing.add_done_callback(lambda done: self._refreshed(doc_key, done))
        # Shielded: a client that hangs up must not cancel the refresh other requests wait on.
        return await asyncio.shield(refreshing)

    def _refreshed(self, doc_key: str, done: asyncio.Future[Document | None]) -> None:
        self._refreshing.pop(doc_key, None)
        if not done.cancelled():
            done.exception()  # retrieved here, so a refresh nobody awaited any more logs nothing

    async def _refresh(self, doc_key: str, held: Document | None, at_least: int | None) -> Document | None:
        """Redis first; Postgres when Redis misses, fails, or is behind what this process or the
        client (`at_least`) already has."""
        fresh: Published | None = None
        try:
            async with asyncio.timeout(READ_TIMEOUT):
                version = await read_version(self._redis, doc_key)
                behind = version is not None and at_least is not None and version < at_least
                if version is not None and held is not None and version <= held.version and not behind:
                    return self._keep(doc_key, held)
                if version is not None and not behind:
                    fresh = await read_published(self._redis, doc_key)
        except _REDIS_ERRORS as error:
            log.warning("feeds.redis_read_failed", doc=doc_key, error=f"{type(error).__name__}: {error}")
        if fresh is None:
            try:
                async with self._engine.connect() as conn:
                    fresh = await latest_version(conn, doc_key)
            except (SQLAlchemyError, OSError) as error:
                log.warning(
                    "feeds.postgres_read_failed", doc=doc_key, error=f"{type(error).__name__}: {error}"
                )
                if held is None:
                    raise FeedUnavailableError(doc_key) from error
                return self._keep(doc_key, held)
        if held is not None and (fresh is None or fresh.version <= held.version):
            return self._keep(doc_key, held)
        return self._keep(doc_key, None if fresh is None else Document(fresh))

    def _keep(self, doc_key: str, document: Document | None) -> Document | None:
        self._slots.pop(doc_key, None)
        if len(self._slots) >= CAPACITY:
            del self._slots[next(iter(self._slots))]
        self._slots[doc_key] = _Slot(document, time.monotonic())
        return document
