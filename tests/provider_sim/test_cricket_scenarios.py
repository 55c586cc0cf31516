"""The generated cricket recordings: the committed files are what the generator writes, and each one
is consistent with itself and with its `.expected.json`.

Every check here is computed from the raw JSON lines (never from the generator's own bookkeeping, and
never through the normaliser), so it holds for the files as a consumer reads them.
"""

from __future__ import annotations

import gzip
import json
from datetime import datetime, timedelta
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from devkit.simulators.provider.scenarios.cricket import RECORDINGS_DIR, SCENARIOS, write

pytestmark = pytest.mark.unit

NAMES = [scenario.name for scenario in SCENARIOS]
REAL_BALL_IDS = range(9_667_547, 9_668_697)
BOARDS = ("S1", "S2", "S3", "S4")

Json = dict[str, Any]


def read_lines(path: Path) -> list[Json]:
    """Every line of a gzip JSON Lines recording, header first."""
    with gzip.open(path, "rt") as handle:
        return [json.loads(line) for line in handle]


@cache
def recording(name: str) -> tuple[Json, list[Json], Json]:
    """The committed recording `name`: its header, its fixture lines and its one expected outcome."""
    lines = read_lines(RECORDINGS_DIR / f"cricket-{name}.jsonl.gz")
    expected = json.loads((RECORDINGS_DIR / f"cricket-{name}.expected.json").read_text())
    assert list(expected) == [str(fid) for fid in lines[0]["fixtures"]]
    return lines[0], lines[1:], next(iter(expected.values()))


def fixtures(name: str) -> list[Json]:
    return [line["fixture"] for line in recording(name)[1]]


def parse(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def legal(score: Json) -> bool:
    return bool(score["ball"]) and score["noball"] == 0


def total(score: Json) -> int:
    return int(score["runs"] + score["bye"] + score["leg_bye"])


def overs(balls: int) -> float:
    return round(balls // 6 + (balls % 6) / 10, 1)


def innings_of(balls: list[Json]) -> dict[str, Json]:
    """Per scoreboard, what the balls add up to: team, score, wickets, legal balls."""
    boards: dict[str, Json] = {}
    for ball in balls:
        board = boards.setdefault(
            ball["scoreboard"], {"team_id": ball["team_id"], "score": 0, "wickets": 0, "legal": 0}
        )
        assert board["team_id"] == ball["team_id"]
        board["score"] += total(ball["score"])
        board["wickets"] += 1 if ball["score"]["out"] else 0
        board["legal"] += 1 if legal(ball["score"]) else 0
    return boards


def amendments(name: str) -> tuple[list[int], list[int]]:
    """Ball ids whose content changed between lines, and those changed on a line after `Finished`."""
    seen: dict[int, Json] = {}
    amended: set[int] = set()
    after: set[int] = set()
    finished = False
    for fixture in fixtures(name):
        for ball in fixture.get("balls", []):
            if ball["id"] in seen and seen[ball["id"]] != ball:
                amended.add(ball["id"])
                if finished:
                    after.add(ball["id"])
            seen[ball["id"]] = ball
        finished = finished or fixture["status"] == "Finished"
    return sorted(amended), sorted(after)


def last_with_balls(name: str) -> Json:
    return next(fixture for fixture in reversed(fixtures(name)) if "balls" in fixture)


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("cricket-recordings")
    write(out)
    return out


@pytest.mark.parametrize("name", NAMES)
def test_committed_files_are_what_the_generator_writes(name: str, regenerated: Path) -> None:
    """Regenerating gives the committed recording line for line, and the same expected outcome."""
    assert read_lines(regenerated / f"cricket-{name}.jsonl.gz") == read_lines(
        RECORDINGS_DIR / f"cricket-{name}.jsonl.gz"
    )
    expected = f"cricket-{name}.expected.json"
    assert json.loads((regenerated / expected).read_text()) == json.loads(
        (RECORDINGS_DIR / expected).read_text()
    )


@pytest.mark.parametrize("name", NAMES)
def test_lines_are_a_replayable_recording(name: str) -> None:
    """Header as the real one; times never go back; every line is the header's fixture, whole."""
    header, lines, _ = recording(name)
    assert header["recording"] == 1 and header["sport"] == "cricket" and len(header["fixtures"]) == 1
    times = [line["t"] for line in lines]
    assert times == sorted(times) and times[0] == 0.0
    start = parse(header["start"])
    assert start < parse(lines[0]["fixture"]["starting_at"]) <= start + timedelta(hours=1)
    for line in lines:
        fixture = line["fixture"]
        assert fixture["id"] == header["fixtures"][0]
        assert fixture["localteam"]["id"] == fixture["localteam_id"]
        assert fixture["visitorteam"]["id"] == fixture["visitorteam_id"]
        assert fixture["starting_at"] == lines[0]["fixture"]["starting_at"]
        assert "runs" in fixture


@pytest.mark.parametrize("name", NAMES)
def test_runs_rows_agree_with_the_balls_on_every_line(name: str) -> None:
    """score = sum of delivery totals, wickets = outs, overs = legal balls, one row per scoreboard."""
    for fixture in fixtures(name):
        if "balls" not in fixture:
            continue
        boards = innings_of(fixture["balls"])
        rows = {f"S{row['inning']}": row for row in fixture["runs"]}
        assert set(rows) == set(boards)
        for board, row in rows.items():
            assert row["fixture_id"] == fixture["id"]
            assert (row["team_id"], row["score"], row["wickets"], row["overs"]) == (
                boards[board]["team_id"],
                boards[board]["score"],
                boards[board]["wickets"],
                overs(boards[board]["legal"]),
            )


@pytest.mark.parametrize("name", NAMES)
def test_balls_are_numbered_and_embedded_like_real_ones(name: str) -> None:
    """Ids rise within a line; a wide or no-ball repeats the next legal ball's number; overs hold six
    legal balls; embedded objects match their ids; nobody bowls two overs running."""
    for fixture in fixtures(name):
        balls = fixture.get("balls", [])
        ids = [ball["id"] for ball in balls]
        assert ids == sorted(set(ids))
        legal_so_far = dict.fromkeys(BOARDS, 0)
        bowler_of_over: dict[tuple[str, int], int] = {}
        for ball in balls:
            board = ball["scoreboard"]
            before = legal_so_far[board]
            assert ball["ball"] == float(f"{before // 6}.{before % 6 + 1}")
            assert ball["fixture_id"] == fixture["id"]
            assert ball["batsman"]["id"] == ball["batsman_id"]
            assert ball["bowler"]["id"] == ball["bowler_id"]
            assert ball["team"]["id"] == ball["team_id"]
            assert ball["score"]["id"] == ball["score_id"]
            assert (ball["batsmanout_id"] is not None) == ball["score"]["out"]
            assert ball["batsman_id"] in (ball["batsman_one_on_creeze_id"], ball["batsman_two_on_creeze_id"])
            assert bowler_of_over.setdefault((board, before // 6), ball["bowler_id"]) == ball["bowler_id"]
            legal_so_far[board] += 1 if legal(ball["score"]) else 0
        for (board, over), bowler in bowler_of_over.items():
            assert bowler_of_over.get((board, over + 1)) != bowler
        limit = fixture["total_overs_played"]
        for board, count in legal_so_far.items():
            if board in ("S3", "S4") and fixture["super_over"]:
                assert count <= 6
            elif limit is not None:
                assert count <= 6 * (
                    fixture["rpc_overs"] if board == "S2" and fixture["rpc_overs"] else limit
                )


def test_score_rows_are_the_same_everywhere() -> None:
    """One score id is one score row in every recording, and wides are the only `ball: false` rows."""
    rows: dict[int, Json] = {}
    for name in NAMES:
        for ball in last_with_balls(name).get("balls", []):
            assert rows.setdefault(ball["score_id"], ball["score"]) == ball["score"]
    for row in rows.values():
        is_wide = "Wide" in row["name"]
        assert row["ball"] is not is_wide
        assert (row["noball"] == 1) == ("No Ball" in row["name"])


def test_ball_and_fixture_ids_never_collide() -> None:
    """Ball ids are unique across the recordings and clear of the real recording's; fixture ids differ."""
    owners: dict[int, str] = {}
    for name in NAMES:
        for ball in last_with_balls(name).get("balls", []):
            assert ball["id"] not in REAL_BALL_IDS
            assert owners.setdefault(ball["id"], name) == name
    fixture_ids = [recording(name)[0]["fixtures"][0] for name in NAMES]
    assert len(set(fixture_ids)) == len(fixture_ids)


@pytest.mark.parametrize("name", NAMES)
def test_no_ball_is_ever_retracted(name: str) -> None:
    """Each line carrying balls holds every ball any earlier line showed."""
    seen: set[int] = set()
    for fixture in fixtures(name):
        if "balls" in fixture:
            ids = {ball["id"] for ball in fixture["balls"]}
            assert seen <= ids
            seen = ids
    assert [ball["id"] for ball in last_with_balls(name)["balls"]] == sorted(seen)


def chase_target(fixture: Json, innings: list[Json]) -> int | None:
    if fixture["rpc_target"] is not None:
        return int(fixture["rpc_target"])
    if fixture["type"] == "Test" and len(innings) == 4:
        chasing = innings[3]["team_id"]
        return sum(i["runs"] if i["team_id"] != chasing else -i["runs"] for i in innings[:3]) + 1
    return innings[-2]["runs"] + 1 if len(innings) >= 2 else None


@pytest.mark.parametrize("name", NAMES)
def test_expected_outcome_is_the_final_line(name: str) -> None:
    """`.expected.json` says what the recording ends with: result, innings, balls, edits, states."""
    _, lines, expected = recording(name)
    final = lines[-1]["fixture"]
    assert "balls" in final
    innings = [
        {
            "scoreboard": f"S{row['inning']}",
            "team_id": row["team_id"],
            "runs": row["score"],
            "wickets": row["wickets"],
            "overs": row["overs"],
        }
        for row in sorted(final["runs"], key=lambda row: row["inning"])
    ]
    states: list[str] = []
    for line in lines:
        if not states or states[-1] != line["fixture"]["status"]:
            states.append(line["fixture"]["status"])
    amended, after = amendments(name)
    kinds = {"no-result": "no_result", "draw": "draw"}
    kind = kinds.get(final["draw_noresult"]) or ("win" if final["winner_team_id"] is not None else "tie")
    assert expected == {
        "status": final["status"],
        "winner_team_id": final["winner_team_id"],
        "draw_noresult": final["draw_noresult"],
        "super_over": final["super_over"],
        "innings": innings,
        "balls": [ball["id"] for ball in final["balls"]],
        "amended": amended,
        "result_kind": kind,
        "target": chase_target(final, innings),
        "states": states,
        "stumps_days": [int(s.removeprefix("Stump Day ")) for s in states if s.startswith("Stump Day")],
        "amended_after_finished": after,
    }


@pytest.mark.parametrize("name", [n for n in NAMES if not n.startswith("abandoned")])
def test_the_winner_follows_the_totals(name: str) -> None:
    """The winner has more runs in the deciding innings (the super over's, a revised target's)."""
    _, _, expected = recording(name)
    runs = {i["scoreboard"]: i for i in expected["innings"]}
    chase = runs["S4"] if "S4" in runs else runs["S2"]
    defending = next(i["team_id"] for i in expected["innings"] if i["team_id"] != chase["team_id"])
    won = chase["runs"] >= expected["target"]
    assert expected["winner_team_id"] == (chase["team_id"] if won else defending)


def test_rain_reduced_starts_late_shrinks_to_16_overs_and_revises_the_target() -> None:
    """Delayed from the scheduled start, 20 → 16 overs, first ball > 1 h late, `Int.` then rpc set."""
    lines = fixtures("rain-reduced")
    limits = [f["total_overs_played"] for f in lines]
    assert sorted(set(limits), reverse=True) == [20, 16] and limits == sorted(limits, reverse=True)
    first_ball = next(f["balls"][0] for f in lines if f["balls"])
    assert parse(first_ball["updated_at"]) - parse(lines[0]["starting_at"]) > timedelta(hours=1)
    interrupted = next(i for i, f in enumerate(lines) if f["status"] == "Int.")
    assert any(f["balls"] and f["balls"][-1]["scoreboard"] == "S2" for f in lines[:interrupted])
    assert all(f["rpc_target"] is None for f in lines[: interrupted + 1])
    assert lines[-1]["rpc_target"] is not None and lines[-1]["rpc_overs"] == 14


def test_super_over_follows_a_tie() -> None:
    """Equal S1 and S2 totals, then S3 and S4 with `super_over: true`."""
    runs = {i["scoreboard"]: i["runs"] for i in recording("super-over")[2]["innings"]}
    assert runs["S1"] == runs["S2"] and runs["S3"] != runs["S4"]
    assert fixtures("super-over")[-1]["super_over"] is True


@pytest.mark.parametrize(("name", "toss"), [("abandoned-no-ball", False), ("abandoned-after-toss", True)])
def test_abandoned_matches_show_no_ball(name: str, toss: bool) -> None:
    """No ball and no runs row on any line; the toss is made only in the after-toss one."""
    lines = fixtures(name)
    assert all(f["balls"] == [] and f["runs"] == [] for f in lines)
    assert (lines[-1]["toss_won_team_id"] is not None) is toss
    assert (lines[-1]["elected"] is not None) is toss


def test_edits_re_score_balls_in_place_during_and_after_the_match() -> None:
    """Same id, new score row and a later `updated_at`; one edit in play, others after `Finished`."""
    amended, after = amendments("edits")
    assert after and set(amended) - set(after)
    first_seen: dict[int, Json] = {}
    for fixture in fixtures("edits"):
        for ball in fixture["balls"]:
            first_seen.setdefault(ball["id"], ball)
    final = {ball["id"]: ball for ball in fixtures("edits")[-1]["balls"]}
    for ball_id in amended:
        assert final[ball_id]["score_id"] != first_seen[ball_id]["score_id"]
        assert parse(final[ball_id]["updated_at"]) > parse(first_seen[ball_id]["updated_at"])


def test_test_match_spans_two_days() -> None:
    """A Test with no overs limit: Lunch, Tea Break, and `Stump Day 1` followed by a quiet night."""
    lines = recording("test-two-days")[1]
    assert all(
        line["fixture"]["type"] == "Test" and line["fixture"]["total_overs_played"] is None for line in lines
    )
    statuses = {line["fixture"]["status"] for line in lines}
    assert {"Lunch", "Tea Break", "Stump Day 1", "4th Innings"} <= statuses
    stumps = next(i for i, line in enumerate(lines) if line["fixture"]["status"] == "Stump Day 1")
    night = lines[stumps + 1]["t"] - lines[stumps]["t"]
    assert 15 * 3600 <= night <= 17 * 3600
    assert lines[stumps + 1]["fixture"]["balls"] == lines[stumps]["fixture"]["balls"]


def test_missing_balls_lines_keep_runs_and_later_lines_restore_every_ball() -> None:
    """Some lines have no `balls` key while `runs` moves on; the balls come back, none lost."""
    lines = fixtures("missing-balls")
    hidden = [i for i, f in enumerate(lines) if "balls" not in f]
    assert len(hidden) >= 2 and all(lines[i]["runs"] for i in hidden)
    assert lines[hidden[0]]["runs"] != lines[hidden[0] - 1]["runs"]
    assert {f["balls"][-1]["scoreboard"] for f in lines[hidden[-1] + 1 :] if "balls" in f} >= {"S2"}
