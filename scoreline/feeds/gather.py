"""Which documents wait to be rebuilt, when each is due, and how far the outbox is fully handled.

Pure bookkeeping (times are the caller's clock, in seconds), so its rules are tested without sleeping:

- Gathering: a change makes its document due `gather` seconds later, and every further change moves
  that back by `gather` again (a burst becomes one version) — but never past `max_hold` after the
  oldest change waiting, counted from when that change happened, not from when it was read.
- Durability: the outbox cursor may only pass a row once every document that row touched has been
  rebuilt after it was read. `settled` gives the furthest such position; rows after it are read
  again after a restart, which is harmless because an unchanged document keeps its version.
- Traces: each pending document keeps the trace ids of the changes gathered into it, so the version
  its rebuild saves can say which changes it shows (`scoreline trace` finds a change's feed build).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from scoreline.feeds.keys import DocKey
from scoreline.outbox.reader import Cursor


@dataclass(slots=True)
class _Pending:
    due: float
    limit: float
    first: Cursor | None
    """The oldest outbox row waiting on this document; None if only a sweep asked for it."""
    since: float
    """When the oldest change waiting on this document happened."""
    traces: dict[str, None]
    """The trace ids of the changes waiting on this document, in the order they were read (a dict
    as an ordered set)."""


class Gatherer:
    """Pending documents with their due times, and the outbox rows read but not yet settled."""

    def __init__(self, gather: float, max_hold: float) -> None:
        if not 0 <= gather <= max_hold:
            raise ValueError("need 0 <= gather <= max_hold")
        self._gather = gather
        self._max_hold = max_hold
        self._pending: dict[DocKey, _Pending] = {}
        self._read: deque[Cursor] = deque()

    def change(
        self, doc: DocKey, at: Cursor | None, now: float, happened: float, trace_id: str | None = None
    ) -> None:
        """`doc` must be rebuilt for a change read at `now` that happened at `happened`.

        Args:
            at: The outbox row that carried it (None for a sweep, which holds no row back).
            trace_id: The trace of that change (None for a sweep, or a row written without one).
        """
        limit = happened + self._max_hold
        pending = self._pending.get(doc)
        if pending is None:
            pending = self._pending[doc] = _Pending(
                due=min(now + self._gather, limit), limit=limit, first=at, since=happened, traces={}
            )
        else:
            pending.since = min(pending.since, happened)
            pending.limit = min(pending.limit, limit)
            pending.due = min(now + self._gather, pending.limit)
            if pending.first is None:
                pending.first = at
        if trace_id is not None:
            pending.traces[trace_id] = None

    def read(self, at: Cursor) -> None:
        """Outbox row `at` was read (call in read order, after its `change` calls, if any)."""
        self._read.append(at)

    def due(self, now: float) -> list[DocKey]:
        """Documents to rebuild now, the longest waiting first."""
        ready = [(pending.due, doc) for doc, pending in self._pending.items() if pending.due <= now]
        return [doc for _, doc in sorted(ready, key=lambda item: item[0])]

    def staleness(self, now: float) -> float:
        """Seconds since the oldest change that no rebuilt document shows yet happened; 0 if none."""
        return max((now - pending.since for pending in self._pending.values()), default=0.0)

    def traces(self, doc: DocKey) -> tuple[str, ...]:
        """The trace ids of the changes waiting on `doc`, oldest first (none if it is not pending)."""
        pending = self._pending.get(doc)
        return () if pending is None else tuple(pending.traces)

    def next_due(self) -> float | None:
        return min((pending.due for pending in self._pending.values()), default=None)

    def built(self, doc: DocKey) -> None:
        """`doc` was rebuilt from a snapshot taken after every change read so far."""
        self._pending.pop(doc, None)

    def retry(self, doc: DocKey, due: float) -> None:
        """The rebuild of `doc` failed: try again at `due`, still holding its rows back."""
        pending = self._pending.get(doc)
        if pending is not None:
            pending.due = pending.limit = due

    def settled(self) -> Cursor | None:
        """The furthest row read such that it and every row before it are fully handled.

        None when nothing new settled since the last call (the caller keeps its cursor).
        """
        waiting = [pending.first for pending in self._pending.values() if pending.first is not None]
        holding = min(waiting, default=None)
        settled: Cursor | None = None
        while self._read and (holding is None or self._read[0] < holding):
            settled = self._read.popleft()
        return settled
