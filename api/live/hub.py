"""The process's fan-out: one outbox consumer that loads each change once and offers it to every
connection that follows the match.

Work is done only for matches someone follows: an outbox row for a match with no subscriber (and
no subscriber that takes every match) is skipped without touching Postgres. Rows of one match that
arrive in the same batch are coalesced into one value at the newest version, its entries covering
them all.

The hub remembers the newest version it delivered per followed match and drops anything not newer,
so a change that arrives twice (the outbox's at-least-once delivery, or the same change from this
process's listener and from Redis) is offered once. Per connection, `tracking` makes that exact.

Each delivery is logged once per process, not per client: one `live.delivered` line per trace the
value carries (a coalesced value delivers several changes), with the number of subscribers it went
to, so `scoreline trace` shows when a change reached this process's screens. Nothing is logged for
a change nobody here follows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from sqlalchemy.ext.asyncio import AsyncEngine

from api.live.changes import LiveValue, load_value
from api.live.subscriber import Subscriber
from scoreline.logging import get_logger
from scoreline.outbox.reader import OutboxEvent

log = get_logger(__name__)

Publish = Callable[[LiveValue], None]
"""Hands a change this process loaded to the other processes (never blocks, never raises)."""


class LiveHub:
    def __init__(self, engine: AsyncEngine, capacity: int) -> None:
        self._engine = engine
        self._capacity = capacity
        self.publish: Publish | None = None
        """Set by the runtime when a relay shares changes with other processes."""
        self.loads = 0
        """Changes loaded from Postgres (for tests and the bench: work done per change)."""
        self._followers: dict[int, set[Subscriber]] = {}
        self._everything: set[Subscriber] = set()
        self._delivered: dict[int, int] = {}
        self._announced: dict[int, int] = {}

    # --- interest -----------------------------------------------------------------------------

    def subscriber(self, kind: str, *, delay: float = 0.0) -> Subscriber:
        """A new subscriber that follows nothing yet (queue size from the settings), holding each
        change `delay` seconds."""
        return Subscriber(self._capacity, kind=kind, delay=delay)

    def follow(self, subscriber: Subscriber, fixture_id: int) -> None:
        subscriber.fixtures.add(fixture_id)
        self._followers.setdefault(fixture_id, set()).add(subscriber)

    def unfollow(self, subscriber: Subscriber, fixture_id: int) -> None:
        subscriber.fixtures.discard(fixture_id)
        followers = self._followers.get(fixture_id)
        if followers is not None:
            followers.discard(subscriber)
            if not followers:
                del self._followers[fixture_id]
        self._forget_unfollowed(fixture_id)

    def follow_everything(self, subscriber: Subscriber, on: bool) -> None:
        subscriber.everything = on
        if on:
            self._everything.add(subscriber)
            return
        self._everything.discard(subscriber)
        for fixture_id in list(self._delivered):
            self._forget_unfollowed(fixture_id)

    def leave(self, subscriber: Subscriber) -> None:
        """Forget the subscriber entirely (idempotent: called on every way a connection ends)."""
        for fixture_id in list(subscriber.fixtures):
            self.unfollow(subscriber, fixture_id)
        self.follow_everything(subscriber, False)

    def announced(self, fixture_id: int) -> int:
        """The newest version this process knows was committed for this match (0 if none yet):
        announced by the outbox or the relay, or read from Postgres for a first value (`heard`).

        Kept for every match, followed or not (one int each, no query), so a new client can tell
        that a cached first value is older than a change already committed.
        """
        return self._announced.get(fixture_id, 0)

    def knows(self, fixture_id: int) -> bool:
        """Whether this process has heard of any version of this match since it started."""
        return fixture_id in self._announced

    def heard(self, fixture_id: int, version: int) -> None:
        """Note that `version` of the match was committed; the newest version heard of is kept."""
        if version > self._announced.get(fixture_id, -1):
            self._announced[fixture_id] = version

    def followed(self, fixture_id: int) -> bool:
        return bool(self._everything) or fixture_id in self._followers

    @property
    def subscribers(self) -> int:
        """Connections currently subscribed (for tests and the bench)."""
        return len(self._subscribed())

    def clients_by_kind(self) -> dict[str, int]:
        """Connections currently subscribed, by subscriber kind (`sse`, `sse-live`, `ws`)."""
        counts: dict[str, int] = {}
        for subscriber in self._subscribed():
            counts[subscriber.kind] = counts.get(subscriber.kind, 0) + 1
        return counts

    def _subscribed(self) -> set[Subscriber]:
        # Built by C-level copies and a union only: `/metrics` may call this from its own thread
        # (`API_METRICS_ADDRESS`), and none of these steps lets the event loop change the sets midway.
        return set().union(*list(self._followers.values()), self._everything)

    # --- changes ------------------------------------------------------------------------------

    async def on_outbox(self, events: Sequence[OutboxEvent]) -> None:
        """The outbox consumer: load each followed match's change once, deliver it, publish it.

        Raises:
            DBAPIError, OSError: Postgres failed; the listener offers the same rows again soon, and
                what was already delivered is dropped then as not newer.
        """
        for fixture_id, after, traces in self._wanted(events):
            self.loads += 1
            value = await load_value(
                self._engine, fixture_id, self._delivered.get(fixture_id, after), traces=traces
            )
            if value is None:
                continue
            if self.deliver(value) and self.publish is not None:
                self.publish(value)

    def deliver(self, value: LiveValue) -> bool:
        """Offer a change to its followers unless one as new was delivered; True if it was new."""
        fixture_id = value.fixture_id
        self.heard(fixture_id, value.version)
        if not self.followed(fixture_id) or value.version <= self._delivered.get(fixture_id, -1):
            return False
        self._delivered[fixture_id] = value.version
        taken = 0
        for subscriber in list(self._subscribers_of(fixture_id)):
            if subscriber.offer(value):
                taken += 1
            else:
                self.leave(subscriber)
        if taken:
            for trace_id in value.trace_ids or (None,):
                log.info(
                    "live.delivered",
                    fixture_id=fixture_id,
                    version=value.version,
                    trace_id=trace_id,
                    subscribers=taken,
                )
        return True

    def _wanted(self, events: Sequence[OutboxEvent]) -> Iterator[tuple[int, int | None, tuple[str, ...]]]:
        """(fixture, the version its new entries follow, the traces of its new rows) per followed
        match with something new."""
        after: dict[int, int | None] = {}
        traces: dict[int, dict[str, None]] = {}
        for event in events:
            fixture_id = event.fixture_id
            if event.seq is not None:
                self.heard(fixture_id, event.seq)
            if not self.followed(fixture_id):
                continue
            if event.seq is not None and event.seq <= self._delivered.get(fixture_id, -1):
                continue
            start = event.payload.get("from_seq")
            previous = start - 1 if isinstance(start, int) else None
            if fixture_id not in after:
                after[fixture_id] = previous
            elif previous is not None and (known := after[fixture_id]) is not None:
                after[fixture_id] = min(known, previous)
            if event.trace_id is not None:
                traces.setdefault(fixture_id, {})[event.trace_id] = None
        return ((fixture_id, start, tuple(traces.get(fixture_id, ()))) for fixture_id, start in after.items())

    def _subscribers_of(self, fixture_id: int) -> set[Subscriber]:
        return self._followers.get(fixture_id, set()) | self._everything

    def _forget_unfollowed(self, fixture_id: int) -> None:
        # A match followed again later starts from its then-current version, not a stale one.
        if not self.followed(fixture_id):
            self._delivered.pop(fixture_id, None)
