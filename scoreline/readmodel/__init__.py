"""The fans' read model: match and event views built from Postgres, with a hot copy in Redis.

Postgres is the truth; Redis holds the latest view of each match, written only when newer, so a
read is one Redis round trip while the cache is warm and falls back to Postgres whenever it is not.
The API reads through `reads`; the ingest calls `cache.refresh` after each commit.
"""
