"""The latest version of each document in Redis, written only if newer.

Key `feed:{doc_key}` is a hash: `version`, `etag`, `competition` (empty for none), `body` (canonical
JSON). Writes go through one Lua compare-and-set on the version, atomic on the server, so a retried
or late writer can never put an older version back (the pattern of `scoreline.readmodel.cache`,
with the fields a feed needs). An equal version only has its expiry renewed.

Redis is a copy: every function here raises on a Redis failure and the caller decides (the builder
retries the write later, the API reads Postgres instead).
"""

from __future__ import annotations

from datetime import timedelta

import redis.asyncio as aioredis

from scoreline.feeds.published import Published

FEED_TTL = timedelta(days=3)
"""Long past a match day; a document nobody rebuilt since drops out and is read from Postgres."""

# KEYS[1] = key; ARGV = version, etag, competition, body, ttl seconds. 1 if written, 0 if not newer.
_STORE_IF_NEWER = """
local stored = redis.call('HGET', KEYS[1], 'version')
if stored then
  local version, incoming = tonumber(stored), tonumber(ARGV[1])
  if version > incoming then return 0 end
  if version == incoming then
    redis.call('EXPIRE', KEYS[1], ARGV[5])
    return 0
  end
end
redis.call('HSET', KEYS[1], 'version', ARGV[1], 'etag', ARGV[2], 'competition', ARGV[3], 'body', ARGV[4])
redis.call('EXPIRE', KEYS[1], ARGV[5])
return 1
"""


def feed_key(doc_key: str) -> str:
    return f"feed:{doc_key}"


async def store_if_newer(redis: aioredis.Redis, published: Published) -> bool:
    """Store `published` unless Redis holds this version or a newer one; True if it was written."""
    script = redis.register_script(_STORE_IF_NEWER)
    competition = "" if published.competition_id is None else str(published.competition_id)
    ttl = int(FEED_TTL.total_seconds())
    args: list[bytes | str | int] = [published.version, published.etag, competition, published.body, ttl]
    return bool(await script(keys=[feed_key(published.doc_key)], args=args))


async def read_version(redis: aioredis.Redis, doc_key: str) -> int | None:
    """The version Redis holds, or None: the cheap question asked before fetching a body."""
    version = await redis.hget(feed_key(doc_key), "version")
    return None if version is None else int(version)


async def read_published(redis: aioredis.Redis, doc_key: str) -> Published | None:
    """The version Redis holds, body included, or None on a miss."""
    version, etag, competition, body = await redis.hmget(
        feed_key(doc_key), ["version", "etag", "competition", "body"]
    )
    if version is None or etag is None or body is None:
        return None
    return Published(
        doc_key=doc_key,
        version=int(version),
        etag=etag.decode() if isinstance(etag, bytes) else etag,
        competition_id=int(competition) if competition else None,
        body=body if isinstance(body, bytes) else body.encode(),
    )
