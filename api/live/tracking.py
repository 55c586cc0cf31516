"""The versions one connection has sent, per match: each change goes out once, and with no gap.

Changes reach a connection by more than one road (its first value read from Redis or Postgres, the
hub's changes from this process's outbox listener, changes relayed from other processes), so they
can arrive twice, or arrive with entries that start after what the connection sent. `fit` turns
each into exactly what this connection still needs: nothing if it is not newer, the entries after
the version it sent, and (rarely) the entries in between read from Postgres.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncEngine

from api.live.changes import LiveValue, load_entries


class VersionTracker:
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine
        self._sent: dict[int, int] = {}

    def sent(self, fixture_id: int) -> int | None:
        """The last version sent for this match, or None if none was."""
        return self._sent.get(fixture_id)

    def forget(self, fixture_id: int) -> None:
        """The client stopped following this match; a later follow starts from a fresh value."""
        self._sent.pop(fixture_id, None)

    async def fit(self, value: LiveValue) -> LiveValue | None:
        """What to send for `value`: None if this connection already sent it (or newer).

        Raises:
            DBAPIError, OSError: the entries of a gap could not be read.
        """
        held = self._sent.get(value.fixture_id)
        if held is None:
            self._sent[value.fixture_id] = value.version
            return value
        if value.version <= held:
            return None
        if value.previous == held:
            # The usual case: it follows on from what was sent; the hub's object (and its
            # serialised form) is shared by every connection.
            self._sent[value.fixture_id] = value.version
            return value
        if value.previous is not None and value.previous <= held:
            entries = [entry for entry in value.entries if entry.seq > held]
        else:
            # The value starts after what this connection sent (or has no entries at all).
            upto = value.version if value.previous is None else value.previous
            async with self._engine.connect() as conn:
                missing = await load_entries(conn, value.fixture_id, held, upto)
            entries = missing if value.previous is None else [*missing, *value.entries]
        self._sent[value.fixture_id] = value.version
        return value.following(held, entries)
