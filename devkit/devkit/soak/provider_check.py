"""The provider matches' outcome: what Postgres holds for each recorded fixture against its
`.expected.json`, after a soak played the recordings through every fault.

Per fixture: every expected provider event (football's `events`/`timeline` streams, cricket's
`balls`) stored exactly once and logged once, nothing stored that the outcome does not name, every
correction applied (football's retracted events retracted, cricket's amended balls amended and no
others), the final board equal to the outcome (state and score; cricket's innings, result, super
over and chase target), and a log without gaps whose last seq is the board's version. Once per
run: the unique constraint that makes an event's storage exactly-once is in place.

The outcome assumes every recorded line was seen. A soak's faults can hide a passing state: an
event the provider showed for a moment and then replaced (absent from the fixture's last line) may
never have been stored, and a ball edited while every worker was down is first stored already
edited, with no amendment to log. `Fleeting` names those states from the recordings; they are
excused only when the rows prove Scoreline could not have seen them (never stored at all; first
stored after the edit, by the simulator's replay clock), never when stored twice.

The rules are pure functions of `Expected*`, `Fleeting` and `StoredFixture`; `check_provider` only reads.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg

from activities.provider.codes import STATES_BY_DEVELOPER_NAME
from activities.provider.cricket.statuses import cricket_state
from devkit.simulators.provider.recording import load_recording
from devkit.simulators.provider.recording_file import recording_name
from devkit.soak.model import CheckResult, Violation
from domain.cricket.board import CricketBoard, cricket_fixture_id
from scoreline.db.urls import asyncpg_dsn

CHECK = "provider"
EVENT_KEY_COLUMNS = ("fixture_id", "stream", "provider_event_id")
"""The columns of `match_event`'s unique constraint: one row per provider event, whatever retries."""

EventKey = tuple[str, int]


@dataclass(frozen=True)
class ExpectedFootball:
    fixture_id: int
    state: str
    """The normalised final state (`finished` for the provider's `FT`)."""
    home: int
    away: int
    events: frozenset[EventKey]
    retracted: frozenset[EventKey]


@dataclass(frozen=True)
class ExpectedCricket:
    fixture_id: int
    state: str
    balls: frozenset[int]
    amended: frozenset[int]
    innings: tuple[Mapping[str, Any], ...]
    result_kind: str | None
    winner_team_id: int | None
    super_over: bool
    target: int | None


Expected = ExpectedFootball | ExpectedCricket


@dataclass(frozen=True)
class Fleeting:
    """One fixture's passing provider states (see the module docstring)."""

    events: frozenset[EventKey] = frozenset()
    """Expected events missing from the fixture's last recorded line."""
    edited_at: Mapping[int, float] = field(default_factory=dict)
    """Ball id → replay time of the first line showing it edited."""


@dataclass(frozen=True)
class ReplayClock:
    """The provider simulator's clock: wall-clock epoch of replay `t = 0`, replay seconds per second."""

    zero: float
    speed: float

    def wall(self, t: float) -> float:
        return self.zero + t / self.speed


@dataclass(frozen=True)
class StoredEvent:
    stream: str
    provider_event_id: int
    retracted: bool
    logged: int
    """How many `event` entries of the log name this row (one: it was first seen once)."""
    amendments: int
    retractions: int
    first_seen: float = 0.0
    """Epoch seconds the row was first stored."""

    @property
    def key(self) -> EventKey:
        return (self.stream, self.provider_event_id)


@dataclass(frozen=True)
class StoredBoard:
    state: str
    home: int
    away: int
    version: int
    cricket: Mapping[str, Any] | None


@dataclass(frozen=True)
class StoredFixture:
    events: Sequence[StoredEvent]
    seqs: Sequence[int]
    board: StoredBoard | None


# --- the recordings' outcomes --------------------------------------------------------------------


def expected_path(recording: Path) -> Path:
    """`NAME.jsonl` / `NAME.jsonl.gz` → `NAME.expected.json` beside it."""
    return recording.with_name(f"{recording_name(recording)}.expected.json")


def parse_outcome(provider_id: str, outcome: Mapping[str, Any]) -> Expected:
    """One fixture's entry: cricket's entries list `balls`, football's `events`."""
    if "balls" in outcome:
        return ExpectedCricket(
            fixture_id=cricket_fixture_id(int(provider_id)),
            state=cricket_state(outcome["status"]).value,
            balls=frozenset(outcome["balls"]),
            amended=frozenset(outcome["amended"]),
            innings=tuple(outcome["innings"]),
            result_kind=outcome.get("result_kind"),
            winner_team_id=outcome.get("winner_team_id"),
            super_over=bool(outcome.get("super_over")),
            target=outcome.get("target"),
        )
    return ExpectedFootball(
        fixture_id=int(provider_id),
        state=STATES_BY_DEVELOPER_NAME[outcome["state"]].state.value,
        home=outcome["score"]["home"],
        away=outcome["score"]["away"],
        events=frozenset((stream, event_id) for stream, event_id in outcome["events"]),
        retracted=frozenset((stream, event_id) for stream, event_id in outcome["retracted"]),
    )


def load_expected(recordings: Iterable[Path]) -> dict[int, Expected]:
    """Every recorded fixture's outcome by Scoreline id. A fixture in two recordings (the bundled
    `football-three-matches` replays `football-basic`'s) must be expected alike in both."""
    found: dict[int, Expected] = {}
    for recording in recordings:
        entries: dict[str, Any] = json.loads(expected_path(recording).read_text())
        for provider_id, outcome in entries.items():
            expected = parse_outcome(provider_id, outcome)
            if found.setdefault(expected.fixture_id, expected) != expected:
                raise ValueError(f"fixture {expected.fixture_id} is expected differently in {recording}")
    return found


def provider_fixture_ids(recordings: Sequence[Path]) -> list[int]:
    """The Scoreline ids of the recordings' fixtures (cricket's offset applied), each once."""
    return list(load_expected(recordings))


# --- the rules -----------------------------------------------------------------------------------


def _violation(fixture_id: int, detail: str) -> Violation:
    return Violation(CHECK, f"fixture {fixture_id}", detail)


def fixture_violations(
    expected: Expected,
    stored: StoredFixture,
    fleeting: Fleeting = Fleeting(),
    clock: ReplayClock | None = None,
) -> list[Violation]:
    """Every way one fixture's rows differ from its recording's outcome."""
    if isinstance(expected, ExpectedFootball):
        live, retracted = expected.events, expected.retracted
        board = _football_board(expected, stored.board)
        corrections = _retractions(expected.fixture_id, stored, retracted)
    else:
        live, retracted = frozenset(("balls", ball) for ball in expected.balls), frozenset()
        board = _cricket_board(expected, stored.board)
        corrections = _amendments(expected, stored, fleeting, clock)
    return [
        *_stored_once(expected.fixture_id, stored, live | retracted, fleeting.events),
        *_nothing_else(expected.fixture_id, stored, live, retracted),
        *corrections,
        *board,
        *_gapless(expected.fixture_id, stored),
    ]


def _stored_once(
    fixture_id: int, stored: StoredFixture, wanted: frozenset[EventKey], fleeting: frozenset[EventKey]
) -> list[Violation]:
    """Each expected event is one row, logged by exactly one `event` entry (a fleeting one may
    also never have been seen)."""
    rows = Counter(event.key for event in stored.events)
    logged = {event.key: event.logged for event in stored.events}
    violations = []
    for key in sorted(wanted):
        name = f"{key[0]}/{key[1]}"
        if rows[key] == 0 and key in fleeting:
            continue
        if rows[key] != 1:
            violations.append(_violation(fixture_id, f"{name} stored {rows[key]} times"))
        elif logged[key] != 1:
            violations.append(_violation(fixture_id, f"{name} logged {logged[key]} times"))
    return violations


def _nothing_else(
    fixture_id: int, stored: StoredFixture, live: frozenset[EventKey], retracted: frozenset[EventKey]
) -> list[Violation]:
    """No stored event the outcome does not name, and none retracted that it keeps."""
    violations = []
    for event in stored.events:
        name = f"{event.stream}/{event.provider_event_id}"
        if event.key not in live | retracted:
            violations.append(_violation(fixture_id, f"{name} stored, not in the recording's outcome"))
        elif event.key in live and event.retracted:
            violations.append(_violation(fixture_id, f"{name} retracted, the outcome keeps it"))
    return violations


def _retractions(fixture_id: int, stored: StoredFixture, retracted: frozenset[EventKey]) -> list[Violation]:
    """Each event the provider took back is retracted, by an entry of the log."""
    by_key = {event.key: event for event in stored.events}
    violations = []
    for key in sorted(retracted):
        event = by_key.get(key)
        if event is not None and not (event.retracted and event.retractions >= 1):
            violations.append(
                _violation(
                    fixture_id,
                    f"{key[0]}/{key[1]} not retracted ({event.retractions} retraction entries)",
                )
            )
    return violations


def _amendments(
    expected: ExpectedCricket, stored: StoredFixture, fleeting: Fleeting, clock: ReplayClock | None
) -> list[Violation]:
    """Exactly the balls the provider edited have amendment entries (one first stored after its
    edit had no earlier version to amend)."""
    amended = {event.provider_event_id for event in stored.events if event.amendments > 0}
    first_seen = {event.provider_event_id: event.first_seen for event in stored.events}

    def seen_edited(ball: int) -> bool:
        edited = fleeting.edited_at.get(ball)
        return clock is not None and edited is not None and first_seen.get(ball, 0.0) >= clock.wall(edited)

    violations = [
        _violation(expected.fixture_id, f"balls/{ball} edited by the provider, never amended")
        for ball in sorted(expected.amended - amended)
        if not seen_edited(ball)
    ]
    violations.extend(
        _violation(expected.fixture_id, f"balls/{ball} amended, the provider never edited it")
        for ball in sorted(amended - expected.amended)
    )
    return violations


def _football_board(expected: ExpectedFootball, board: StoredBoard | None) -> list[Violation]:
    if board is None:
        return [_violation(expected.fixture_id, "no scoreboard")]
    want = (expected.state, expected.home, expected.away)
    got = (board.state, board.home, board.away)
    if got == want:
        return []
    return [
        _violation(
            expected.fixture_id, f"board {got[0]} {got[1]}-{got[2]}, expected {want[0]} {want[1]}-{want[2]}"
        )
    ]


def innings_outcome(board: CricketBoard) -> list[dict[str, Any]]:
    """The board's innings in the shape of the recordings' `.expected.json`."""
    return [
        {
            "scoreboard": innings.scoreboard,
            "team_id": innings.team_id,
            "runs": innings.runs,
            "wickets": innings.wickets,
            "overs": float(innings.overs),
        }
        for innings in board.innings
    ]


def _cricket_board(expected: ExpectedCricket, board: StoredBoard | None) -> list[Violation]:
    if board is None or board.cricket is None:
        return [_violation(expected.fixture_id, "no cricket scoreboard")]
    cricket = CricketBoard.model_validate(board.cricket)
    result = cricket.result
    chase = cricket.innings[-1].target if cricket.innings else None
    compared: list[tuple[str, object, object]] = [
        ("state", board.state, expected.state),
        ("innings", innings_outcome(cricket), [dict(innings) for innings in expected.innings]),
        ("result", None if result is None else result.kind, expected.result_kind),
        ("winner", None if result is None else result.winner_team_id, expected.winner_team_id),
        ("super over", cricket.super_over, expected.super_over),
    ]
    if expected.target is not None:
        compared.append(("target", chase, expected.target))
    return [
        _violation(expected.fixture_id, f"{what} {got}, expected {want}")
        for what, got, want in compared
        if got != want
    ]


def _gapless(fixture_id: int, stored: StoredFixture) -> list[Violation]:
    """The log is seqs 1..n and the board shows version n."""
    violations = []
    if list(stored.seqs) != list(range(1, len(stored.seqs) + 1)):
        missing = sorted(set(range(1, max(stored.seqs, default=0) + 1)) - set(stored.seqs))
        violations.append(
            _violation(fixture_id, f"the log has gaps or repeats (missing seqs {missing[:10]})")
        )
    last = max(stored.seqs, default=0)
    if stored.board is not None and stored.board.version != last:
        violations.append(_violation(fixture_id, f"board version {stored.board.version}, last seq {last}"))
    return violations


def constraint_violations(constraints: Iterable[Sequence[str]]) -> list[Violation]:
    """`constraints`: the column lists of `match_event`'s unique constraints."""
    if any(tuple(columns) == EVENT_KEY_COLUMNS for columns in constraints):
        return []
    return [Violation(CHECK, "match_event", f"no unique constraint on {EVENT_KEY_COLUMNS}")]


def figures(expected: Iterable[Expected]) -> dict[str, int]:
    outcomes = list(expected)
    return {
        "fixtures": len(outcomes),
        "events": sum(len(e.events) + len(e.retracted) for e in outcomes if isinstance(e, ExpectedFootball)),
        "balls": sum(len(e.balls) for e in outcomes if isinstance(e, ExpectedCricket)),
    }


# --- Postgres ------------------------------------------------------------------------------------


async def check_provider(
    database_url: str, recordings: Sequence[Path], clock: ReplayClock | None = None
) -> CheckResult:
    """The provider check's row of the table, from Postgres and the recordings' outcomes."""
    expected = load_expected(recordings)
    passing = fleeting_states(recordings)
    db = await asyncpg.connect(asyncpg_dsn(database_url))
    try:
        violations = constraint_violations(await _unique_constraints(db))
        for outcome in expected.values():
            stored = await stored_fixture(db, outcome.fixture_id)
            fleeting = passing.get(outcome.fixture_id, Fleeting())
            violations.extend(fixture_violations(outcome, stored, fleeting, clock))
    finally:
        await db.close()
    counts = figures(expected.values())
    return CheckResult(
        CHECK, checked=counts["events"] + counts["balls"], violations=tuple(violations), figures=counts
    )


async def _unique_constraints(db: asyncpg.Connection) -> list[list[str]]:
    rows = await db.fetch(
        """SELECT array_agg(a.attname::text ORDER BY k.n) AS columns
           FROM pg_constraint c
           CROSS JOIN LATERAL unnest(c.conkey) WITH ORDINALITY AS k(attnum, n)
           JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum
           WHERE c.conrelid = 'match_event'::regclass AND c.contype IN ('u', 'p')
           GROUP BY c.oid"""
    )
    return [list(row["columns"]) for row in rows]


async def stored_fixture(db: asyncpg.Connection, fixture_id: int) -> StoredFixture:
    """One fixture's events with their log entries, its seqs and its board."""
    events = await db.fetch(
        """SELECT e.stream, e.provider_event_id, e.retracted_at IS NOT NULL AS retracted,
                  count(t.id) FILTER (WHERE t.kind = 'event') AS logged,
                  count(t.id) FILTER (WHERE t.kind = 'amendment') AS amendments,
                  count(t.id) FILTER (WHERE t.kind = 'retraction') AS retractions,
                  extract(epoch FROM e.first_seen_at)::float8 AS first_seen
           FROM match_event e LEFT JOIN timeline_item t ON t.match_event_id = e.id
           WHERE e.fixture_id = $1 GROUP BY e.id""",
        fixture_id,
    )
    seqs = await db.fetch("SELECT seq FROM timeline_item WHERE fixture_id = $1 ORDER BY seq", fixture_id)
    board = await db.fetchrow(
        """SELECT state, home_score, away_score, version, (body->'cricket')::text AS cricket
           FROM scoreboard WHERE fixture_id = $1""",
        fixture_id,
    )
    return StoredFixture(
        events=[
            StoredEvent(
                row["stream"],
                row["provider_event_id"],
                row["retracted"],
                row["logged"],
                row["amendments"],
                row["retractions"],
                row["first_seen"],
            )
            for row in events
        ],
        seqs=[row["seq"] for row in seqs],
        board=None if board is None else _board(board),
    )


def _board(row: asyncpg.Record) -> StoredBoard:
    cricket = None if row["cricket"] is None else json.loads(row["cricket"])
    return StoredBoard(row["state"], row["home_score"], row["away_score"], row["version"], cricket)


# --- the recordings' passing states ----------------------------------------------------------------


def fleeting_states(recordings: Sequence[Path]) -> dict[int, Fleeting]:
    """Per Scoreline fixture id, the passing states its recording shows."""
    found: dict[int, Fleeting] = {}
    for path in recordings:
        recording = load_recording(path)
        lines: dict[int, list[tuple[float, Mapping[str, Any]]]] = {}
        for line in recording.fixtures:
            lines.setdefault(int(line.fixture["id"]), []).append((line.t, line.fixture))
        for provider_id, history in lines.items():
            if recording.sport == "cricket":
                found[cricket_fixture_id(provider_id)] = Fleeting(edited_at=_edits(history))
            else:
                found[provider_id] = Fleeting(events=_replaced(history))
    return found


def _event_keys(fixture: Mapping[str, Any]) -> set[EventKey]:
    return {
        (stream, int(item["id"])) for stream in ("events", "timeline") for item in fixture.get(stream) or []
    }


def _replaced(history: Sequence[tuple[float, Mapping[str, Any]]]) -> frozenset[EventKey]:
    """Events some line showed that the last line no longer does."""
    shown = set().union(*(_event_keys(fixture) for _, fixture in history))
    return frozenset(shown - _event_keys(history[-1][1]))


def _edits(history: Sequence[tuple[float, Mapping[str, Any]]]) -> dict[int, float]:
    """Ball id → the first time a line shows it differently from its first version."""
    first: dict[int, str] = {}
    edited: dict[int, float] = {}
    for t, fixture in history:
        for ball in fixture.get("balls") or []:
            body = json.dumps(ball, sort_keys=True)
            ball_id = int(ball["id"])
            if ball_id not in first:
                first[ball_id] = body
            elif body != first[ball_id] and ball_id not in edited:
                edited[ball_id] = t
    return edited
