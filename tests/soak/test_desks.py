"""The soak's desks: seeded scripts the rules accept, the ledger, and each rule of the desk check."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Mapping

import httpx
import pytest
from pydantic import JsonValue

from devkit.devstack.demo_desk import FULL_TIME_AT, Sent, Step
from devkit.soak.desks import (
    DeskLedger,
    ImpliedBoard,
    LogEntry,
    RotatingTransport,
    StoredBoard,
    StoredCommand,
    StoredMatch,
    cricket_script,
    desk_draft,
    desk_script,
    desk_violations,
    implied_board,
    ledger_figures,
)
from domain import rules
from domain.commands import CommandAnswer, Outcome, Reason
from domain.rules.football import is_over
from scoreline.accounts.desk_fixtures import lineups_of

pytestmark = pytest.mark.unit

FIXTURE = 1_000_000_000_007


def accepted(seq: int) -> CommandAnswer:
    return CommandAnswer(outcome=Outcome.ACCEPTED, seq=seq)


def duplicate_of(answer: CommandAnswer) -> CommandAnswer:
    return CommandAnswer(outcome=Outcome.DUPLICATE, answer=answer)


TRY_AGAIN = CommandAnswer(outcome=Outcome.TRY_AGAIN, reason=Reason(code="unavailable", message="later"))


def body(key: str, code: str, input: Mapping[str, JsonValue], saw: int) -> dict[str, JsonValue]:
    return {"key": key, "code": code, "input": dict(input), "saw": saw}


def goal(side: str) -> dict[str, JsonValue]:
    return {"side": side, "minute": 10, "player_id": 102 if side == "home" else 202, "kind": "open_play"}


def played(script: tuple[Step, ...], sport: rules.Sport = "football") -> tuple[rules.RuleState, DeskLedger]:
    """The script through the sport's rules, one accepted answer per step, recorded as a desk's
    ledger would be (the seq each label got resolves the VAR's and undo's target)."""
    squads = desk_draft(sport).squads().model_dump(mode="json")
    state = rules.initial_state(sport, "desk", lineups_of(squads))
    ledger = DeskLedger(FIXTURE, sport)
    labels: dict[str, int] = {}
    for seq, step in enumerate(script, start=1):
        input = dict(step.input)
        if step.target is not None:
            input["target_seq"] = labels[step.target]
        command = rules.parse_command(step.code, input)
        refusal = rules.check(state, command)
        assert refusal is None, (step, refusal)
        state = rules.step(state, command, seq)
        if step.label is not None:
            labels[step.label] = seq
        ledger.sent(f"k{seq}", body(f"k{seq}", step.code, input, seq - 1))
        ledger.answered(f"k{seq}", 200, accepted(seq))
    return state, ledger


def stored_as_answered(ledger: DeskLedger, board: StoredBoard) -> StoredMatch:
    """The rows a correct stack leaves for a ledger of first answers."""
    commands: dict[str, StoredCommand] = {}
    for record in ledger.answers:
        answer = record.answer
        if answer is None or answer.outcome in (Outcome.TRY_AGAIN, Outcome.DUPLICATE):
            continue
        commands.setdefault(
            record.key, StoredCommand(record.key, answer.outcome.value, answer.seq, answer.body())
        )
    log = [LogEntry(c.seq, c.key) for c in commands.values() if c.outcome == "accepted" and c.seq]
    return StoredMatch(commands=commands, log=sorted(log, key=lambda e: e.seq), board=board)


@pytest.mark.parametrize("seed", range(60))
def test_every_seeded_football_script_is_accepted_by_the_rules_and_reaches_full_time(seed: int) -> None:
    script = desk_script(random.Random(seed))

    state, ledger = played(script)

    assert isinstance(state, rules.FootballState) and is_over(state)
    assert script[-1].at == FULL_TIME_AT
    assert [s.at for s in script] == sorted(s.at for s in script)
    codes = {s.code for s in script}
    assert {"match.var", "match.undo", "football.goal", "football.corner", "match.commentary"} <= codes
    score = state.game.score
    assert implied_board(ledger, stored_as_answered(ledger, FINISHED_0_0)) == ImpliedBoard(
        "finished", score.home, score.away
    )


@pytest.mark.parametrize("seed", range(60))
def test_every_seeded_cricket_script_is_accepted_by_the_rules_and_finishes(seed: int) -> None:
    script = cricket_script(random.Random(seed))

    state, ledger = played(script, "cricket")

    assert isinstance(state, rules.CricketState) and state.game.finished
    assert len(state.game.completed) == 2
    first, chase = state.game.completed
    assert chase.runs <= first.runs + 1 + 6, "the chase stops once it passes the target"
    assert [s.at for s in script] == list(range(len(script))) and script[-1].at < FULL_TIME_AT
    assert {"cricket.ball", "cricket.over_end", "match.undo"} <= {s.code for s in script}
    implied = implied_board(ledger, stored_as_answered(ledger, FINISHED_0_0))
    assert isinstance(implied, ImpliedBoard) and implied.state == "finished"
    assert {first.batting: first.runs, chase.batting: chase.runs} == {
        "home": implied.home,
        "away": implied.away,
    }


def test_scripts_differ_by_seed_and_repeat_for_the_same_seed() -> None:
    assert desk_script(random.Random(1)) == desk_script(random.Random(1))
    assert desk_script(random.Random(1)) != desk_script(random.Random(2))


FINISHED_0_0 = StoredBoard("finished", 0, 0)


def clean_match() -> tuple[DeskLedger, StoredMatch]:
    """Kickoff; a goal whose answer was lost, then a resend that joined the update in flight and one
    answered duplicate; VAR confirms it after a try_again; half time and full time: 1-0."""
    ledger = DeskLedger(FIXTURE)
    ledger.sent("a", body("a", "football.period_start", {"period": "1H"}, 0))
    ledger.answered("a", 200, accepted(1))
    ledger.sent("b", body("b", "football.goal", goal("home"), 1))
    ledger.answered("b", None, None)
    ledger.sent("b", body("b", "football.goal", goal("home"), 1))
    ledger.answered("b", 200, accepted(2))
    ledger.sent("b", body("b", "football.goal", goal("home"), 1))
    ledger.answered("b", 200, duplicate_of(accepted(2)))
    var: dict[str, JsonValue] = {"decision": "confirmed", "target_seq": 2}
    ledger.sent("c", body("c", "match.var", var, 2))
    ledger.answered("c", 503, TRY_AGAIN)
    ledger.sent("c", body("c", "match.var", var, 2))
    ledger.answered("c", 200, accepted(3))
    whistles = [
        ("d", "1H", "football.period_end"),
        ("e", "2H", "football.period_start"),
        ("f", "2H", "football.period_end"),
    ]
    for seq, (key, period, code) in enumerate(whistles, start=4):
        ledger.sent(key, body(key, code, {"period": period}, seq - 1))
        ledger.answered(key, 200, accepted(seq))
    return ledger, stored_as_answered(ledger, StoredBoard("finished", 1, 0))


def details(ledger: DeskLedger, stored: StoredMatch) -> list[str]:
    return [violation.line() for violation in desk_violations(ledger, stored)]


def test_a_match_played_through_lost_answers_and_resends_has_no_violation() -> None:
    ledger, stored = clean_match()
    assert details(ledger, stored) == []
    assert [send.attempt for send in ledger.sends if send.key == "b"] == [1, 2, 3]
    assert [answer.attempt for answer in ledger.answers if answer.key == "c"] == [1, 2]


def test_the_figures_count_commands_sends_resends_duplicates_and_conflicts() -> None:
    ledger, _ = clean_match()
    ledger.sent("x", body("x", "football.corner", {"side": "home", "minute": 3}, 0))
    ledger.answered("x", 200, CommandAnswer(outcome=Outcome.CONFLICT))

    assert ledger_figures([ledger, DeskLedger(FIXTURE + 1)]) == {
        "desks": 2,
        "commands": 7,
        "sends": 10,
        "resends": 3,
        "duplicates": 1,
        "conflicts": 1,
    }


def test_an_accepted_command_missing_from_the_log_is_named() -> None:
    ledger, stored = clean_match()
    log = [entry for entry in stored.log if entry.command_id != "b"]
    assert "desks: key b: accepted at seq [2], in the log at seq []" in details(
        ledger, StoredMatch(stored.commands, log, stored.board)
    )


def test_an_accepted_command_logged_twice_or_at_another_seq_is_named() -> None:
    ledger, stored = clean_match()
    twice = [*stored.log, LogEntry(9, "b")]
    moved = [LogEntry(7, "b") if entry.command_id == "b" else entry for entry in stored.log]
    assert "desks: key b: accepted at seq [2], in the log at seq [2, 9]" in details(
        ledger, StoredMatch(stored.commands, twice, stored.board)
    )
    assert "desks: key b: accepted at seq [2], in the log at seq [7]" in details(
        ledger, StoredMatch(stored.commands, moved, stored.board)
    )


def test_a_resend_of_an_accepted_key_answered_anew_is_named() -> None:
    ledger, stored = clean_match()
    ledger.sent("b", body("b", "football.goal", goal("home"), 1))
    ledger.answered("b", 200, CommandAnswer(outcome=Outcome.CONFLICT))

    assert "desks: key b: send 4 answered conflict seq None, the first answer was accepted seq 2" in details(
        ledger, stored
    )


def test_a_resend_accepted_a_second_time_is_named_twice_over() -> None:
    ledger, stored = clean_match()
    ledger.sent("b", body("b", "football.goal", goal("home"), 1))
    ledger.answered("b", 200, accepted(9))

    found = details(ledger, stored)
    assert "desks: key b: send 4 answered accepted seq 9, the first answer was accepted seq 2" in found
    assert "desks: key b: accepted at seq [2, 9], in the log at seq [2]" in found


def test_a_duplicate_carrying_another_answer_than_the_first_is_named() -> None:
    ledger, stored = clean_match()
    ledger.sent("b", body("b", "football.goal", goal("home"), 1))
    ledger.answered("b", 200, duplicate_of(CommandAnswer(outcome=Outcome.CONFLICT)))

    assert (
        "desks: key b: duplicate carried {'outcome': 'conflict'}, "
        "the first answer was {'outcome': 'accepted', 'seq': 2}"
    ) in details(ledger, stored)


def test_an_answer_no_command_row_holds_is_named() -> None:
    ledger, stored = clean_match()
    commands = {key: c for key, c in stored.commands.items() if key != "c"}
    assert "desks: key c: answered accepted but no command row holds it" in details(
        ledger, StoredMatch(commands, stored.log, stored.board)
    )


def test_commands_and_log_entries_the_desk_never_sent_are_named() -> None:
    ledger, stored = clean_match()
    stray = StoredCommand("z", "accepted", 7, {"outcome": "accepted", "seq": 7})
    tampered = StoredMatch(
        {**stored.commands, "z": stray}, [*stored.log, LogEntry(7, "z"), LogEntry(8, None)], stored.board
    )

    found = details(ledger, tampered)
    assert "desks: key z: stored as a command of the match, never sent by its desk" in found
    assert f"desks: fixture {FIXTURE}: log entry 7 has key z, never sent" in found
    assert f"desks: fixture {FIXTURE}: log entry 8 has key None, never sent" in found


def test_a_match_not_at_full_time_or_with_another_score_is_named() -> None:
    ledger, stored = clean_match()

    def on(board: StoredBoard | None) -> list[str]:
        return details(ledger, StoredMatch(stored.commands, stored.log, board))

    assert on(StoredBoard("live_second_half", 1, 0)) == [
        f"desks: fixture {FIXTURE}: ended live_second_half, not at full time",
        f"desks: fixture {FIXTURE}: board shows live_second_half 1-0, the accepted commands finished 1-0",
    ]
    assert on(StoredBoard("finished", 2, 0)) == [
        f"desks: fixture {FIXTURE}: board shows finished 2-0, the accepted commands finished 1-0"
    ]
    assert on(None) == [f"desks: fixture {FIXTURE}: no scoreboard"]


def test_the_implied_score_counts_goals_less_those_overturned_or_undone() -> None:
    ledger = DeskLedger(FIXTURE)
    moves: list[tuple[str, dict[str, JsonValue]]] = [
        ("football.period_start", {"period": "1H"}),
        ("football.goal", goal("home")),
        ("football.goal", goal("away")),
        ("match.undo", {"target_seq": 3}),
        ("football.goal", goal("away")),
        ("match.var", {"decision": "confirmed", "target_seq": 5}),
        ("football.goal", goal("home")),
        ("match.var", {"decision": "overturned", "target_seq": 7}),
    ]
    for seq, (code, input) in enumerate(moves, start=1):
        ledger.sent(f"k{seq}", body(f"k{seq}", code, input, seq - 1))
        ledger.answered(f"k{seq}", 200, accepted(seq))
    stored = stored_as_answered(ledger, StoredBoard("live_first_half", 1, 1))

    assert implied_board(ledger, stored) == ImpliedBoard("live_first_half", 1, 1)
    assert details(ledger, stored) == [f"desks: fixture {FIXTURE}: ended live_first_half, not at full time"]


def test_accepted_commands_that_do_not_follow_from_one_another_are_named() -> None:
    ledger = DeskLedger(FIXTURE)
    ledger.sent("a", body("a", "football.goal", goal("home"), 0))
    ledger.answered("a", 200, accepted(1))

    assert details(ledger, stored_as_answered(ledger, StoredBoard("finished", 1, 0))) == [
        f"desks: fixture {FIXTURE}: seq 1 football.goal does not replay: not_started"
    ]


def test_a_step_not_accepted_and_a_desk_that_stopped_are_named() -> None:
    ledger, stored = clean_match()
    step = Step(12, "football.corner", {"side": "home", "minute": 12})
    ledger.results.append(Sent(step, "refused", reason="match_over: the match is over"))
    ledger.stopped_by = "RuntimeError('boom')"

    assert details(ledger, stored) == [
        f"desks: fixture {FIXTURE}: the desk stopped: RuntimeError('boom')",
        f"desks: fixture {FIXTURE}: football.corner at minute 12 ended refused (match_over: the match is over)",
    ]


async def test_the_client_moves_to_the_next_api_when_one_does_not_answer() -> None:
    seen: list[str] = []

    def api(request: httpx.Request) -> httpx.Response:
        seen.append(f"{request.url.netloc.decode()} {request.headers['host']}")
        if request.url.port == 8001:
            raise httpx.ConnectError("refused", request=request)
        return httpx.Response(200, json={"outcome": "accepted", "seq": 1})

    transport = RotatingTransport(
        ["http://127.0.0.1:8001", "http://127.0.0.1:8002"], httpx.MockTransport(api)
    )
    async with httpx.AsyncClient(base_url="http://127.0.0.1:8001", transport=transport) as http:
        with pytest.raises(httpx.ConnectError):
            await http.post("/v1/matches/7/commands", json={})
        answered = await http.post("/v1/matches/7/commands", json={})

    assert answered.status_code == 200
    assert seen == ["127.0.0.1:8001 127.0.0.1:8001", "127.0.0.1:8002 127.0.0.1:8002"]


async def test_requests_failing_together_move_the_client_on_once() -> None:
    release = asyncio.Event()
    seen: list[int | None] = []

    async def api(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.port)
        if request.url.port == 8001:
            await release.wait()
            raise httpx.ReadError("reset", request=request)
        return httpx.Response(200, json={"outcome": "accepted", "seq": 1})

    urls = ["http://127.0.0.1:8001", "http://127.0.0.1:8002", "http://127.0.0.1:8003"]
    transport = RotatingTransport(urls, httpx.MockTransport(api))
    async with httpx.AsyncClient(base_url=urls[0], transport=transport) as http:
        both = asyncio.gather(*(http.post("/c", json={}) for _ in range(2)), return_exceptions=True)
        while len(seen) < 2:
            await asyncio.sleep(0)
        release.set()
        failed = await both
        answered = await http.post("/c", json={})

    assert all(isinstance(error, httpx.ReadError) for error in failed)
    assert answered.status_code == 200
    assert seen == [8001, 8001, 8002]
