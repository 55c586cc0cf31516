"""Partner feeds: versioned documents built from Postgres, served to partners by API key.

Two kinds of document, each under a key: `match/{fixture_id}` (fixture, scoreboard, events in match
time) and `fixtures/{YYYY-MM-DD}` (that UTC day's fixtures with state and score).

- The worker's `FeedBuilder` follows the `domain_event` outbox with a cursor kept in Postgres,
  gathers changes per document for a moment, rebuilds each document from Postgres and saves a new
  `published_document` version only when the content hash changed; Redis then gets the latest body
  through a compare-and-set on the version.
- The API answers `GET /v1/feeds/{doc}` from an in-process copy refreshed from Redis (Postgres when
  Redis cannot answer), checks the partner's key against an in-memory snapshot of the partner table,
  and answers 304 to a matching `If-None-Match`.
"""
