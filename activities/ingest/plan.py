"""What one provider snapshot changes in a match's log, decided without touching the database.

The store loads what is already known (events, their miss counts, the scoreboard), asks `plan`
what to write, and writes it in one transaction. Keeping the decision pure makes the correction
rules testable on their own:

- a new `(stream, provider id)` is a new `event` entry;
- a known one whose type, team, player, related player, minute, extra minute or rescinded flag
  changed is an `amendment` (other fields — names, result text, sort order — update quietly);
- a known one missing from a stream that *was present* in the response counts a miss; the second
  consecutive miss retracts it (a `retraction` entry; nothing is deleted); a retracted one that
  comes back is restored by an `amendment`;
- an absent relation (include not honoured) is not an empty one: it never counts a miss;
- a state change is a `state` entry; a score change with no other entry in the batch is a
  `score` entry, so every visible change moves the version;
- cricket: a ball is an item of the `balls` stream; its whole delivery (`Item.ball`) is material,
  so a ball edited in place (a run turned into a leg bye, days later) is an amendment. The board's
  score is each side's runs in its latest innings, from the balls.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from domain.snapshot import Item, MatchState, Snapshot

MISSES_TO_RETRACT = 2
"""A removal must be seen on two consecutive full listings: one odd response retracts nothing."""

MATERIAL_FIELDS = (
    "type",
    "side",
    "player_id",
    "related_player_id",
    "minute",
    "extra_minute",
    "rescinded",
    "ball",
)

EventKey = tuple[str, int]


@dataclass(frozen=True)
class KnownEvent:
    """A stored `match_event` row, as much of it as the plan needs."""

    id: int
    body: Mapping[str, Any]
    body_hash: str
    missing_count: int
    retracted: bool
    first_seq: int | None


@dataclass(frozen=True)
class Board:
    """The scoreboard as stored (or as it starts)."""

    version: int = 0
    state: str = MatchState.SCHEDULED.value
    home: int = 0
    away: int = 0


@dataclass(frozen=True)
class Amendment:
    known: KnownEvent
    item: Item
    changed: tuple[str, ...]
    """Material fields that changed; empty for a quiet update (only stored, no log entry)."""
    restored: bool = False


@dataclass
class IngestPlan:
    """Everything one snapshot changes; empty when the provider showed nothing new."""

    inserts: list[Item] = field(default_factory=list)
    amendments: list[Amendment] = field(default_factory=list)
    quiet_updates: list[Amendment] = field(default_factory=list)
    seen_again: list[KnownEvent] = field(default_factory=list)
    misses: list[KnownEvent] = field(default_factory=list)
    retractions: list[KnownEvent] = field(default_factory=list)
    board: Board = field(default_factory=Board)
    state_changed: bool = False
    score_changed: bool = False


def item_body(item: Item) -> dict[str, Any]:
    return item.model_dump(mode="json")


def body_hash(body: Mapping[str, Any]) -> str:
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def snapshot_digest(snapshot: Snapshot) -> str:
    """A fingerprint of everything the ingest looks at: equal digests mean nothing to do."""
    return body_hash(snapshot.model_dump(mode="json"))


def plan(snapshot: Snapshot, known: Mapping[EventKey, KnownEvent], board: Board) -> IngestPlan:
    """Decide the entries `snapshot` adds to a log that already holds `known` and `board`."""
    result = IngestPlan()
    listed: set[EventKey] = set()
    for item in snapshot.items():
        key = (item.stream.value, item.provider_id)
        listed.add(key)
        stored = known.get(key)
        if stored is None:
            result.inserts.append(item)
            continue
        _compare(item, stored, result)

    present = {stream.value for stream in snapshot.present_streams()}
    for key, stored in known.items():
        if key in listed or key[0] not in present or stored.retracted:
            continue
        if stored.missing_count + 1 >= MISSES_TO_RETRACT:
            result.retractions.append(stored)
        else:
            result.misses.append(stored)

    result.board = _next_board(snapshot, board)
    result.state_changed = result.board.state != board.state
    result.score_changed = (result.board.home, result.board.away) != (board.home, board.away)
    return result


def _compare(item: Item, stored: KnownEvent, result: IngestPlan) -> None:
    body = item_body(item)
    if stored.retracted:
        result.amendments.append(Amendment(stored, item, _material_changes(stored.body, body), restored=True))
        return
    if stored.missing_count:
        result.seen_again.append(stored)
    if body_hash(body) == stored.body_hash:
        return
    changed = _material_changes(stored.body, body)
    target = result.amendments if changed else result.quiet_updates
    target.append(Amendment(stored, item, changed))


def _material_changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(name for name in MATERIAL_FIELDS if before.get(name) != after.get(name))


def _next_board(snapshot: Snapshot, board: Board) -> Board:
    """The provider's own score wins (it follows VAR); an absent `scores` relation keeps ours.

    A cricket score is each side's runs in its latest innings, from the board."""
    home, away = board.home, board.away
    if snapshot.cricket is not None:
        home, away = snapshot.cricket.runs_of("home"), snapshot.cricket.runs_of("away")
    elif snapshot.scores is not None:
        current = snapshot.scores.current
        home, away = (current.home, current.away) if current is not None else (0, 0)
    return Board(version=board.version, state=snapshot.state.value, home=home, away=away)
