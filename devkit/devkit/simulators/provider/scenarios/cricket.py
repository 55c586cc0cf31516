"""The cricket recordings no real match gave us, written by one deterministic generator.

    .tools/bin/uv run --frozen python -m devkit.simulators.provider.scenarios.cricket [--out DIR]

writes `cricket-<name>.jsonl.gz` and `cricket-<name>.expected.json` for every scenario below into
`recordings/` (or DIR). Each scenario is a match script: statuses and pauses in recorded time, and the
balls in the notation of `cricket_data.TOKENS`, one string per over. Where only the shape matters
(the rain-reduced chase, the Test's overs) the balls come from a seeded `random.Random`, so the same
code always writes the same files.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from devkit.simulators.provider.scenarios.cricket_builder import MatchBuilder, MatchSpec
from devkit.simulators.provider.scenarios.cricket_data import CSK, RCB, SCORES, TEAMS, TOKENS, JsonObject

RECORDINGS_DIR = Path(__file__).resolve().parents[5] / "recordings"
SEED = 12

# How often each outcome comes up in a generated ball (a T20 chase, a Test's patient overs).
T20_WEIGHTS: Mapping[str, float] = {
    ".": 30,
    "1": 33,
    "2": 8,
    "3": 1,
    "4": 13,
    "6": 6,
    "wd": 3,
    "1lb": 2,
    "1b": 1,
    "nb1": 1,
    "ct": 3,
}
TEST_WEIGHTS: Mapping[str, float] = {
    ".": 58,
    "1": 18,
    "2": 6,
    "3": 2,
    "4": 9,
    "6": 1,
    "wd": 1,
    "1lb": 2,
    "4b": 1,
    "ct": 2,
    "lbw": 1,
}


def _day(date: str) -> datetime:
    return datetime.fromisoformat(date).replace(tzinfo=UTC)


def _spec(
    index: int,
    round_: str,
    starting_at: str,
    *,
    kind: str = "T20",
    total_overs: int | None = 20,
    powerplay: str | None = "1-6",
    lead_in_minutes: int = 37,
) -> MatchSpec:
    # Ids above the real recording's (9,667,547 to 9,668,696), one block per scenario in date order.
    return MatchSpec(
        fixture_id=59_001 + index,
        round=round_,
        kind=kind,
        starting_at=_day(starting_at),
        lead_in=timedelta(minutes=lead_in_minutes),
        local_id=CSK,
        visitor_id=RCB,
        total_overs=total_overs,
        powerplay=powerplay,
        first_ball_id=9_700_001 + 20_000 * index,
        label=f"{TEAMS[CSK]['name']} vs {TEAMS[RCB]['name']}",
    )


def random_token(match: MatchBuilder, weights: Mapping[str, float]) -> str:
    """One generated delivery; a wicket the batting side has nobody for becomes a dot ball."""
    token = match.rng.choices(list(weights), weights=list(weights.values()))[0]
    innings = match.innings
    if SCORES[TOKENS[token]]["out"] and innings is not None and not innings.can_lose_wicket:
        return "."
    return token


def random_overs(match: MatchBuilder, count: int, weights: Mapping[str, float]) -> None:
    """Bowl `count` whole generated overs (the innings must not end inside them)."""
    innings = match.innings
    assert innings is not None
    goal = innings.legal + 6 * count
    while innings.legal < goal:
        match.deliver(random_token(match, weights))


def chase(match: MatchBuilder, target: int, legal_limit: int, weights: Mapping[str, float]) -> None:
    """Bowl generated balls until the target is reached, the balls run out or the side is all out."""
    innings = match.innings
    assert innings is not None
    while innings.score < target and innings.legal < legal_limit and not innings.all_out:
        match.deliver(random_token(match, weights))


def finish_limited_overs(
    match: MatchBuilder, target: int, legal_limit: int, man_of_match: int, suffix: str = ""
) -> int | None:
    """Decide a limited-overs chase from the balls; the winner's id, or None on a tie."""
    innings = match.innings
    assert innings is not None
    defending = (
        match.spec.visitor_id if innings.batting.team_id == match.spec.local_id else match.spec.local_id
    )
    if innings.score >= target:
        left = legal_limit - innings.legal
        note = f"won by {10 - innings.wickets} wickets (with {left} balls remaining)"
        winner = innings.batting.team_id
    elif innings.score == target - 1:
        return None
    else:
        note = f"won by {target - 1 - innings.score} runs"
        winner = defending
    match.wait(90, jitter=20)
    match.show(
        status="Finished",
        winner_team_id=winner,
        man_of_match_id=man_of_match,
        note=f"{TEAMS[winner]['name']} {note}{suffix}",
    )
    return winner


def innings_break(match: MatchBuilder, minutes: float, next_status: str, **fields: object) -> None:
    """The innings ends: a break, then the next innings' status a little before its first ball."""
    match.wait(40, jitter=10)
    match.show(status="Innings Break", **fields)
    match.wait(minutes * 60, jitter=90)
    match.show(status=next_status)


# -- the scenarios -------------------------------------------------------------------------------


def rain_reduced(rng: random.Random) -> MatchBuilder:
    """Rain delays the start by 1 h 47 min and cuts the match to 16 overs a side; a second stoppage
    in the chase cuts it to 14 overs with a revised target (`rpc_target`, `rpc_overs`)."""
    spec = _spec(0, "11th Match", "2024-04-02 14:00")
    m = MatchBuilder(spec, rng)
    m.show()
    m.wait_until(spec.starting_at)
    m.show(status="Delayed")
    m.wait(52 * 60, jitter=60)
    m.show(toss_won_team_id=CSK, elected="bowling")
    m.wait(31 * 60, jitter=60)
    m.show(total_overs_played=16, note="Match reduced to 16 overs per side")
    m.wait_until(spec.starting_at + timedelta(minutes=105))
    m.show(status="1st Innings", note="")
    m.start_innings("S1", RCB)
    m.overs(
        "1 . 4 . wd 1 ct",
        ". 2 1 . 6 1",
        "4 . bwd . 1 1lb",
        "1 1 . ct . 4",
        ". 1 2wd 1 . lbw 2",
        "6 . 1 ct . 1",
        "1 . . 4 1 bwd",
        "ct 1 . 2 nb1 . 1",
    )
    m.bowl("ct 1 bwd 4 ro")  # all out in the ninth over
    first = m.totals()["S1"]["score"]
    innings_break(m, 14, "2nd Innings")
    m.start_innings("S2", CSK)
    m.overs("1 . 4 1 . 2", ". 1 wd 6 . 1 ct", "2 1 . 4 1 .", "1 . 1 . 2 4")
    m.wait(25, jitter=5)
    m.show(status="Int.", note="Rain stopped play")
    # Not the real DLS tables: a plausible cut for losing two overs with one wicket down.
    target = first * 91 // 100 + 1
    m.wait(41 * 60, jitter=60)
    m.show(
        status="2nd Innings",
        rpc_target=target,
        rpc_overs=14,
        note=f"Target revised to {target} from 14 overs",
    )
    chase(m, target, 14 * 6, T20_WEIGHTS)
    finish_limited_overs(m, target, 14 * 6, 4940, " (DLS method)")
    return m


def super_over(rng: random.Random) -> MatchBuilder:
    """A 5-over match tied on 48, then a super over (S3, S4) that Royal Challengers win."""
    spec = _spec(1, "14th Match", "2024-04-05 14:00", total_overs=5, powerplay="1-2")
    m = MatchBuilder(spec, rng)
    m.show()
    m.wait(10 * 60, jitter=30)
    m.show(toss_won_team_id=CSK, elected="bowling")
    m.wait_until(spec.starting_at + timedelta(seconds=60))
    m.show(status="1st Innings")
    m.start_innings("S1", RCB)
    m.overs("1 . 4 1 . 2", "6 1 . ct 1 wd 1", "4 . 1 1 2 .", "1 bwd . 6 1 4", "1 2 . 1 ct 6")
    innings_break(m, 15, "2nd Innings")
    m.start_innings("S2", CSK)
    m.overs(". 4 1 1 . 1", "1lb 6 . 1 ct 2", "4 1 wd . 1 . 2", "1 . 6 lbw 1 2", "6 1 . 4 ct 1")
    totals = m.totals()
    assert totals["S1"]["score"] == totals["S2"]["score"], "the script must tie"
    innings_break(m, 8, "3rd Innings", super_over=True, note="Match tied, super over to follow")
    m.start_innings("S3", CSK, bowlers=(59,))
    m.over("1 4 . 2 ct 1")
    innings_break(m, 4, "4th Innings")
    m.start_innings("S4", RCB, bowlers=(279,))
    m.bowl("1 . 4 wd 1 2")
    assert m.totals()["S4"]["score"] > m.totals()["S3"]["score"], "the script must win the super over"
    m.wait(90, jitter=20)
    m.show(
        status="Finished",
        winner_team_id=RCB,
        man_of_match_id=46,
        note="Match tied (Royal Challengers Bengaluru won the Super Over)",
    )
    return m


def abandoned_no_ball(rng: random.Random) -> MatchBuilder:
    """Rain from the start: no toss, no ball, abandoned with no result."""
    spec = _spec(2, "17th Match", "2024-04-08 14:00")
    m = MatchBuilder(spec, rng)
    m.show()
    m.wait_until(spec.starting_at)
    m.show(status="Delayed")
    m.wait(65 * 60, jitter=120)
    m.show(note="Inspection at 16:00 local time")
    m.wait(80 * 60, jitter=120)
    m.show(status="Aban.", draw_noresult="no-result", note="Match abandoned due to rain")
    return m


def abandoned_after_toss(rng: random.Random) -> MatchBuilder:
    """The toss is made, then rain: no ball is bowled and the match is abandoned."""
    spec = _spec(3, "20th Match", "2024-04-11 14:00")
    m = MatchBuilder(spec, rng)
    m.show()
    m.wait(10 * 60, jitter=30)
    m.show(toss_won_team_id=RCB, elected="bowling")
    m.wait_until(spec.starting_at)
    m.show(status="Delayed")
    m.wait(110 * 60, jitter=120)
    m.show(status="Aban.", draw_noresult="no-result", note="Match abandoned due to rain")
    return m


def edits(rng: random.Random) -> MatchBuilder:
    """Balls re-scored in place: one minutes later in play, two after `Finished` (10 min and 2 h)."""
    spec = _spec(4, "23rd Match", "2024-04-14 14:00", total_overs=5, powerplay="1-2")
    m = MatchBuilder(spec, rng)
    m.show()
    m.wait(10 * 60, jitter=30)
    m.show(toss_won_team_id=RCB, elected="batting")
    m.wait_until(spec.starting_at + timedelta(seconds=60))
    m.show(status="1st Innings")
    m.start_innings("S1", RCB)
    m.overs("1 . 4 1 . 2", ". 6 1 . 1 wd 4")
    m.wait(20, jitter=5)
    m.edit(m.find_ball("S1", 0.1, "1"), "1lb")  # the most common real edit, minutes later
    m.overs("2 1 . ct 1 1", "4 . 1 2 . 6", "1 bwd 1 4 . 2")
    innings_break(m, 15, "2nd Innings")
    m.start_innings("S2", CSK)
    m.overs("1 4 . 1 1 .", "6 . ct 1 4 1", "1 1 . 2 4 1lb", ". 1 6 1 bwd 2")
    m.bowl("4 . 1 6")
    finish_limited_overs(m, m.totals()["S1"]["score"] + 1, 5 * 6, 4856)
    m.wait(10 * 60)
    m.edit(m.find_ball("S1", 3.6, "6"), "4")  # the boundary was a four: S1 loses two runs
    m.wait(110 * 60)
    m.edit(m.find_ball("S2", 2.1, "1"), "1lb")
    return m


def two_day_test(rng: random.Random) -> MatchBuilder:
    """A Test over two days: a wet outfield delays day 1, then Lunch, Tea Break, bad light and
    `Stump Day 1`, a 16.5 h night with no change, and on day 2 short declared innings and a
    fourth-innings chase that Chennai win."""
    spec = _spec(
        5, "1st Test", "2024-04-18 04:00", kind="Test", total_overs=None, powerplay=None, lead_in_minutes=40
    )
    m = MatchBuilder(spec, rng)
    m.show()
    m.wait(10 * 60, jitter=30)
    m.show(toss_won_team_id=RCB, elected="batting")
    m.wait_until(spec.starting_at)
    m.show(status="Delayed", note="Wet outfield")
    m.wait_until(spec.starting_at + timedelta(hours=3))
    m.show(status="1st Innings", note="")
    m.start_innings("S1", RCB)
    random_overs(m, 3, TEST_WEIGHTS)
    m.wait(20, jitter=5)
    m.show(status="Lunch")
    m.wait(40 * 60, jitter=30)
    m.show(status="1st Innings")
    random_overs(m, 1, TEST_WEIGHTS)
    innings_break(m, 10, "2nd Innings")  # declared
    m.start_innings("S2", CSK)
    random_overs(m, 2, TEST_WEIGHTS)
    m.wait(20, jitter=5)
    m.show(status="Tea Break")
    m.wait(20 * 60, jitter=30)
    m.show(status="2nd Innings")
    random_overs(m, 1, TEST_WEIGHTS)
    m.wait(30, jitter=5)
    m.show(status="Int.", note="Bad light stopped play")
    m.wait_until(spec.starting_at + timedelta(hours=7, minutes=30))
    m.show(status="Stump Day 1", note="")
    m.wait_until(spec.starting_at + timedelta(days=1))  # overnight: nothing changes for 16.5 h
    m.show(status="2nd Innings")
    random_overs(m, 1, TEST_WEIGHTS)
    innings_break(m, 10, "3rd Innings")  # declared
    m.start_innings("S3", RCB)
    random_overs(m, 3, TEST_WEIGHTS)
    innings_break(m, 10, "4th Innings")  # declared, setting a target
    totals = m.totals()
    target = totals["S1"]["score"] + totals["S3"]["score"] - totals["S2"]["score"] + 1
    assert target > 0, "the declarations must leave Chennai something to chase"
    m.start_innings("S4", CSK)
    chase(m, target, 60 * 6, T20_WEIGHTS)  # quick runs before the weather turns
    innings = m.innings
    assert innings is not None and innings.score >= target, "the chase must succeed"
    m.wait(90, jitter=20)
    m.show(
        status="Finished",
        winner_team_id=CSK,
        man_of_match_id=55,
        note=f"Chennai Super Kings won by {10 - innings.wickets} wickets",
    )
    return m


def missing_balls(rng: random.Random) -> MatchBuilder:
    """The `balls` include is not honoured on some lines (the key is absent) while `runs` moves on;
    later lines carry every ball again, those bowled meanwhile included."""
    spec = _spec(6, "27th Match", "2024-04-22 14:00", total_overs=5, powerplay="1-2")
    m = MatchBuilder(spec, rng)
    m.show()
    m.wait(10 * 60, jitter=30)
    m.show(toss_won_team_id=CSK, elected="batting")
    m.wait_until(spec.starting_at + timedelta(seconds=60))
    m.show(status="1st Innings")
    m.start_innings("S1", CSK)
    m.over(". 1 4 . 1 2")
    m.bowl("1 wd")
    m.hide_balls = True
    m.bowl("1 6 . ct 1 4 1 . 1")
    m.hide_balls = False
    m.bowl("2 1")
    m.overs("1 . lbw 4 1 1", "6 1 2 . 1 4")
    innings_break(m, 15, "2nd Innings")
    m.start_innings("S2", RCB)
    m.over("1 . 2 4 . 1")
    m.hide_balls = True
    m.overs("ct 1 1 4 . 6")
    m.hide_balls = False
    m.overs("1 1lb . 4 2 1", "6 . 1 bwd 1 4")
    m.bowl("1 4 . 1 ct 2")
    finish_limited_overs(m, m.totals()["S1"]["score"] + 1, 5 * 6, 40)
    return m


@dataclass(frozen=True)
class Scenario:
    """One recording: its file name and the script that plays it."""

    name: str
    build: Callable[[random.Random], MatchBuilder]


SCENARIOS: tuple[Scenario, ...] = (
    Scenario("rain-reduced", rain_reduced),
    Scenario("super-over", super_over),
    Scenario("abandoned-no-ball", abandoned_no_ball),
    Scenario("abandoned-after-toss", abandoned_after_toss),
    Scenario("edits", edits),
    Scenario("test-two-days", two_day_test),
    Scenario("missing-balls", missing_balls),
)


def play(index: int, scenario: Scenario) -> MatchBuilder:
    """Play one scenario with its own fixed seed."""
    return scenario.build(random.Random(SEED * 1000 + index))


def header(match: MatchBuilder, name: str) -> JsonObject:
    """Line 1 of the recording."""
    start = match.spec.header_start.strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "recording": 1,
        "sport": "cricket",
        "name": f"{match.spec.label} ({name})",
        "start": start,
        "fixtures": [match.spec.fixture_id],
    }


def write(out: Path) -> list[Path]:
    """Write every scenario's recording and expected outcome into `out`; the paths written."""
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for index, scenario in enumerate(SCENARIOS):
        match = play(index, scenario)
        recording = out / f"cricket-{scenario.name}.jsonl.gz"
        text = "".join(json.dumps(line) + "\n" for line in [header(match, scenario.name), *match.lines])
        with (
            recording.open("wb") as raw,
            gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as packed,
        ):
            packed.write(text.encode())
        expected = out / f"cricket-{scenario.name}.expected.json"
        expected.write_text(json.dumps({str(match.spec.fixture_id): match.expected()}, indent=1) + "\n")
        written += [recording, expected]
    return written


def main() -> None:
    """Command line: write the recordings into `recordings/` or `--out`."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=RECORDINGS_DIR, help="directory to write into")
    for path in write(parser.parse_args().out):
        print(f"{path} ({path.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
