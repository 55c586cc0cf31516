"""Turn a cricket match script into recording lines: the provider's whole fixture after every change.

A scenario drives one `MatchBuilder`: it moves recorded time on (`wait`), changes fixture fields
(`show`), starts innings and delivers balls in the scripts' notation (`TOKENS` in `cricket_data`),
edits a ball in place (`edit`), and finally asks for the `expected()` outcome. Every change is one
line carrying the whole fixture (all balls so far); the `runs` include is recomputed from the balls on
every line, so it always agrees with them, edits included.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from devkit.simulators.provider.scenarios.cricket_data import (
    PLAYERS,
    SCORES,
    SQUADS,
    TEAMS,
    TOKENS,
    JsonObject,
    Squad,
)

_NULL_DL = {"score": None, "overs": None, "wickets_out": None}


def iso(moment: datetime) -> str:
    """The provider's timestamp form: `2024-03-22T14:33:01.000000Z`."""
    return moment.strftime("%Y-%m-%dT%H:%M:%S.000000Z")


def overs_of(legal: int) -> float:
    """Legal balls as the provider's overs float: 112 balls → 18.4."""
    return round(legal // 6 + (legal % 6) / 10, 1)


def is_legal(score: JsonObject) -> bool:
    """A delivery that counts towards the over: not a wide (`ball` false), not a no-ball."""
    return bool(score["ball"]) and score["noball"] == 0


def delivery_total(score: JsonObject) -> int:
    """Runs the delivery adds to the total (cricket.md §1: `runs` excludes byes and leg-byes)."""
    return int(score["runs"] + score["bye"] + score["leg_bye"])


def _runs_ran(score: JsonObject) -> int:
    """Runs the batters ran, which decides whether they crossed."""
    penalty = 1 if not score["ball"] else score["noball"]
    boundary = 4 if score["four"] else 6 if score["six"] else 0
    return delivery_total(score) - penalty - boundary


@dataclass(frozen=True)
class MatchSpec:
    """The fixed fields of one fixture and where its recording starts."""

    fixture_id: int
    round: str
    kind: str
    starting_at: datetime
    lead_in: timedelta
    local_id: int
    visitor_id: int
    total_overs: int | None
    powerplay: str | None
    first_ball_id: int
    label: str

    @property
    def header_start(self) -> datetime:
        """The recording's t = 0: a while before the scheduled start, like the real one."""
        return self.starting_at - self.lead_in


@dataclass
class Innings:
    """The state of the innings being bowled: who is in, who bowls, how many legal balls so far."""

    scoreboard: str
    batting: Squad
    bowling: Squad
    bowlers: tuple[int, ...]
    striker: int
    non_striker: int
    slots: list[int]
    next_in: int = 2
    legal: int = 0
    over_index: int = 0
    score: int = 0
    wickets: int = 0

    @property
    def bowler(self) -> int:
        """This over's bowler: the innings' rotation, so nobody bowls two overs running."""
        return self.bowlers[self.over_index % len(self.bowlers)]

    @property
    def all_out(self) -> bool:
        """Ten wickets down."""
        return self.wickets == 10

    @property
    def can_lose_wicket(self) -> bool:
        """Another wicket either brings in a batter the squad has a player object for, or is the tenth."""
        return self.wickets == 9 or self.next_in < len(self.batting.batting_order)


@dataclass
class BallIds:
    """The provider's one global ball-id sequence: steps of 3, with the odd gap (a gap is not a deletion)."""

    rng: random.Random
    last: int

    def next(self) -> int:
        """The id of the next delivery."""
        self.last += 3 * (self.rng.randint(2, 4) if self.rng.random() < 0.1 else 1)
        return self.last

    def skip(self, low: int, high: int) -> None:
        """A longer gap, as between innings, when other fixtures take ids."""
        self.last += 3 * self.rng.randint(low, high)


@dataclass
class MatchBuilder:
    """Plays a match script and records the provider's fixture after every change."""

    spec: MatchSpec
    rng: random.Random
    t: int = 0
    lines: list[JsonObject] = field(default_factory=list)
    balls: list[JsonObject] = field(default_factory=list)
    innings: Innings | None = None
    hide_balls: bool = False
    amended: list[int] = field(default_factory=list)
    amended_after_finished: list[int] = field(default_factory=list)
    fixture: JsonObject = field(init=False)
    ids: BallIds = field(init=False)

    def __post_init__(self) -> None:
        spec = self.spec
        self.ids = BallIds(self.rng, spec.first_ball_id - 3)
        self.fixture = {
            "resource": "fixtures",
            "id": spec.fixture_id,
            "league_id": 1,
            "season_id": 1484,
            "stage_id": 5219,
            "round": spec.round,
            "localteam_id": spec.local_id,
            "visitorteam_id": spec.visitor_id,
            "starting_at": iso(spec.starting_at),
            "type": spec.kind,
            "live": True,
            "status": "NS",
            "last_period": None,
            "note": "",
            "venue_id": 58,
            "toss_won_team_id": None,
            "winner_team_id": None,
            "draw_noresult": None,
            "first_umpire_id": 1932,
            "second_umpire_id": 335,
            "tv_umpire_id": 158,
            "referee_id": 32,
            "man_of_match_id": None,
            "man_of_series_id": None,
            "total_overs_played": spec.total_overs,
            "elected": None,
            "super_over": False,
            "follow_on": False,
            "localteam_dl_data": dict(_NULL_DL),
            "visitorteam_dl_data": dict(_NULL_DL),
            "rpc_overs": None,
            "rpc_target": None,
            "weather_report": [],
        }

    # -- time and fixture fields ---------------------------------------------------------------

    @property
    def now(self) -> datetime:
        """The recorded wall-clock time of `t`."""
        return self.spec.header_start + timedelta(seconds=self.t)

    def wait(self, seconds: float, jitter: float = 0.0) -> None:
        """Move recorded time on by `seconds`, give or take up to `jitter` seconds."""
        self.t += max(1, round(seconds + self.rng.uniform(-jitter, jitter)))

    def wait_until(self, moment: datetime) -> None:
        """Move recorded time on to the wall-clock `moment`."""
        target = round((moment - self.spec.header_start).total_seconds())
        if target < self.t:
            raise ValueError(f"{moment} is before t={self.t}")
        self.t = target

    def show(self, **fields: Any) -> None:
        """Change fixture fields and record the fixture as it now is."""
        unknown = set(fields) - set(self.fixture)
        if unknown:
            raise KeyError(f"not fixture fields: {sorted(unknown)}")
        self.fixture.update(fields)
        self.emit()

    def emit(self) -> None:
        """Record one line: the whole fixture, its balls (unless hidden), runs and both teams."""
        fixture = dict(self.fixture)
        if not self.hide_balls:
            fixture["balls"] = list(self.balls)
        fixture["runs"] = self._runs_rows()
        fixture["localteam"] = TEAMS[self.spec.local_id]
        fixture["visitorteam"] = TEAMS[self.spec.visitor_id]
        self.lines.append({"t": float(self.t), "fixture": fixture})

    def _runs_rows(self) -> list[JsonObject]:
        rows: dict[str, JsonObject] = {}
        for ball in self.balls:
            board = ball["scoreboard"]
            inning = int(board[1:])
            row = rows.setdefault(
                board,
                {
                    "resource": "runs",
                    "id": 904_000 + (self.spec.fixture_id % 1000) * 10 + inning,
                    "fixture_id": self.spec.fixture_id,
                    "team_id": ball["team_id"],
                    "inning": inning,
                    "score": 0,
                    "wickets": 0,
                    "pp1": self.spec.powerplay,
                    "pp2": None,
                    "pp3": None,
                    "overs": 0,
                    "updated_at": iso(self.now),
                },
            )
            row["score"] += delivery_total(ball["score"])
            row["wickets"] += 1 if ball["score"]["out"] else 0
            row["overs"] += 1 if is_legal(ball["score"]) else 0
        for row in rows.values():
            row["overs"] = overs_of(row["overs"])
        return list(rows.values())

    # -- innings and balls ---------------------------------------------------------------------

    def start_innings(self, scoreboard: str, batting: int, bowlers: tuple[int, ...] | None = None) -> Innings:
        """Open `scoreboard` for `batting`; `bowlers` is the over-by-over rotation (default the squad's)."""
        bowling = SQUADS[self.spec.visitor_id if batting == self.spec.local_id else self.spec.local_id]
        squad = SQUADS[batting]
        opener, partner = squad.batting_order[:2]
        if self.innings is not None:
            self.ids.skip(15, 45)
        self.innings = Innings(
            scoreboard=scoreboard,
            batting=squad,
            bowling=bowling,
            bowlers=bowlers or bowling.bowlers,
            striker=partner,
            non_striker=opener,
            slots=[opener, partner],
        )
        return self.innings

    def bowl(self, tokens: str) -> None:
        """Bowl deliveries written as tokens, e.g. `"1 . 4 wd 1lb ct"`, wherever the over stands."""
        for token in tokens.split():
            self.deliver(token)

    def over(self, tokens: str) -> None:
        """Bowl one whole over written as tokens: it must start the over and hold six legal balls."""
        innings = self._current()
        if innings.legal % 6:
            raise ValueError(f"{innings.scoreboard}: over started after {innings.legal} legal balls")
        self.bowl(tokens)
        if innings.legal % 6:
            raise ValueError(f"{innings.scoreboard}: over {tokens!r} has {innings.legal % 6} legal balls")

    def overs(self, *scripts: str) -> None:
        """Bowl several whole overs."""
        for script in scripts:
            self.over(script)

    def deliver(self, token: str) -> JsonObject:
        """Bowl one delivery after a realistic gap and record the fixture with it."""
        innings = self._current()
        score = SCORES[TOKENS[token]]
        if innings.all_out:
            raise ValueError(f"{innings.scoreboard}: the innings is over, all out")
        if score["out"] and not innings.can_lose_wicket:
            raise ValueError(f"{innings.scoreboard}: no batter left to come in")
        self.wait(40, jitter=30)
        ball = self._ball(innings, score)
        self.balls.append(ball)
        self._advance(innings, score)
        self.emit()
        if score["out"]:
            self.wait(75, jitter=30)  # the new batter walks in
        elif innings.legal % 6 == 0 and is_legal(score):
            self.wait(35, jitter=15)  # change of ends
        return ball

    def _current(self) -> Innings:
        if self.innings is None:
            raise ValueError("no innings started")
        return self.innings

    def _ball(self, innings: Innings, score: JsonObject) -> JsonObject:
        over, in_over = divmod(innings.legal, 6)
        out = innings.striker if score["out"] else None
        catcher: int | None = None
        if score["id"] == 56:
            catcher = innings.bowling.keeper
        elif score["id"] in (54, 63, 65):
            catcher = self.rng.choice(innings.bowling.fielders)
        return {
            "resource": "balls",
            "id": self.ids.next(),
            "fixture_id": self.spec.fixture_id,
            "team_id": innings.batting.team_id,
            "ball": float(f"{over}.{in_over + 1}"),
            "scoreboard": innings.scoreboard,
            "batsman_one_on_creeze_id": innings.slots[0],
            "batsman_two_on_creeze_id": innings.slots[1],
            "batsman_id": innings.striker,
            "bowler_id": innings.bowler,
            "batsmanout_id": out,
            "catchstump_id": catcher,
            "runout_by_id": None,
            "score_id": score["id"],
            "batsman": PLAYERS[innings.striker],
            "bowler": PLAYERS[innings.bowler],
            "score": score,
            "team": TEAMS[innings.batting.team_id],
            "updated_at": iso(self.now),
        }

    def _advance(self, innings: Innings, score: JsonObject) -> None:
        innings.score += delivery_total(score)
        if score["out"]:
            innings.wickets += 1
            if not innings.all_out:
                innings.next_in += 1
                incoming = innings.batting.batting_order[innings.next_in - 1]
                innings.slots[innings.slots.index(innings.striker)] = incoming
                innings.striker = incoming
        if _runs_ran(score) % 2:
            innings.striker, innings.non_striker = innings.non_striker, innings.striker
        if is_legal(score):
            innings.legal += 1
            if innings.legal % 6 == 0:
                innings.striker, innings.non_striker = innings.non_striker, innings.striker
                innings.over_index += 1

    def edit(self, ball_id: int, token: str) -> None:
        """Re-score ball `ball_id` in place (same id, new score row, `updated_at` moved) and record it."""
        index = next(i for i, ball in enumerate(self.balls) if ball["id"] == ball_id)
        old = self.balls[index]
        score = SCORES[TOKENS[token]]
        if is_legal(score) != is_legal(old["score"]) or score["out"] != old["score"]["out"]:
            raise ValueError("an edit that changes the ball count or a wicket would renumber the innings")
        self.balls[index] = {**old, "score_id": score["id"], "score": score, "updated_at": iso(self.now)}
        self.amended.append(ball_id)
        if self.fixture["status"] == "Finished":
            self.amended_after_finished.append(ball_id)
        self.emit()

    def find_ball(self, scoreboard: str, number: float, token: str) -> int:
        """The id of the first delivery numbered `number` in `scoreboard` scored as `token`."""
        score_id = TOKENS[token]
        return int(
            next(
                ball["id"]
                for ball in self.balls
                if ball["scoreboard"] == scoreboard
                and ball["ball"] == number
                and ball["score_id"] == score_id
            )
        )

    def totals(self) -> dict[str, JsonObject]:
        """The `runs` rows as they stand, by scoreboard."""
        return {f"S{row['inning']}": row for row in self._runs_rows()}

    # -- outcome -------------------------------------------------------------------------------

    def expected(self) -> JsonObject:
        """The outcome a consumer must reach, in the `.expected.json` form, from the final state."""
        fixture = self.fixture
        rows = self._runs_rows()
        statuses: list[str] = []
        for line in self.lines:
            status = line["fixture"]["status"]
            if not statuses or statuses[-1] != status:
                statuses.append(status)
        if fixture["draw_noresult"] == "no-result":
            kind = "no_result"
        elif fixture["draw_noresult"] == "draw":
            kind = "draw"
        elif fixture["winner_team_id"] is not None:
            kind = "win"
        else:
            kind = "tie"
        return {
            "status": fixture["status"],
            "winner_team_id": fixture["winner_team_id"],
            "draw_noresult": fixture["draw_noresult"],
            "super_over": fixture["super_over"],
            "innings": [
                {
                    "scoreboard": f"S{row['inning']}",
                    "team_id": row["team_id"],
                    "runs": row["score"],
                    "wickets": row["wickets"],
                    "overs": row["overs"],
                }
                for row in rows
            ],
            "balls": [ball["id"] for ball in self.balls],
            "amended": sorted(set(self.amended)),
            "result_kind": kind,
            "target": self._target(rows),
            "states": statuses,
            "stumps_days": sorted(
                {
                    int(status.removeprefix("Stump Day "))
                    for status in statuses
                    if status.startswith("Stump Day")
                }
            ),
            "amended_after_finished": sorted(set(self.amended_after_finished)),
        }

    def _target(self, rows: list[JsonObject]) -> int | None:
        if self.fixture["rpc_target"] is not None:
            return int(self.fixture["rpc_target"])
        if len(rows) < 2:
            return None
        if self.spec.kind == "Test" and len(rows) == 4:
            chasing = rows[3]["team_id"]
            other = sum(row["score"] for row in rows if row["team_id"] != chasing)
            own = sum(row["score"] for row in rows[:3] if row["team_id"] == chasing)
            return int(other - own + 1)
        return int(rows[-2]["score"] + 1)
