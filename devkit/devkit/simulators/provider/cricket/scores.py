"""`/scores`: the lookup table of ball outcomes that a ball's `score_id` points at.

The table is every distinct `score` object embedded in the loaded recordings' balls (what the
provider really sent), over the rows seen in real responses and the docs (cricket.md §4), so every
id a client may meet exists even when no recording has bowled it. A recorded row wins over the
written-down one with the same id.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

# id, name, runs, bye, leg_bye, noball, noball_runs, flags (f four, s six, w wicket+out, b ball)
_KNOWN: tuple[tuple[int, str, int, int, int, int, int, str], ...] = (
    (1, "1 Bye", 0, 1, 0, 0, 0, "b"),
    (2, "1 Bye + Retired Hurt", 0, 1, 0, 0, 0, "b"),
    (3, "1 Bye + Run Out", 0, 1, 0, 0, 0, "wb"),
    (4, "1 Leg Bye", 0, 0, 1, 0, 0, "b"),
    (5, "1 Leg Bye + Run Out", 0, 0, 1, 0, 0, "wb"),
    (6, "1 Leg Bye + 4 Runs", 4, 0, 1, 0, 0, "b"),
    (7, "1 No Ball", 1, 0, 0, 1, 1, "b"),
    (8, "1 No Ball + 1 Run", 2, 0, 0, 1, 1, "b"),
    (9, "1 No Ball + 2 Run", 3, 0, 0, 1, 1, "b"),
    (10, "1 No Ball + 3 Run", 4, 0, 0, 1, 1, "b"),
    (13, "1 No Ball + Four", 5, 0, 0, 1, 1, "fb"),
    (14, "1 No Ball + 1 Leg Bye", 1, 0, 1, 1, 1, "b"),
    (15, "1 No Ball + 4 Byes", 1, 4, 0, 1, 1, "b"),
    (16, "1 No Ball + Six", 7, 0, 0, 1, 1, "sb"),
    (17, "1 Wide", 1, 0, 0, 0, 0, ""),
    (21, "1 Wide + stump Out", 1, 0, 0, 0, 0, "w"),
    (27, "2 Byes", 0, 2, 0, 0, 0, "b"),
    (30, "2 Leg Bye", 0, 0, 2, 0, 0, "b"),
    (31, "2 Wides", 2, 0, 0, 0, 0, ""),
    (40, "3 Wides", 3, 0, 0, 0, 0, ""),
    (41, "4 Byes", 0, 4, 0, 0, 0, "b"),
    (43, "4 Leg Byes", 0, 0, 4, 0, 0, "b"),
    (47, "FOUR", 4, 0, 0, 0, 0, "fb"),
    (52, "5 Wides", 5, 0, 0, 0, 0, ""),
    (53, "SIX", 6, 0, 0, 0, 0, "sb"),
    (54, "Catch Out", 0, 0, 0, 0, 0, "wb"),
    (55, "Catch Out (Sub)", 0, 0, 0, 0, 0, "wb"),
    (56, "Stump Out", 0, 0, 0, 0, 0, "wb"),
    (63, "Run Out", 0, 0, 0, 0, 0, "wb"),
    (65, "Run Out + 1 Run", 1, 0, 0, 0, 0, "wb"),
    (66, "Run Out + 1 Run (Sub)", 1, 0, 0, 0, 0, "wb"),
    (67, "Run Out + 2 Runs", 2, 0, 0, 0, 0, "wb"),
    (69, "1 Run", 1, 0, 0, 0, 0, "b"),
    (70, "2 Runs", 2, 0, 0, 0, 0, "b"),
    (71, "3 Runs", 3, 0, 0, 0, 0, "b"),
    (72, "4 Runs", 4, 0, 0, 0, 0, "b"),
    (73, "5 Runs", 5, 0, 0, 0, 0, "b"),
    (74, "6 Runs", 6, 0, 0, 0, 0, "b"),
    (79, "Clean Bowled", 0, 0, 0, 0, 0, "wb"),
    (82, "No Run", 0, 0, 0, 0, 0, "b"),
    (83, "LBW OUT", 0, 0, 0, 0, 0, "wb"),
)


def known_rows() -> list[dict[str, Any]]:
    """The rows written down from real responses and the docs, as the API shows them."""
    return [
        {
            "resource": "scores",
            "id": score_id,
            "name": name,
            "runs": runs,
            "four": "f" in flags,
            "six": "s" in flags,
            "bye": bye,
            "leg_bye": leg_bye,
            "noball": noball,
            "noball_runs": noball_runs,
            "is_wicket": "w" in flags,
            "ball": "b" in flags,
            "out": "w" in flags,
        }
        for score_id, name, runs, bye, leg_bye, noball, noball_runs, flags in _KNOWN
    ]


def score_table(recorded: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The `/scores` rows by id: the known ones, replaced by any recorded row with the same id."""
    rows: dict[int, dict[str, Any]] = {row["id"]: row for row in known_rows()}
    for row in recorded:
        rows[row["id"]] = dict(row)
    return [rows[score_id] for score_id in sorted(rows)]
