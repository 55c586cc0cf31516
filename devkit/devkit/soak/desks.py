"""The soak's scorer desks: desk-scored matches played over the real command API.

Each desk scores its own fixture. A football desk plays a seeded variant of the demo's script
(goals, cards, subs, corners, commentary, a goal VAR takes back, a goal or corner undone, both
halves); every fourth desk scores cricket instead (two innings of a few overs: runs, boundaries,
extras, wickets, over ends, a ball undone, the chase ended once it passes the target). Either
script ends within `FULL_TIME_AT` desk-clock minutes, so a desk is done after that many times
`minute_seconds`.

Both go through the demo desk's sender (`devkit.devstack.demo_desk.Desk`), so the soak tests
the outbox rules a real desk app follows: a fresh key per command, the same key again after a lost
answer or `try_again`, a new key with `saw` refreshed after a conflict. The sender keeps resending
through any fault; the client moves to the next API process when one does not answer.

Every send and every answer goes into the desk's `DeskLedger`. `check` compares the ledgers with
what Postgres holds (`command`, `timeline_item`, `scoreboard`) through the pure `desk_violations`.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import asyncpg
import httpx
from pydantic import JsonValue

from devkit.devstack.demo_desk import (
    FULL_TIME_AT,
    HALF_TIME_AT,
    SECOND_HALF_AT,
    Desk,
    DeskMatch,
    Sent,
    Step,
    demo_draft,
    first_half,
    play,
    player,
    second_half,
)
from devkit.soak.model import CheckResult, SoakTargets, Violation
from domain import rules
from domain.commands import CommandAnswer, Outcome
from domain.cricket.desk_board import board_of
from domain.desk import match_state
from domain.rules import CommandShapeError, CricketState, Sport
from scoreline.accounts.desk_fixtures import FixtureDraft, create_fixture, lineups_of
from scoreline.accounts.store import create_desk
from scoreline.db.engine import create_engine
from scoreline.db.urls import asyncpg_dsn

CHECK = "desks"
MAX_ATTEMPTS = 1_000_000
"""Sends of one command before a desk gives up: never, within a soak (it is stopped instead)."""
HTTP_TIMEOUT = 15.0
"""Seconds a desk waits for one answer: longer than the API's own `try_again` deadline (5 s)."""
SCORERS = range(2, 9)
"""Shirts that score, assist and are booked: starters never substituted (subs take off 9-11), so
every scripted command is valid whatever the seed."""
SUBSTITUTIONS = ((9, 12), (10, 13), (11, 14))
"""(off, on) pairs a side may use, in order."""
SIDES = ("home", "away")
CRICKET_EVERY = 4
"""Every fourth desk scores cricket, the others football."""
LINEUPS = lineups_of(demo_draft().squads().model_dump(mode="json"))
"""Both sports' desk fixtures have the demo's squads: what the rules check players against."""


# --- the script ----------------------------------------------------------------------------------


def desk_script(rng: random.Random) -> tuple[Step, ...]:
    """One desk's match: the demo's shape with seeded goals, bookings, subs, corners and notes.

    Steps are built in groups that must stay together (a goal and the VAR review or undo of it), and
    the groups are ordered by minute; period starts and ends frame them."""
    groups: list[tuple[Step, ...]] = [
        (Step(first_half(0), "football.period_start", {"period": "1H"}),),
        (Step(HALF_TIME_AT, "football.period_end", {"period": "1H"}),),
        (Step(SECOND_HALF_AT, "football.period_start", {"period": "2H"}),),
        *_goals(rng),
        *_bookings(rng),
        *_substitutions(rng),
        *_corners(rng),
        *_commentary(rng),
    ]
    groups.sort(key=lambda group: group[0].at)
    steps = [step for group in groups for step in group]
    return (*steps, Step(FULL_TIME_AT, "football.period_end", {"period": "2H"}))


def _minute(rng: random.Random) -> tuple[int, int]:
    """A match minute and its desk-clock time, in either half (never on a period's first or last
    minute, so it falls strictly inside the period)."""
    if rng.random() < 0.5:
        minute = rng.randint(1, 44)
        return minute, first_half(minute)
    minute = rng.randint(46, 89)
    return minute, second_half(minute)


def _goals(rng: random.Random) -> list[tuple[Step, ...]]:
    """Two to five goals; one is taken back by VAR, one more may be undone as a scoring slip. A
    level score gets a late winner: a draw is not full time when the tie may go on to extra time."""
    goals: list[tuple[Step, ...]] = []
    count = rng.randint(2, 5)
    reviewed, undone = rng.sample(range(count), 2)
    undo_a_goal = rng.random() < 0.5
    standing: Counter[str] = Counter()
    for n in range(count):
        minute, at = _minute(rng)
        goal = _goal(rng, minute, at, f"goal-{n}")
        if n == reviewed:
            goals.append((goal, Step(at, "match.var", {"decision": "overturned"}, target=goal.label)))
        elif n == undone and undo_a_goal:
            goals.append((goal, Step(at, "match.undo", {}, target=goal.label)))
        else:
            goals.append((goal,))
            standing[str(goal.input["side"])] += 1
    if standing["home"] == standing["away"]:
        minute = rng.randint(80, 89)
        goals.append((_goal(rng, minute, second_half(minute), "winner"),))
    if not undo_a_goal:
        minute, at = _minute(rng)
        corner = Step(at, "football.corner", {"side": rng.choice(SIDES), "minute": minute}, label="slip")
        goals.append((corner, Step(at, "match.undo", {}, target="slip")))
    return goals


def _goal(rng: random.Random, minute: int, at: int, label: str) -> Step:
    side = rng.choice(SIDES)
    scorer, assist = rng.sample(SCORERS, 2)
    goal: dict[str, JsonValue] = {
        "side": side,
        "minute": minute,
        "player_id": player(side, scorer),
        "kind": rng.choice(("open_play", "penalty")),
    }
    if rng.random() < 0.5:
        goal["assist_id"] = player(side, assist)
    return Step(at, "football.goal", goal, label=label)


def _bookings(rng: random.Random) -> list[tuple[Step, ...]]:
    """Up to three yellow cards, each to a different player (a second one would need the rules'
    card sequence)."""
    booked = rng.sample([(side, shirt) for side in SIDES for shirt in SCORERS], rng.randint(0, 3))
    steps: list[tuple[Step, ...]] = []
    for side, shirt in booked:
        minute, at = _minute(rng)
        card: dict[str, JsonValue] = {
            "side": side,
            "minute": minute,
            "player_id": player(side, shirt),
            "color": "yellow",
        }
        steps.append((Step(at, "football.card", card),))
    return steps


def _substitutions(rng: random.Random) -> list[tuple[Step, ...]]:
    """Up to three second-half substitutions a side, in minute order (each player on once)."""
    steps: list[tuple[Step, ...]] = []
    for side in SIDES:
        pairs = SUBSTITUTIONS[: rng.randint(0, len(SUBSTITUTIONS))]
        minutes = sorted(rng.sample(range(46, 90), len(pairs)))
        for (off, on), minute in zip(pairs, minutes, strict=True):
            sub: dict[str, JsonValue] = {
                "side": side,
                "minute": minute,
                "player_on": player(side, on),
                "player_off": player(side, off),
            }
            steps.append((Step(second_half(minute), "football.substitution", sub),))
    return steps


def _corners(rng: random.Random) -> list[tuple[Step, ...]]:
    corners: list[tuple[Step, ...]] = []
    for _ in range(rng.randint(2, 8)):
        minute, at = _minute(rng)
        corners.append((Step(at, "football.corner", {"side": rng.choice(SIDES), "minute": minute}),))
    return corners


def _commentary(rng: random.Random) -> list[tuple[Step, ...]]:
    notes: list[tuple[Step, ...]] = []
    for n in range(rng.randint(1, 4)):
        minute, at = _minute(rng)
        notes.append((Step(at, "match.commentary", {"text": f"soak note {n}", "minute": minute}),))
    return notes


OVER = 6


def cricket_script(rng: random.Random) -> tuple[Step, ...]:
    """A two-innings match, one step a desk-clock minute: each side bats three to five overs (or
    until the chase passes the target); one ball somewhere is undone as a scoring slip."""
    steps: list[Step] = []
    first = rng.choice(SIDES)
    overs = rng.randint(3, 5)
    slip = rng.randrange(overs * OVER)
    target: int | None = None
    for batting in (first, "away" if first == "home" else "home"):
        steps.append(Step(0, "cricket.innings_start", {"batting": batting}))
        runs = _innings(rng, steps, overs, target, slip if target is None else -1)
        steps.append(Step(0, "cricket.innings_end", {}))
        target = runs
    return tuple(Step(at, step.code, step.input, step.label, step.target) for at, step in enumerate(steps))


def _innings(rng: random.Random, steps: list[Step], overs: int, beat: int | None, slip: int) -> int:
    """Append one innings' deliveries and over ends to `steps`; return its runs. `beat`: the
    runs to pass in a chase; `slip`: which legal ball gets undone (-1: none)."""
    runs = wickets = legal = 0
    while legal < overs * OVER:
        ball, scored, counts = _delivery(rng, wickets)
        if legal == slip and counts:
            steps.append(Step(0, "cricket.ball", ball, label="slip"))
            steps.append(Step(0, "match.undo", {}, target="slip"))
            slip = -1
            continue
        steps.append(Step(0, "cricket.ball", ball))
        runs += scored
        wickets += "wicket" in ball
        legal += counts
        if beat is not None and runs > beat:
            return runs
        if rng.random() < 0.05:
            steps.append(Step(0, "match.commentary", {"text": f"soak note at {runs}/{wickets}"}))
        if counts and legal % OVER == 0:
            steps.append(Step(0, "cricket.over_end", {}))
    return runs


def _delivery(rng: random.Random, wickets: int) -> tuple[dict[str, JsonValue], int, bool]:
    """One delivery: its input, the runs it adds to the total, and whether it is a legal ball. At
    most nine wickets fall, so a side is never all out before its overs are bowled."""
    roll = rng.random()
    if roll < 0.06 and wickets < 9:
        return {"runs": 0, "wicket": {"kind": rng.choice(("bowled", "caught", "lbw"))}}, 0, True
    if roll < 0.12:
        return {"extra": {"kind": "wide", "runs": 0}}, 1, False
    if roll < 0.16:
        return {"extra": {"kind": "leg_bye", "runs": 1}}, 1, True
    runs = rng.choice((0, 0, 1, 1, 1, 2, 3, 4, 6))
    ball: dict[str, JsonValue] = {"runs": runs}
    if runs in (4, 6):
        ball["boundary"] = "four" if runs == 4 else "six"
    return ball, runs, True


# --- the ledger ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class SendRecord:
    key: str
    body: Mapping[str, JsonValue]
    attempt: int
    """1 for a key's first send, 2 and up for its resends."""


@dataclass(frozen=True)
class AnswerRecord:
    key: str
    attempt: int
    status: int | None
    """The HTTP status; None when no answer came (connection refused, reset, timed out)."""
    answer: CommandAnswer | None
    """None when no answer came or its body was no command answer (a 500, a 422)."""


@dataclass
class DeskLedger:
    """Everything one desk sent and heard, in order: the `SendObserver` of its sender."""

    fixture_id: int
    sport: Sport = "football"
    sends: list[SendRecord] = field(default_factory=list)
    answers: list[AnswerRecord] = field(default_factory=list)
    results: list[Sent] = field(default_factory=list)
    """How each scripted step ended, once the script has played."""
    stopped_by: str | None = None
    """An error that stopped the desk (never a fault of the stack: those it rides out)."""
    _attempts: Counter[str] = field(default_factory=Counter, init=False, repr=False)

    def sent(self, key: str, body: Mapping[str, JsonValue]) -> None:
        self._attempts[key] += 1
        self.sends.append(SendRecord(key, body, self._attempts[key]))

    def answered(self, key: str, status: int | None, answer: CommandAnswer | None) -> None:
        self.answers.append(AnswerRecord(key, self._attempts[key], status, answer))


def heard_accepted(answer: CommandAnswer) -> int | None:
    """The seq an answer tells the desk its command was logged at: its own, or its duplicate's."""
    if answer.outcome is Outcome.DUPLICATE and answer.answer is not None:
        answer = answer.answer
    return answer.seq if answer.outcome is Outcome.ACCEPTED else None


def ledger_figures(ledgers: Iterable[DeskLedger]) -> dict[str, int]:
    """The run's desk figures: desks, commands (keys), sends, resends, duplicates, conflicts."""
    ledgers = list(ledgers)
    sends = [send for ledger in ledgers for send in ledger.sends]
    outcomes = Counter(
        record.answer.outcome for ledger in ledgers for record in ledger.answers if record.answer is not None
    )
    return {
        "desks": len(ledgers),
        "commands": len({send.key for send in sends}),
        "sends": len(sends),
        "resends": sum(1 for send in sends if send.attempt > 1),
        "duplicates": outcomes[Outcome.DUPLICATE],
        "conflicts": outcomes[Outcome.CONFLICT],
    }


# --- what Postgres holds, and the rules ----------------------------------------------------------


@dataclass(frozen=True)
class StoredCommand:
    key: str
    outcome: str
    seq: int | None
    answer: Mapping[str, Any]
    """`command.answer`: the first answer, which every duplicate must carry."""


@dataclass(frozen=True)
class LogEntry:
    seq: int
    command_id: str | None


@dataclass(frozen=True)
class StoredBoard:
    state: str
    home: int
    away: int


@dataclass(frozen=True)
class StoredMatch:
    commands: Mapping[str, StoredCommand]
    log: Sequence[LogEntry]
    board: StoredBoard | None


def desk_violations(ledger: DeskLedger, stored: StoredMatch) -> list[Violation]:
    """Every broken guarantee of one desk match, from its ledger and its rows."""
    return [
        *_stopped(ledger),
        *_logged_once(ledger, stored),
        *_answers_agree(ledger, stored),
        *_nothing_unsent(ledger, stored),
        *_not_as_scripted(ledger),
        *_match_ended(ledger, stored),
    ]


def _violation(subject: str, detail: str) -> Violation:
    return Violation(CHECK, subject, detail)


def _stopped(ledger: DeskLedger) -> list[Violation]:
    if ledger.stopped_by is None:
        return []
    return [_violation(f"fixture {ledger.fixture_id}", f"the desk stopped: {ledger.stopped_by}")]


def _accepted_seqs(ledger: DeskLedger, stored: StoredMatch) -> dict[str, set[int]]:
    """Each accepted key's seqs: as the desk heard them, and as the command table has them."""
    seqs: dict[str, set[int]] = {}
    for record in ledger.answers:
        seq = None if record.answer is None else heard_accepted(record.answer)
        if seq is not None:
            seqs.setdefault(record.key, set()).add(seq)
    for command in stored.commands.values():
        if command.outcome == Outcome.ACCEPTED.value and command.seq is not None:
            seqs.setdefault(command.key, set()).add(command.seq)
    return seqs


def _logged_once(ledger: DeskLedger, stored: StoredMatch) -> list[Violation]:
    """An accepted command is in the match's log exactly once, at the seq it was answered with."""
    violations = []
    for key, seqs in _accepted_seqs(ledger, stored).items():
        logged = sorted(entry.seq for entry in stored.log if entry.command_id == key)
        if logged != sorted(seqs):
            violations.append(
                _violation(f"key {key}", f"accepted at seq {sorted(seqs)}, in the log at seq {logged}")
            )
    return violations


def _answers_agree(ledger: DeskLedger, stored: StoredMatch) -> list[Violation]:
    """Every answer to a key is its first answer: a duplicate carries it as it was stored, and a
    fresh answer (the first, or a resend joining the update still in flight) says the same."""
    violations = []
    for record in ledger.answers:
        answer = record.answer
        if answer is None or answer.outcome is Outcome.TRY_AGAIN:
            continue
        first = stored.commands.get(record.key)
        subject = f"key {record.key}"
        if first is None:
            violations.append(_violation(subject, f"answered {answer.outcome} but no command row holds it"))
        elif answer.outcome is Outcome.DUPLICATE:
            carried = None if answer.answer is None else answer.answer.body()
            if carried != dict(first.answer):
                violations.append(
                    _violation(
                        subject, f"duplicate carried {carried}, the first answer was {dict(first.answer)}"
                    )
                )
        elif (answer.outcome.value, answer.seq) != (first.outcome, first.seq):
            violations.append(
                _violation(
                    subject,
                    f"send {record.attempt} answered {answer.outcome} seq {answer.seq}, "
                    f"the first answer was {first.outcome} seq {first.seq}",
                )
            )
    return violations


def _nothing_unsent(ledger: DeskLedger, stored: StoredMatch) -> list[Violation]:
    """No command row and no log entry of the desk's match that the desk did not send."""
    sent = {send.key for send in ledger.sends}
    violations = [
        _violation(f"key {key}", "stored as a command of the match, never sent by its desk")
        for key in stored.commands
        if key not in sent
    ]
    violations.extend(
        _violation(
            f"fixture {ledger.fixture_id}", f"log entry {entry.seq} has key {entry.command_id}, never sent"
        )
        for entry in stored.log
        if entry.command_id not in sent
    )
    return violations


def _not_as_scripted(ledger: DeskLedger) -> list[Violation]:
    """The script is valid whatever the seed, so a step not accepted means the stack lost or
    misjudged something (a refusal for a command it should have had, a 500, a skipped target)."""
    return [
        _violation(
            f"fixture {ledger.fixture_id}",
            f"{sent.step.code} at minute {sent.step.at} ended {sent.outcome}"
            + (f" ({sent.reason})" if sent.reason else ""),
        )
        for sent in ledger.results
        if not sent.as_scripted
    ]


@dataclass(frozen=True)
class ImpliedBoard:
    state: str
    home: int
    away: int


def implied_board(ledger: DeskLedger, stored: StoredMatch) -> ImpliedBoard | str:
    """Where the accepted commands leave the match: each replayed, in seq order, through the same
    sport rules the workflow runs. A string when one does not replay (a refusal, a bad shape):
    then the log holds commands that do not follow from one another."""
    bodies = {send.key: send.body for send in ledger.sends}
    accepted = sorted(
        (min(seqs), bodies[key]) for key, seqs in _accepted_seqs(ledger, stored).items() if key in bodies
    )
    state = rules.initial_state(ledger.sport, "desk", LINEUPS)
    for seq, body in accepted:
        try:
            command = rules.parse_command(str(body["code"]), body["input"])
        except CommandShapeError as error:
            return f"seq {seq} does not parse: {error}"
        refusal = rules.check(state, command)
        if refusal is not None:
            return f"seq {seq} {command.code} does not replay: {refusal.code}"
        state = rules.step(state, command, seq)
    if isinstance(state, CricketState):
        board = board_of(state)
        return ImpliedBoard(match_state(state).value, board.runs_of("home"), board.runs_of("away"))
    return ImpliedBoard(match_state(state).value, state.game.score.home, state.game.score.away)


def _match_ended(ledger: DeskLedger, stored: StoredMatch) -> list[Violation]:
    """The match reached full time, its board showing the score the accepted commands make."""
    subject = f"fixture {ledger.fixture_id}"
    board = stored.board
    if board is None:
        return [_violation(subject, "no scoreboard")]
    violations = []
    if board.state != "finished":
        violations.append(_violation(subject, f"ended {board.state}, not at full time"))
    implied = implied_board(ledger, stored)
    if isinstance(implied, str):
        violations.append(_violation(subject, implied))
    elif (board.state, board.home, board.away) != (implied.state, implied.home, implied.away):
        violations.append(
            _violation(
                subject,
                f"board shows {board.state} {board.home}-{board.away}, "
                f"the accepted commands {implied.state} {implied.home}-{implied.away}",
            )
        )
    return violations


# --- the part ------------------------------------------------------------------------------------


class RotatingTransport(httpx.AsyncBaseTransport):
    """Sends every request to the current API process; when one does not answer, the next request
    goes to the next one (the failing request itself is not retried here: the desk resends it,
    with the same key, and its ledger sees both sends)."""

    def __init__(self, urls: Sequence[str], inner: httpx.AsyncBaseTransport) -> None:
        self._urls = [httpx.URL(url) for url in urls]
        self._inner = inner
        self._current = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        current = self._current
        target = self._urls[current]
        request.url = request.url.copy_with(scheme=target.scheme, host=target.host, port=target.port)
        request.headers["Host"] = target.netloc.decode()
        try:
            return await self._inner.handle_async_request(request)
        except httpx.TransportError:
            # Many requests in flight fail together when a process dies: move on once, not once each.
            if self._current == current:
                self._current = (current + 1) % len(self._urls)
            raise

    async def aclose(self) -> None:
        await self._inner.aclose()


def desk_draft(sport: Sport) -> FixtureDraft:
    """The demo's fixture, kicking off now, in `sport` (its squads serve as a cricket XI too)."""
    draft = demo_draft(datetime.now(UTC))
    return FixtureDraft.model_validate({**draft.model_dump(), "sport": sport, "competition": "Soak"})


@dataclass(frozen=True)
class _DeskRun:
    match: DeskMatch
    script: tuple[Step, ...]
    ledger: DeskLedger


class DeskPart:
    """`desks` scorer desks, each scoring its own match (football, every fourth one cricket) over
    the command API."""

    name = CHECK

    def __init__(self, targets: SoakTargets, rng: random.Random, desks: int, minute_seconds: float) -> None:
        self._targets = targets
        self._rng = rng
        self._desks = desks
        self._minute_seconds = minute_seconds
        self._runs: list[_DeskRun] = []

    async def create_matches(self) -> list[int]:
        """The desk fixtures (kicking off now) and one desk account each, straight in Postgres."""
        engine = create_engine(self._targets.database_url, pool_size=1)
        try:
            for n in range(self._desks):
                sport: Sport = "cricket" if n % CRICKET_EVERY == CRICKET_EVERY - 1 else "football"
                fixture_id = await create_fixture(engine, desk_draft(sport))
                _, token = await create_desk(engine, f"soak desk {fixture_id}", [fixture_id])
                script = cricket_script(self._rng) if sport == "cricket" else desk_script(self._rng)
                self._runs.append(
                    _DeskRun(DeskMatch(fixture_id, token), script, DeskLedger(fixture_id, sport))
                )
        finally:
            await engine.dispose()
        return [run.match.fixture_id for run in self._runs]

    async def run(self, stop: asyncio.Event) -> None:
        """Play every desk's script until it ends or `stop` is set; then stop them all."""
        transport = RotatingTransport(self._targets.api_urls, httpx.AsyncHTTPTransport())
        async with httpx.AsyncClient(
            base_url=self._targets.api_urls[0], transport=transport, timeout=HTTP_TIMEOUT
        ) as http:
            tasks = [asyncio.create_task(self._play(http, run)) for run in self._runs]
            await stop.wait()
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _play(self, http: httpx.AsyncClient, run: _DeskRun) -> None:
        counter = iter(range(1, 10**9))
        bits = self._rng.getrandbits

        def new_key() -> str:
            return f"soak-{run.match.fixture_id}-{next(counter)}-{bits(48):012x}"

        desk = Desk(http, run.match, observer=run.ledger, new_key=new_key, max_attempts=MAX_ATTEMPTS)
        try:
            run.ledger.results.extend(
                await play(desk, minute_seconds=self._minute_seconds, script=run.script)
            )
        except Exception as error:  # noqa: BLE001 - the check reports it; the other desks go on
            run.ledger.stopped_by = repr(error)

    async def check(self) -> CheckResult:
        db = await asyncpg.connect(asyncpg_dsn(self._targets.database_url))
        try:
            stored = [await _stored_match(db, run.match.fixture_id) for run in self._runs]
        finally:
            await db.close()
        ledgers = [run.ledger for run in self._runs]
        violations = [
            v for ledger, match in zip(ledgers, stored, strict=True) for v in desk_violations(ledger, match)
        ]
        figures = ledger_figures(ledgers)
        return CheckResult(CHECK, checked=figures["commands"], violations=tuple(violations), figures=figures)


async def _stored_match(db: asyncpg.Connection, fixture_id: int) -> StoredMatch:
    commands = await db.fetch(
        "SELECT command_id, outcome, seq, answer::text AS answer FROM command WHERE fixture_id = $1",
        fixture_id,
    )
    log = await db.fetch(
        "SELECT seq, command_id FROM timeline_item WHERE fixture_id = $1 ORDER BY seq", fixture_id
    )
    board = await db.fetchrow(
        "SELECT state, home_score, away_score FROM scoreboard WHERE fixture_id = $1", fixture_id
    )
    return StoredMatch(
        commands={
            row["command_id"]: StoredCommand(
                row["command_id"], row["outcome"], row["seq"], json.loads(row["answer"])
            )
            for row in commands
        },
        log=[LogEntry(row["seq"], row["command_id"]) for row in log],
        board=None
        if board is None
        else StoredBoard(board["state"], board["home_score"], board["away_score"]),
    )
