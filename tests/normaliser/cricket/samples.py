"""Cricket v2 test data: the real IPL recording, the score rows of cricket.md §4, a ball builder.

The recording is one real match rebuilt poll by poll (`cricket-t20.jsonl.gz`: a header, then
`{"t", "fixture"}` lines, the last one final). It is looked up in the repository's `recordings/`
and, until it is copied there, in the shared folder beside the checkout.
"""

from __future__ import annotations

import copy
import gzip
import json
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[3]
RECORDING = "cricket-t20"
HOME, AWAY = 2, 8  # localteam Chennai Super Kings, visitorteam Royal Challengers Bengaluru


def _recording_dir() -> Path:
    for folder in (REPO / "recordings", REPO.parent / "shared" / "recordings"):
        if (folder / f"{RECORDING}.jsonl.gz").exists():
            return folder
    raise FileNotFoundError(f"{RECORDING}.jsonl.gz is in neither recordings/ nor ../shared/recordings/")


@cache
def _lines() -> tuple[str, ...]:
    with gzip.open(_recording_dir() / f"{RECORDING}.jsonl.gz", "rt", encoding="utf-8") as stream:
        return tuple(line for line in stream if line.strip())


def recording_fixtures() -> Iterator[dict[str, Any]]:
    """Every fixture line of the recording, in order, parsed one at a time (fresh objects)."""
    for line in _lines()[1:]:
        fixture: dict[str, Any] = json.loads(line)["fixture"]
        yield fixture


def recording_length() -> int:
    """How many fixture lines the recording has."""
    return len(_lines()) - 1


def final_fixture() -> dict[str, Any]:
    """The last (final) state of the recorded match."""
    fixture: dict[str, Any] = json.loads(_lines()[-1])["fixture"]
    return fixture


def expected() -> dict[str, Any]:
    """The recording's `.expected.json` entry for its one fixture."""
    data: dict[str, Any] = json.loads((_recording_dir() / f"{RECORDING}.expected.json").read_text())
    (entry,) = data.values()
    return dict(entry)


# cricket.md §4: id → (name, runs, bye, leg_bye, noball, noball_runs, ball, out).
_ROWS: dict[int, tuple[str, int, int, int, int, int, bool, bool]] = {
    82: ("No Run", 0, 0, 0, 0, 0, True, False),
    69: ("1 Run", 1, 0, 0, 0, 0, True, False),
    70: ("2 Runs", 2, 0, 0, 0, 0, True, False),
    74: ("6 Runs", 6, 0, 0, 0, 0, True, False),
    47: ("FOUR", 4, 0, 0, 0, 0, True, False),
    53: ("SIX", 6, 0, 0, 0, 0, True, False),
    1: ("1 Bye", 0, 1, 0, 0, 0, True, False),
    41: ("4 Byes", 0, 4, 0, 0, 0, True, False),
    4: ("1 Leg Bye", 0, 0, 1, 0, 0, True, False),
    43: ("4 Leg Byes", 0, 0, 4, 0, 0, True, False),
    17: ("1 Wide", 1, 0, 0, 0, 0, False, False),
    52: ("5 Wides", 5, 0, 0, 0, 0, False, False),
    21: ("1 Wide + stump Out", 1, 0, 0, 0, 0, False, True),
    7: ("1 No Ball", 1, 0, 0, 1, 1, True, False),
    9: ("1 No Ball + 2 Run", 3, 0, 0, 1, 1, True, False),
    13: ("1 No Ball + Four", 5, 0, 0, 1, 1, True, False),
    16: ("1 No Ball + Six", 7, 0, 0, 1, 1, True, False),
    14: ("1 No Ball + 1 Leg Bye", 1, 0, 1, 1, 1, True, False),
    15: ("1 No Ball + 4 Byes", 1, 4, 0, 1, 1, True, False),
    54: ("Catch Out", 0, 0, 0, 0, 0, True, True),
    79: ("Clean Bowled", 0, 0, 0, 0, 0, True, True),
    83: ("LBW OUT", 0, 0, 0, 0, 0, True, True),
    56: ("Stump Out", 0, 0, 0, 0, 0, True, True),
    63: ("Run Out", 0, 0, 0, 0, 0, True, True),
    65: ("Run Out + 1 Run", 1, 0, 0, 0, 0, True, True),
    2: ("1 Bye + Retired Hurt", 0, 1, 0, 0, 0, True, False),
}


def score_row(score_id: int) -> dict[str, Any]:
    """The provider's score row `score_id` as `/scores` and an embedded `score` send it."""
    name, runs, bye, leg_bye, noball, noball_runs, ball, out = _ROWS[score_id]
    return {
        "resource": "scores",
        "id": score_id,
        "name": name,
        "runs": runs,
        "four": "FOUR" in name or "Four" in name,
        "six": "SIX" in name or "Six" in name,
        "bye": bye,
        "leg_bye": leg_bye,
        "noball": noball,
        "noball_runs": noball_runs,
        "is_wicket": out,
        "ball": ball,
        "out": out,
    }


def score_rows() -> list[dict[str, Any]]:
    """The `/scores` answer's data list, for the rows above."""
    return [score_row(score_id) for score_id in sorted(_ROWS)]


def ball(
    ball_id: int,
    score_id: int,
    *,
    over: str = "0.1",
    scoreboard: str = "S1",
    team_id: int = AWAY,
    striker: int = 46,
    other: int = 75,
    bowler: int = 279,
    out: int | None = None,
    fielder: int | None = None,
    embed: bool = True,
) -> dict[str, Any]:
    """One real-shaped ball; `embed=False` leaves the score to the `/scores` table."""
    payload: dict[str, Any] = {
        "resource": "balls",
        "id": ball_id,
        "fixture_id": 58328,
        "team_id": team_id,
        "ball": float(over),
        "scoreboard": scoreboard,
        "batsman_one_on_creeze_id": other,
        "batsman_two_on_creeze_id": striker,
        "batsman_id": striker,
        "bowler_id": bowler,
        "batsmanout_id": out,
        "catchstump_id": fielder,
        "runout_by_id": None,
        "score_id": score_id,
        "batsman": {"resource": "players", "id": striker, "fullname": f"Batter {striker}"},
        "bowler": {"resource": "players", "id": bowler, "fullname": f"Bowler {bowler}"},
        "team": {"resource": "teams", "id": team_id, "name": f"Team {team_id}"},
        "updated_at": "2024-03-22T14:33:01.000000Z",
    }
    if embed:
        payload["score"] = score_row(score_id)
    return payload


@cache
def _base_fields() -> dict[str, Any]:
    return {key: value for key, value in final_fixture().items() if key not in ("balls", "runs")}


def fixture(balls: list[dict[str, Any]] | None = None, **fields: Any) -> dict[str, Any]:
    """The recorded fixture's base fields with the given balls (and `runs: []`) and overrides."""
    base = copy.deepcopy(_base_fields())
    base.update(status="2nd Innings", winner_team_id=None, note="", runs=[], balls=balls or [])
    base.update(fields)
    return base


def runs_row(inning: int, team_id: int, score: int, wickets: int, overs: float) -> dict[str, Any]:
    """One row of the `runs` include."""
    return {
        "resource": "runs",
        "id": 900_000 + inning,
        "fixture_id": 58328,
        "team_id": team_id,
        "inning": inning,
        "score": score,
        "wickets": wickets,
        "pp1": "1-6",
        "pp2": None,
        "pp3": None,
        "overs": overs,
        "updated_at": "2024-03-22T18:25:49.000000Z",
    }
