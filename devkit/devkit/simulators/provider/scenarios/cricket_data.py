"""The real provider objects the cricket scenarios are built from.

Teams, players and score rows are copied field for field from the real IPL recording (fixture 58328,
Chennai Super Kings v Royal Challengers Bengaluru) and from the score-row table of `cricket.md` §4, so
a generated ball looks exactly like a real one. Only these two sides have real player objects, so every
scenario is played between them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

JsonObject = dict[str, Any]

CSK = 2
RCB = 8

TEAMS: dict[int, JsonObject] = {
    CSK: {
        "resource": "teams",
        "id": CSK,
        "name": "Chennai Super Kings",
        "code": "CSK",
        "image_path": "https://cdn.sportmonks.com/images/cricket/teams/2/2.png",
        "country_id": 153732,
        "national_team": False,
        "updated_at": "2022-03-03T15:05:47.000000Z",
    },
    RCB: {
        "resource": "teams",
        "id": RCB,
        "name": "Royal Challengers Bengaluru",
        "code": "RCB",
        "image_path": "https://cdn.sportmonks.com/images/cricket/teams/8/8.png",
        "country_id": 153732,
        "national_team": False,
        "updated_at": "2024-03-26T09:03:09.000000Z",
    },
}

_POSITIONS = {1: "Batsman", 2: "Bowler", 3: "Wicketkeeper", 4: "Allrounder", 14: "Batting Allrounder"}

# id, country_id, firstname, lastname, image bucket, date of birth, batting style, bowling style,
# position id, updated_at. One player a line reads as the table it is, so the formatter leaves it be.
# fmt: off
_PLAYER_ROWS: tuple[tuple[int, int, str, str, int, str, str, str | None, int, str], ...] = (
    (40, 98, "Glenn", "Maxwell", 8, "1988-10-14", "right-hand-bat", "right-arm-offbreak", 4, "2023-05-06T11:18:45.000000Z"),
    (46, 153732, "Virat", "Kohli", 14, "1988-11-05", "right-hand-bat", "right-arm-fast-medium", 1, "2023-03-22T10:36:41.000000Z"),
    (51, 153732, "Ajinkya", "Rahane", 19, "1988-06-06", "right-hand-bat", "right-arm-fast-medium", 1, "2023-03-23T15:21:44.000000Z"),
    (55, 153732, "Ravindra", "Jadeja", 23, "1988-12-06", "left-hand-bat", "slow-left-arm-orthodox", 4, "2023-03-25T20:10:12.000000Z"),
    (59, 153732, "Mohammed", "Siraj", 27, "1994-03-13", "right-hand-bat", "right-arm-fast-medium", 2, "2020-04-05T07:39:51.000000Z"),
    (75, 146, "Faf", "du Plessis", 11, "1984-07-13", "right-hand-bat", "legbreak", 1, "2023-03-23T16:02:16.000000Z"),
    (115, 24150873, "Alzarri", "Joseph", 19, "1996-11-20", "right-hand-bat", "right-arm-fast-medium", 2, "2020-03-31T08:06:33.000000Z"),
    (237, 155043, "Mustafizur", "Rahman", 13, "1995-09-06", "left-hand-bat", "left-arm-fast-medium", 2, "2020-02-19T08:11:30.000000Z"),
    (275, 153732, "Dinesh", "Karthik", 19, "1985-06-01", "right-hand-bat", None, 3, "2020-04-01T16:33:10.000000Z"),
    (279, 153732, "Deepak", "Chahar", 23, "1992-08-07", "right-hand-bat", "right-arm-fast-medium", 2, "2020-03-31T12:20:23.000000Z"),
    (630, 98, "Cameron", "Green", 22, "1999-06-03", "right-hand-bat", "right-arm-fast-medium", 4, "2023-05-06T11:07:15.000000Z"),
    (2999, 153732, "Karn", "Sharma", 23, "1987-10-23", "left-hand-bat", "legbreak-googly", 2, "2020-04-03T06:03:24.000000Z"),
    (3389, 153732, "Mayank", "Dagar", 29, "1996-11-11", "right-hand-bat", "slow-left-arm-orthodox", 2, "2020-04-04T11:08:43.000000Z"),
    (4856, 153732, "Ruturaj", "Gaikwad", 24, "1997-01-31", "right-hand-bat", "right-arm-offbreak", 1, "2021-04-25T09:07:15.000000Z"),
    (4940, 153732, "Shivam", "Dube", 12, "1993-06-26", "left-hand-bat", "right-arm-fast-medium", 4, "2023-03-25T20:10:34.000000Z"),
    (5594, 2817, "Rachin", "Ravindra", 26, "1999-11-18", "left-hand-bat", "slow-left-arm-orthodox", 14, "2023-03-16T19:13:43.000000Z"),
    (5678, 2817, "Daryl", "Mitchell", 14, "1991-05-20", "right-hand-bat", "right-arm-fast-medium", 4, "2020-04-01T14:10:59.000000Z"),
    (6697, 153732, "Tushar", "Deshpande", 9, "1995-05-15", "left-hand-bat", "right-arm-fast-medium", 2, "2020-09-17T15:21:49.000000Z"),
    (9921, 153732, "Anuj", "Rawat", 1, "1999-10-17", "left-hand-bat", None, 3, "2020-03-31T14:50:27.000000Z"),
    (21942, 38404, "Maheesh", "Theekshana", 22, "2000-08-01", "right-hand-bat", "right-arm-offbreak", 2, "2023-03-14T12:24:17.000000Z"),
    (26027, 153732, "Rajat", "Patidar", 11, "1993-06-01", "right-hand-bat", "right-arm-offbreak", 1, "2023-03-23T16:02:29.000000Z"),
    (36524, 153732, "Yash", "Dayal", 12, "1997-12-13", "left-hand-bat", "left-arm-fast-medium", 2, "2023-03-14T12:00:13.000000Z"),
)
# fmt: on


def _player(row: tuple[int, int, str, str, int, str, str, str | None, int, str]) -> JsonObject:
    pid, country, first, last, bucket, born, batting, bowling, position, updated = row
    return {
        "resource": "players",
        "id": pid,
        "country_id": country,
        "firstname": first,
        "lastname": last,
        "fullname": f"{first} {last}",
        "image_path": f"https://cdn.sportmonks.com/images/cricket/players/{bucket}/{pid}.png",
        "dateofbirth": born,
        "gender": "m",
        "battingstyle": batting,
        "bowlingstyle": bowling,
        "position": {"resource": "positions", "id": position, "name": _POSITIONS[position]},
        "updated_at": updated,
    }


PLAYERS: dict[int, JsonObject] = {row[0]: _player(row) for row in _PLAYER_ROWS}


@dataclass(frozen=True)
class Squad:
    """A side as the scenarios use it: batting order, bowlers, keeper and the other fielders' ids.

    The keeper and fielders may be players with no embedded object (MS Dhoni, 274, kept wicket in the
    real match but never batted or bowled there): they only ever appear as `catchstump_id`.
    """

    team_id: int
    batting_order: tuple[int, ...]
    bowlers: tuple[int, ...]
    keeper: int
    fielders: tuple[int, ...]


SQUADS: dict[int, Squad] = {
    # Ten players with real objects: CSK can lose at most nine wickets in a scenario.
    CSK: Squad(
        team_id=CSK,
        batting_order=(4856, 5594, 51, 5678, 4940, 55, 279, 21942, 6697, 237),
        bowlers=(279, 6697, 21942, 237, 55),
        keeper=274,
        fielders=(4856, 5594, 51, 5678, 4940, 55, 274, 279, 21942, 237),
    ),
    RCB: Squad(
        team_id=RCB,
        batting_order=(75, 46, 26027, 40, 630, 9921, 275, 2999, 3389, 115, 59),
        bowlers=(59, 36524, 115, 2999, 3389, 630),
        keeper=275,
        fielders=(75, 46, 26027, 40, 630, 9921, 275, 2999, 3389, 115, 59),
    ),
}


def _score(
    sid: int,
    name: str,
    runs: int = 0,
    *,
    bye: int = 0,
    leg_bye: int = 0,
    noball: int = 0,
    four: bool = False,
    six: bool = False,
    legal: bool = True,
    out: bool = False,
) -> JsonObject:
    return {
        "resource": "scores",
        "id": sid,
        "name": name,
        "runs": runs,
        "four": four,
        "six": six,
        "bye": bye,
        "leg_bye": leg_bye,
        "noball": noball,
        "noball_runs": noball,
        "is_wicket": out,
        "ball": legal,
        "out": out,
    }


# cricket.md §4: a wide is the only row with `ball` false; a no-ball has `ball` true and `noball` 1.
SCORES: dict[int, JsonObject] = {
    row["id"]: row
    for row in (
        _score(82, "No Run"),
        _score(69, "1 Run", 1),
        _score(70, "2 Runs", 2),
        _score(71, "3 Runs", 3),
        _score(47, "FOUR", 4, four=True),
        _score(53, "SIX", 6, six=True),
        _score(1, "1 Bye", bye=1),
        _score(27, "2 Byes", bye=2),
        _score(41, "4 Byes", bye=4),
        _score(4, "1 Leg Bye", leg_bye=1),
        _score(30, "2 Leg Bye", leg_bye=2),
        _score(43, "4 Leg Byes", leg_bye=4),
        _score(17, "1 Wide", 1, legal=False),
        _score(31, "2 Wides", 2, legal=False),
        _score(52, "5 Wides", 5, legal=False),
        _score(7, "1 No Ball", 1, noball=1),
        _score(8, "1 No Ball + 1 Run", 2, noball=1),
        _score(13, "1 No Ball + Four", 5, noball=1, four=True),
        _score(16, "1 No Ball + Six", 7, noball=1, six=True),
        _score(14, "1 No Ball + 1 Leg Bye", 1, leg_bye=1, noball=1),
        _score(54, "Catch Out", out=True),
        _score(79, "Clean Bowled", out=True),
        _score(83, "LBW OUT", out=True),
        _score(56, "Stump Out", out=True),
        _score(63, "Run Out", out=True),
        _score(65, "Run Out + 1 Run", 1, out=True),
    )
}

# The match scripts' notation for a delivery: the score row it stands for.
TOKENS: dict[str, int] = {
    ".": 82,
    "1": 69,
    "2": 70,
    "3": 71,
    "4": 47,
    "6": 53,
    "1b": 1,
    "2b": 27,
    "4b": 41,
    "1lb": 4,
    "2lb": 30,
    "4lb": 43,
    "wd": 17,
    "2wd": 31,
    "5wd": 52,
    "nb": 7,
    "nb1": 8,
    "nb4": 13,
    "nb6": 16,
    "nb1lb": 14,
    "ct": 54,
    "bwd": 79,
    "lbw": 83,
    "st": 56,
    "ro": 63,
    "ro1": 65,
}
