"""What a live screen saw, against Postgres: the pure rules behind the screens check.

The streams promise different things, and each road is checked for exactly its promise
(`api.live.sse`, `api.live.ws`, `api.live.tracking`):

- `Road.MATCH_SSE` (`/v1/matches/{id}/stream`): every message carries the value at `version` and
  the log entries in (`previous`, `version`]. A fresh connection starts with the current value
  (`previous` null, no entries); one opened with `Last-Event-ID: v` starts with `previous == v`
  and the entries it missed. So the entry seqs a client holds are the whole log from its first
  version on, with no gap even across its reconnects, and the last one is the final version.
- `Road.MATCH_WS` (a `match:<id>` channel): the same within one connection, but the protocol has
  no resume: a new connection's subscribe starts again from the current value. A gap across the
  client's own reconnect is therefore allowed (not filled: nothing offers to), going backwards is
  not, and the last version must still be the final one.
- `Road.LIVE_SSE` (`/v1/stream`): values of every live match, chained per match within one
  connection; no id and no resume. A match joins with the change that made it live (which may
  carry entries) and leaves after the one that ended it, so later corrections never reach this
  road: it is checked for order, duplicates and exact entries, not for the final version.
- WebSocket `scores` / `status` (`Latest`): the latest score or state only, sent when it changes:
  per match, versions rise within a connection and never fall across reconnects, consecutive
  messages of one connection differ, and a message agrees with the `match:<id>` value the same
  client saw at the same version, from version 1 on. Version 0 is a match with no log yet: its
  state is the fixture list's (`scoreline.readmodel.queries`), which the fixture sync moves on
  without a version until the first ingest, so two values at version 0 may differ (the
  30-minute soak's seed 25: a match whose first ingest a provider burst held up went from
  `live_first_half` to `live_second_half` at version 0).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from devkit.soak.model import Violation

CHECK = "screens"


class Road(StrEnum):
    MATCH_SSE = "sse"
    LIVE_SSE = "sse-live"
    MATCH_WS = "ws"


@dataclass(frozen=True)
class Seen:
    """One value message as it arrived: on which of the trail's connections, and what it said."""

    connection: int
    version: int
    previous: int | None
    seqs: tuple[int, ...]


@dataclass
class Trail:
    """What one client saw of one match on one road, in arrival order.

    `resumes` maps a connection number to the `Last-Event-ID` it was opened with (SSE match
    streams only); a connection missing from it started fresh.
    """

    subject: str
    fixture_id: int
    road: Road
    seen: list[Seen] = field(default_factory=list)
    resumes: dict[int, int] = field(default_factory=dict)

    @property
    def held(self) -> int | None:
        """The newest version this trail holds: what a resume asks to follow on from."""
        return max((seen.version for seen in self.seen), default=None)


@dataclass(frozen=True)
class MatchTruth:
    """A match as Postgres holds it after the run: its scoreboard version and its log's seqs."""

    version: int
    seqs: tuple[int, ...]


def check_trail(trail: Trail, truth: MatchTruth | None) -> list[Violation]:
    """Every broken promise of `trail`'s road (see the module docstring), in arrival order."""
    if truth is None:
        return [_violation(trail, "the match is not in Postgres")]
    violations: list[Violation] = []
    held: int | None = None
    connection: int | None = None
    connection_held: int | None = None
    for seen in trail.seen:
        first = seen.connection != connection
        if first:
            connection, connection_held = seen.connection, None
        problem = _order(held, seen, first) or _chain(trail, seen, first, connection_held)
        problem = problem or _entries(seen, truth)
        if problem is not None:
            violations.append(_violation(trail, problem))
        if held is None or seen.version > held:
            held = seen.version
        connection_held = seen.version
    if trail.road is not Road.LIVE_SSE:
        violations += _final(trail, held, truth)
    return violations


def _order(held: int | None, seen: Seen, first: bool) -> str | None:
    """No version twice, none older than one held; a new connection may restate the held one."""
    if held is None or seen.version > held or (first and seen.version == held):
        return None
    if seen.version == held:
        return f"version {seen.version} twice"
    return f"version {seen.version} out of order (after {held})"


def _chain(trail: Trail, seen: Seen, first: bool, connection_held: int | None) -> str | None:
    """Each message follows on from the last of its connection; a connection starts as its road says."""
    if not first:
        return _follows(seen, connection_held)
    if trail.road is Road.LIVE_SSE:
        return None
    resumed_from = trail.resumes.get(seen.connection)
    if seen.previous == resumed_from:
        return None
    if resumed_from is None:
        return f"a new connection started at {seen.version} after {seen.previous}, not the current value"
    return f"the resume from {resumed_from} was not filled: it started after {seen.previous}"


def _follows(seen: Seen, connection_held: int | None) -> str | None:
    if seen.previous == connection_held:
        return None
    if seen.previous is None:
        return f"version {seen.version} came without the entries since {connection_held}"
    kind = "a gap" if connection_held is None or seen.previous > connection_held else "an overlap"
    return f"version {seen.version} follows {seen.previous}, not {connection_held}: {kind}"


def _entries(seen: Seen, truth: MatchTruth) -> str | None:
    """The entries are exactly the log's seqs in (`previous`, `version`] (none for a current value)."""
    low = seen.previous if seen.previous is not None else seen.version
    expected = tuple(seq for seq in truth.seqs if low < seq <= seen.version)
    if seen.seqs == expected:
        return None
    return f"version {seen.version} carried seqs {list(seen.seqs)}, the log has {list(expected)}"


def _final(trail: Trail, held: int | None, truth: MatchTruth) -> list[Violation]:
    if held == truth.version:
        return []
    shown = "nothing" if held is None else f"version {held}"
    return [_violation(trail, f"ended at {shown}, Postgres is at {truth.version}")]


def _violation(trail: Trail, detail: str) -> Violation:
    return Violation(CHECK, f"{trail.subject} {trail.road} match {trail.fixture_id}", detail)


@dataclass(frozen=True)
class Latest:
    """One `scores` or `status` message: the match, its version, everything it showed (`shown`,
    comparable), and its headline (`home-away`, or the state) to hold against the match's value."""

    connection: int
    fixture_id: int
    version: int
    shown: str
    headline: str


def check_latest(
    subject: str, channel: str, messages: Sequence[Latest], values: Mapping[tuple[int, int], str]
) -> list[Violation]:
    """The rules of a latest-only channel; `values` are the headlines the client's `match:<id>`
    values showed, by (fixture, version), to cross-check against."""
    violations: list[Violation] = []
    last: dict[int, Latest] = {}
    for message in messages:
        before = last.get(message.fixture_id)
        problem = _latest_order(before, message) or _agrees(message, values)
        if problem is not None:
            where = f"{subject} {channel} match {message.fixture_id}"
            violations.append(Violation(CHECK, where, problem))
        if before is None or message.version >= before.version:
            last[message.fixture_id] = message
    return violations


def _latest_order(before: Latest | None, message: Latest) -> str | None:
    if before is None:
        return None
    same_connection = before.connection == message.connection
    if message.version < before.version or (same_connection and message.version == before.version):
        return f"version {message.version} after {before.version}"
    if same_connection and message.shown == before.shown:
        return f"version {message.version} sent {message.shown}, unchanged since {before.version}"
    return None


def _agrees(message: Latest, values: Mapping[tuple[int, int], str]) -> str | None:
    if message.version == 0:
        return None
    value = values.get((message.fixture_id, message.version))
    if value is None or value == message.headline:
        return None
    return f"version {message.version} showed {message.headline}, its match value {value}"
