"""The demo's fourth match: one no provider knows, scored by a scripted scorer desk over HTTP.

Once the stack is ready, `run_demo_desk` creates a desk-scored football fixture ("Oakwood School
vs Brookside College", kickoff now, two squads of 16) and a desk allowed to score it, straight
through `scoreline.accounts` on the stack's database (no operator needed). Then it plays `SCRIPT`
through `POST /v1/matches/{id}/commands` like a real desk app: a fresh key per command, `saw` = the
last seq it was answered with, the same key again after `try_again` (or a lost answer), and after a
`conflict` a new key with `saw` re-read from the entries it had missed.

It prints where the scorer desk app (`/desk/{id}`) and the operator console (`/console`) show the
match, with a desk token and an operator token to sign in with; a person can score alongside the
script (a tap that meets the script's on the same `saw` shows the desk's conflict panel).

The script runs on the demo's clock: a match minute lasts `60 / speed` seconds (one second at 60x,
like the provider's replays), half time included. The desk prints nothing but one line per refused
or unexpected answer; the monitor shows the match like the others. A desk-scored match's view has
no running minute (only a provider sends one), so the desk shares its clock with the monitor.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol

import httpx
from pydantic import JsonValue, ValidationError
from sqlalchemy.ext.asyncio import AsyncEngine

from domain.commands import CommandAnswer, Outcome
from scoreline.accounts.desk_fixtures import FixtureDraft, create_fixture
from scoreline.accounts.store import create_desk, create_operator
from scoreline.db.engine import create_engine

if TYPE_CHECKING:
    from devkit.devstack.monitor import AnnouncedMatches
    from devkit.devstack.stack import DevStack

HOME = "Oakwood School"
AWAY = "Brookside College"
HOME_NAMES = (
    "Sam Okafor", "Leo Brandt", "Jonah Reyes", "Theo Marsh", "Ayo Bello", "Finn Kowalski",
    "Max Turner", "Ravi Chand", "Oscar Lund", "Kai Mensah", "Noah Price", "Eli Fraser",
    "Idris Cole", "Ben Achterberg", "Luca Moretti", "Zach Whitfield",
)  # fmt: skip
AWAY_NAMES = (
    "Tom Hale", "Arjun Mehta", "Jack Doyle", "Isaac Nwosu", "Ollie Grant", "Dan Petrov",
    "Hugo Lemaire", "Ethan Shaw", "Milo Duarte", "Caleb Frost", "Will Hartley", "Rory Quinn",
    "Adam Sokol", "Felix Barr", "Nico Alves", "Harry Lim",
)  # fmt: skip
HOME_BASE, AWAY_BASE = 100, 200
"""Player ids: home 101-116, away 201-216; shirt numbers 1-16, numbers 1-11 start."""

DEMO_MINUTE_SECONDS_AT_1X = 60.0
HALF_TIME_AT = 46
"""Desk-clock minute the first half ends (45 + 1 added); then 15 minutes of half time."""
SECOND_HALF_AT = HALF_TIME_AT + 15
FULL_TIME_AT = SECOND_HALF_AT + 48
"""The second half ends at 90 + 3."""

MAX_ATTEMPTS = 30
"""Sends of one command (resends after try_again or a lost answer, new keys after conflicts)."""
LOST_ANSWER_WAIT = 1.0
"""Seconds before resending the same key when the API did not answer at all."""
HTTP_TIMEOUT = 30.0
GATEWAY_STATUSES = frozenset({502, 503, 504})
"""Answers without a command answer that mean "not taken now": resent with the same key."""


def player(side: str, shirt: int) -> int:
    """The id of the player wearing `shirt` for `side` in the demo squads."""
    return (HOME_BASE if side == "home" else AWAY_BASE) + shirt


def _squad(side: str, names: tuple[str, ...]) -> list[dict[str, Any]]:
    return [
        {"id": player(side, n), "name": name, "shirt_number": n, "starting": n <= 11}
        for n, name in enumerate(names, start=1)
    ]


def demo_draft(kickoff: datetime | None = None) -> FixtureDraft:
    """The desk fixture: a schools' cup tie no provider covers, kicking off now."""
    return FixtureDraft.model_validate(
        {
            "sport": "football",
            "home": {"name": HOME, "short_code": "OAK", "players": _squad("home", HOME_NAMES)},
            "away": {"name": AWAY, "short_code": "BRO", "players": _squad("away", AWAY_NAMES)},
            "kickoff": kickoff or datetime.now(UTC),
            "mode": "desk",
            "competition": "Schools Cup (demo)",
        }
    )


@dataclass(frozen=True)
class DeskMatch:
    fixture_id: int
    token: str
    operator_token: str | None = None
    """For the console (`/console`): the demo prints it with the desk's."""


async def create_desk_match(engine: AsyncEngine, kickoff: datetime | None = None) -> DeskMatch:
    """The fixture, a desk for it and an operator; their names carry the fixture id (names are
    never reused)."""
    fixture_id = await create_fixture(engine, demo_draft(kickoff))
    _, token = await create_desk(engine, f"demo desk {fixture_id}", [fixture_id])
    _, operator_token = await create_operator(engine, f"demo operator {fixture_id}")
    return DeskMatch(fixture_id, token, operator_token)


def web_apps_lines(api: str, match: DeskMatch) -> list[str]:
    """What the demo prints once its desk match exists: where to watch it score, and the tokens to
    paste (each page keeps its token in the browser, never in the URL)."""
    lines = [f"desk app: {api}/desk/{match.fixture_id}  (desk token: {match.token})"]
    if match.operator_token is not None:
        lines.append(f"console: {api}/console  (operator token: {match.operator_token})")
    return lines


# --- the script ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """One command at desk-clock minute `at` (minutes since kickoff, half time included)."""

    at: int
    code: str
    input: Mapping[str, JsonValue] = field(default_factory=dict)
    label: str | None = None
    """Remember the seq this command is accepted at, for a later step's `target`."""
    target: str | None = None
    """The input gets `target_seq` = the seq of the step labelled so (a VAR review, an undo)."""
    expect: Outcome = Outcome.ACCEPTED


def first_half(minute: int) -> int:
    return minute


def second_half(minute: int) -> int:
    return SECOND_HALF_AT + minute - 45


def match_minute(at: float) -> int:
    """The minute a scoreboard shows at desk-clock `at`: 45 through half time, at most 90."""
    if at < SECOND_HALF_AT:
        return int(min(at, 45))
    return int(min(45 + at - SECOND_HALF_AT, 90))


def _goal(side: str, minute: int, shirt: int, kind: str, assist: int | None = None) -> dict[str, JsonValue]:
    goal: dict[str, JsonValue] = {
        "side": side,
        "minute": minute,
        "player_id": player(side, shirt),
        "kind": kind,
    }
    if assist is not None:
        goal["assist_id"] = player(side, assist)
    return goal


def _sub(side: str, minute: int, on: int, off: int) -> dict[str, JsonValue]:
    return {"side": side, "minute": minute, "player_on": player(side, on), "player_off": player(side, off)}


def _note(minute: int, text: str) -> dict[str, JsonValue]:
    return {"text": text, "minute": minute}


SCRIPT: tuple[Step, ...] = (
    Step(first_half(0), "football.period_start", {"period": "1H"}),
    Step(first_half(1), "match.commentary", _note(1, "Brookside kick off the Schools Cup tie")),
    Step(first_half(7), "football.corner", {"side": "home", "minute": 7}),
    Step(first_half(12), "football.corner", {"side": "away", "minute": 12}),
    Step(first_half(19), "football.goal", _goal("home", 19, shirt=9, kind="open_play", assist=7)),
    Step(first_half(20), "match.commentary", _note(19, "Oscar Lund heads in Max Turner's cross")),
    Step(
        first_half(27),
        "football.card",
        {"side": "away", "minute": 27, "player_id": player("away", 4), "color": "yellow"},
    ),
    Step(first_half(33), "football.corner", {"side": "home", "minute": 33}),
    Step(first_half(38), "football.substitution", _sub("away", 38, on=14, off=7)),
    Step(HALF_TIME_AT, "football.period_end", {"period": "1H"}),
    Step(SECOND_HALF_AT, "football.period_start", {"period": "2H"}),
    Step(second_half(52), "match.commentary", _note(52, "Brookside push forward after the break")),
    Step(second_half(58), "football.corner", {"side": "away", "minute": 58}),
    Step(
        second_half(64),
        "football.goal",
        _goal("away", 64, shirt=9, kind="open_play"),
        label="equaliser",
    ),
    Step(second_half(66), "match.var", {"decision": "overturned"}, target="equaliser"),
    Step(second_half(66), "match.commentary", _note(66, "VAR: offside in the build-up, no goal")),
    Step(second_half(71), "football.substitution", _sub("home", 71, on=15, off=10)),
    Step(second_half(78), "football.corner", {"side": "home", "minute": 78}),
    Step(second_half(84), "football.goal", _goal("home", 84, shirt=15, kind="penalty")),
    Step(FULL_TIME_AT, "football.period_end", {"period": "2H"}),
)
"""Oakwood win 2-0: 19' goal, 64' Brookside equaliser taken back by VAR, 84' penalty."""
FINAL_SCORE = (2, 0)


# --- sending -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sent:
    """How one step ended: the last answer's outcome (or `gave_up` / `failed`), its seq and reason."""

    step: Step
    outcome: str
    seq: int | None = None
    reason: str | None = None

    @property
    def as_scripted(self) -> bool:
        return self.outcome == self.step.expect.value


class SendObserver(Protocol):
    """Told of every send and every answer as they happen: the soak keeps its ledger this way, to
    check afterwards what the stack did with each key. The demo's desk has none."""

    def sent(self, key: str, body: Mapping[str, JsonValue]) -> None: ...

    def answered(self, key: str, status: int | None, answer: CommandAnswer | None) -> None:
        """`status` None: no answer at all; `answer` None: a body that is no command answer."""


def demo_key() -> str:
    return f"demo-{uuid.uuid4().hex}"


@dataclass
class Desk:
    """A desk app's sending side: keys, `saw`, and the answers' retry rules."""

    http: httpx.AsyncClient
    """Its `base_url` is the API."""
    match: DeskMatch
    saw: int = 0
    observer: SendObserver | None = None
    new_key: Callable[[], str] = demo_key
    max_attempts: int = MAX_ATTEMPTS

    async def send(self, step: Step, input: Mapping[str, JsonValue]) -> Sent:
        key = self.new_key()
        last = "no answer"
        for _ in range(self.max_attempts):
            body: dict[str, JsonValue] = {
                "key": key,
                "code": step.code,
                "input": dict(input),
                "saw": self.saw,
            }
            if self.observer is not None:
                self.observer.sent(key, body)
            try:
                response = await self.http.post(
                    f"/v1/matches/{self.match.fixture_id}/commands",
                    json=body,
                    headers={"Authorization": f"Bearer {self.match.token}"},
                )
            except httpx.HTTPError as error:  # the answer may be lost: the same key again
                if self.observer is not None:
                    self.observer.answered(key, None, None)
                last = f"no answer: {error!r}"
                await asyncio.sleep(LOST_ANSWER_WAIT)
                continue
            answer = _answer(response)
            if self.observer is not None:
                self.observer.answered(key, response.status_code, answer)
            if answer is None and response.status_code in GATEWAY_STATUSES:
                # A proxy or the API could not take it now (the desk app's rule too): the same key.
                last = f"HTTP {response.status_code}"
                await asyncio.sleep(_retry_after(response))
                continue
            if answer is None:
                return Sent(step, "failed", reason=f"HTTP {response.status_code}: {response.text[:200]}")
            if answer.outcome is Outcome.DUPLICATE and answer.answer is not None:
                answer = answer.answer  # our own earlier send went through: its answer is ours
            if answer.outcome is Outcome.TRY_AGAIN:
                last = _reason(answer) or "try_again"
                await asyncio.sleep(_retry_after(response))
                continue
            if answer.outcome is Outcome.CONFLICT:
                self.saw = max([self.saw, *(entry.seq for entry in answer.changed or ())])
                key = self.new_key()
                last = "conflict"
                continue
            if answer.outcome is Outcome.ACCEPTED and answer.seq is not None:
                self.saw = max(self.saw, answer.seq)
            return Sent(step, answer.outcome.value, answer.seq, _reason(answer))
        return Sent(step, "gave_up", reason=last)


def _answer(response: httpx.Response) -> CommandAnswer | None:
    try:
        return CommandAnswer.model_validate(response.json())
    except (ValueError, ValidationError):
        return None


def _reason(answer: CommandAnswer) -> str | None:
    return None if answer.reason is None else f"{answer.reason.code}: {answer.reason.message}"


def _retry_after(response: httpx.Response) -> float:
    try:
        return max(float(response.headers.get("Retry-After", "1")), 0.0)
    except ValueError:
        return 1.0


async def play(
    desk: Desk,
    *,
    minute_seconds: float,
    on_minute: Callable[[int], None] | None = None,
    script: tuple[Step, ...] = SCRIPT,
) -> list[Sent]:
    """Send every step at its minute; print a line for each answer not as scripted; return them all."""
    loop = asyncio.get_running_loop()
    start = loop.time()
    seqs: dict[str, int] = {}
    results: list[Sent] = []
    for step in script:
        while (now := (loop.time() - start) / minute_seconds) < step.at:
            if on_minute is not None:
                on_minute(match_minute(now))
            await asyncio.sleep(min(step.at - now, 1.0) * minute_seconds)
        if on_minute is not None:
            on_minute(match_minute(step.at))
        input = dict(step.input)
        if step.target is not None:
            if step.target not in seqs:
                sent = Sent(step, "skipped", reason=f"no accepted {step.target!r} to point at")
                results.append(_report(sent))
                continue
            input["target_seq"] = seqs[step.target]
        sent = _report(await desk.send(step, input))
        if step.label is not None and sent.outcome == Outcome.ACCEPTED.value and sent.seq is not None:
            seqs[step.label] = sent.seq
        results.append(sent)
    return results


def _report(sent: Sent) -> Sent:
    if not sent.as_scripted:
        why = f" ({sent.reason})" if sent.reason else ""
        print(f"{time.strftime('%H:%M:%S')}  desk: {sent.step.code} {sent.outcome}{why}", flush=True)
    return sent


async def run_demo_desk(stack: DevStack, announced: AnnouncedMatches) -> None:
    """The demo's desk: create its match on the stack's database, announce it, play it. Never raises."""
    try:
        engine = create_engine(stack.addresses["postgres"], pool_size=1)
        try:
            match = await create_desk_match(engine)
        finally:
            await engine.dispose()
        announced.announce(match.fixture_id)
        for line in web_apps_lines(stack.addresses["api"], match):
            print(f"{time.strftime('%H:%M:%S')}  {line}", flush=True)
    except Exception as error:  # noqa: BLE001 - the demo goes on with the provider matches
        print(f"{time.strftime('%H:%M:%S')}  desk: could not create its match: {error!r}", flush=True)
        return
    finally:
        announced.close()
    minute_seconds = DEMO_MINUTE_SECONDS_AT_1X / stack.options.speed
    try:
        async with httpx.AsyncClient(base_url=stack.addresses["api"], timeout=HTTP_TIMEOUT) as http:
            await play(
                Desk(http, match),
                minute_seconds=minute_seconds,
                on_minute=lambda minute: announced.tick(match.fixture_id, minute),
            )
    except Exception as error:  # noqa: BLE001 - a broken desk must not stop the monitor
        print(f"{time.strftime('%H:%M:%S')}  desk: stopped: {error!r}", flush=True)
