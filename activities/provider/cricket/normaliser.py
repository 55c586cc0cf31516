"""The pure SportMonks Cricket v2 → domain normaliser: fixture JSON in, `Snapshot` out.

The same contract as the football `activities.provider.normaliser`: deterministic and
side-effect-free (it can run inside a Temporal workflow), and whatever the input it returns a
`Snapshot` or raises `ProviderPayloadError` naming the first bad field (`balls.3.score.runs`).

Each provider ball becomes one item of the `balls` stream carrying a `BallDetail`, with the
arithmetic of cricket.md §1/§4 (the provider's `runs` include no-ball penalties and wides but not
byes or leg-byes); the board is folded from those balls by `domain.cricket_scoring`.

Stdlib, pydantic and project modules only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal, TypeVar

from pydantic import BaseModel, ValidationError

from activities.provider.cricket.payload import RawBall, RawCricketFixture, RawRuns, RawTeam, ScoreRow
from activities.provider.cricket.statuses import cricket_state, stumps_day
from activities.provider.normaliser import INTERNAL_ERROR, ProviderPayloadError, join_path, listed_fixtures
from domain.cricket.board import BOWLER_CREDITED, BallDetail, Dismissal, cricket_fixture_id
from domain.cricket_scoring import MatchFacts, ReportedInnings, score_match
from domain.snapshot import Item, ItemType, Participants, Side, Snapshot, Sport, Stream, Team

_Model = TypeVar("_Model", bound=BaseModel)

# The score row's name is the only place the kind of dismissal is written; first match wins.
_DISMISSALS: tuple[tuple[str, Dismissal], ...] = (
    ("retired", Dismissal.RETIRED),
    ("run out", Dismissal.RUN_OUT),
    ("hit wicket", Dismissal.HIT_WICKET),
    ("stump", Dismissal.STUMPED),
    ("lbw", Dismissal.LBW),
    ("bowled", Dismissal.BOWLED),
    ("catch", Dismissal.CAUGHT),
    ("caught", Dismissal.CAUGHT),
)


def normalise_cricket_fixture(payload: object, scores: Mapping[int, ScoreRow] | None = None) -> Snapshot:
    """Normalise one Cricket v2 fixture.

    Args:
        payload: a decoded fixture with its includes, or a single-fixture envelope `{"data": {...}}`
            (then error paths start with `data.`).
        scores: the `/scores` table (`parse_score_rows`), used for a ball that carries a
            `score_id` without an embedded `score`. An id found nowhere is kept as an unknown
            outcome, never dropped.

    Raises:
        ProviderPayloadError: the payload is not a cricket fixture. Nothing else is ever raised.
    """
    prefix = ""
    if isinstance(payload, dict) and "id" not in payload and ("data" in payload or "message" in payload):
        if "data" not in payload:
            raise ProviderPayloadError("data", "the response has no data", code="missing")
        payload, prefix = payload["data"], "data"
    return _guarded(payload, scores or {}, prefix, index=None)


def normalise_cricket_fixtures(
    response_data: object, scores: Mapping[int, ScoreRow] | None = None
) -> list[Snapshot | ProviderPayloadError]:
    """Normalise a list endpoint's fixtures one by one, so one bad item spoils only itself.

    Args:
        response_data: the `data` list, or the whole envelope; an envelope without `data` but with
            a `message` (the "no results" body) is an empty list.
        scores: the `/scores` table, as for `normalise_cricket_fixture`.

    Raises:
        ProviderPayloadError: the container itself is neither a list nor an envelope.
    """
    data, prefix = listed_fixtures(response_data)
    table = scores or {}
    results: list[Snapshot | ProviderPayloadError] = []
    for index, item in enumerate(data):
        try:
            results.append(_guarded(item, table, join_path(prefix, str(index)), index))
        except ProviderPayloadError as error:
            results.append(error)
    return results


def parse_score_rows(payload: object) -> dict[int, ScoreRow]:
    """The `/scores` answer (its `data` list, or the whole envelope) as a lookup table by id.

    Raises:
        ProviderPayloadError: the answer is not a list of score rows.
    """
    rows, prefix = payload, ""
    if isinstance(payload, dict) and "data" in payload:
        rows, prefix = payload["data"], "data"
    if not isinstance(rows, list):
        raise ProviderPayloadError(prefix, "expected a list of score rows", code="list_type")
    table: dict[int, ScoreRow] = {}
    for index, row in enumerate(rows):
        parsed = _validated(ScoreRow, row, join_path(prefix, str(index)), None, None)
        table[parsed.id] = parsed
    return table


def _guarded(payload: object, scores: Mapping[int, ScoreRow], prefix: str, index: int | None) -> Snapshot:
    fixture_id = _fixture_id(payload)
    try:
        return _snapshot(_validated(RawCricketFixture, payload, prefix, index, fixture_id), scores)
    except ProviderPayloadError:
        raise
    except Exception as exc:
        # A validated payload that still fails to convert is a normaliser bug: inside a workflow
        # any other exception would fail the task and retry forever, so it is reported typed.
        reason = f"normaliser failed: {type(exc).__name__}"
        raise ProviderPayloadError(prefix, reason, INTERNAL_ERROR, index, fixture_id) from exc


def _validated(
    model: type[_Model], payload: object, prefix: str, index: int | None, fixture_id: int | None
) -> _Model:
    try:
        return model.model_validate(payload)
    except ValidationError as exc:
        first = exc.errors(include_url=False, include_input=False, include_context=False)[0]
        path = join_path(prefix, ".".join(str(part) for part in first["loc"]))
        # pydantic would name our internal Raw* class; the provider's shape is what matters.
        reason = "Input should be an object" if first["type"] == "model_type" else first["msg"]
        raise ProviderPayloadError(
            path, reason.removeprefix("Value error, "), first["type"], index, fixture_id
        ) from None


def _snapshot(raw: RawCricketFixture, scores: Mapping[int, ScoreRow]) -> Snapshot:
    teams = Participants(
        home=_team(raw.localteam_id, raw.localteam, raw.winner_team_id),
        away=_team(raw.visitorteam_id, raw.visitorteam, raw.winner_team_id),
    )
    state = cricket_state(raw.status)
    note = raw.note or None
    facts = MatchFacts(
        state=state,
        format=raw.type,
        scheduled_overs=raw.total_overs_played,
        home_team_id=teams.home.id if teams.home else None,
        away_team_id=teams.away.id if teams.away else None,
        super_over=bool(raw.super_over),
        toss_won_team_id=raw.toss_won_team_id,
        elected=raw.elected,
        stumps_day=stumps_day(raw.status),
        winner_team_id=raw.winner_team_id,
        declared=_declared(raw.draw_noresult),
        note=note,
        revised_target=raw.rpc_target,
        revised_overs=None if raw.rpc_overs is None else int(raw.rpc_overs),
        reported=tuple(_reported(row) for row in raw.runs or ()),
    )
    balls = None if raw.balls is None else _balls(raw.balls, teams, scores)
    scored = score_match(balls or (), facts)
    return Snapshot(
        sport=Sport.CRICKET,
        fixture_id=cricket_fixture_id(raw.id),
        league_id=raw.league_id,
        season_id=raw.season_id,
        name=f"{teams.home.name} vs {teams.away.name}"
        if teams.home and teams.home.name and teams.away and teams.away.name
        else None,
        kickoff=raw.starting_at,
        state=state,
        provider_state=raw.status,
        result_info=note,
        participants=teams,
        balls=None if balls is None else scored.balls,
        cricket=scored.board,
    )


def _team(team_id: int | None, embedded: RawTeam | None, winner_id: int | None) -> Team | None:
    # The base `*team_id` decides; the embedded team only names it when it is the same team.
    if team_id is None:
        team_id = embedded.id if embedded else None
    if team_id is None:
        return None
    named = embedded if embedded is not None and embedded.id == team_id else None
    return Team(
        id=team_id,
        name=named.name if named else None,
        short_code=named.code if named else None,
        image_path=named.image_path if named else None,
        winner=None if winner_id is None else winner_id == team_id,
    )


def _declared(draw_noresult: str | None) -> Literal["draw", "no_result"] | None:
    # `"draw"` for a drawn Test, `"no-result"` on abandonment; any other text is no result either.
    if draw_noresult is None:
        return None
    return "draw" if draw_noresult.strip().casefold() == "draw" else "no_result"


def _reported(row: RawRuns) -> ReportedInnings:
    legal_balls = None
    if row.overs is not None:
        overs, balls = _over_and_ball(row.overs)
        legal_balls = overs * 6 + balls
    return ReportedInnings(
        number=row.inning, team_id=row.team_id, runs=row.score, wickets=row.wickets, legal_balls=legal_balls
    )


def _over_and_ball(value: float) -> tuple[int, int]:
    """`18.4` → (18, 4). Rounded on tenths, so 0.1 and 19.6 survive their binary floats."""
    return divmod(round(value * 10), 10)


def _balls(rows: Sequence[RawBall], teams: Participants, scores: Mapping[int, ScoreRow]) -> tuple[Item, ...]:
    # Wides and no-balls repeat the next legal ball's number, so the id is the only identity and
    # the bowling order; a repeated id is the same ball, the last occurrence wins.
    by_id = {row.id: _item(row, teams, scores) for row in rows}
    return tuple(by_id[ball_id] for ball_id in sorted(by_id))


def _item(raw: RawBall, teams: Participants, scores: Mapping[int, ScoreRow]) -> Item:
    row = _score_row(raw, scores)
    detail = _detail(raw, row)
    return Item(
        stream=Stream.BALLS,
        provider_id=raw.id,
        type=ItemType.WICKET if detail.wicket else ItemType.BALL,
        provider_type_id=raw.score_id,
        side=_side_of(raw.team_id, teams),
        participant_id=raw.team_id,
        player_id=raw.batsman_id,
        player_name=raw.batsman.fullname if raw.batsman else None,
        related_player_id=raw.bowler_id,
        related_player_name=raw.bowler.fullname if raw.bowler else None,
        result=row.name if row else None,
        ball=detail,
    )


def _score_row(raw: RawBall, scores: Mapping[int, ScoreRow]) -> ScoreRow | None:
    # `score_id` is the reference; the embedded row is used when it is that row.
    if raw.score is not None and raw.score.id == raw.score_id:
        return raw.score
    return scores.get(raw.score_id)


def _detail(raw: RawBall, row: ScoreRow | None) -> BallDetail:
    over, number = _over_and_ball(raw.ball)
    where = {
        "scoreboard": raw.scoreboard,
        "innings": int(raw.scoreboard[1]),
        "over": over,
        "ball": number,
        "batter_id": raw.batsman_id,
        "non_striker_id": _non_striker(raw),
        "bowler_id": raw.bowler_id,
        "score_id": raw.score_id,
    }
    if row is None:
        # A score id the provider never described: kept, counted as nothing.
        return BallDetail.model_validate({**where, "known": False, "legal": False})
    return BallDetail.model_validate({**where, **_outcome(raw, row)})


def _outcome(raw: RawBall, row: ScoreRow) -> dict[str, object]:
    """The delivery's figures (cricket.md §4): `runs` holds wides and no-ball penalties, not byes."""
    wide = not row.ball and row.noball == 0
    no_ball = row.noball > 0
    dismissal = _dismissal(row)
    wicket = dismissal is not None and dismissal is not Dismissal.RETIRED
    out_batter = fielder = None
    if dismissal is not None:
        out_batter = raw.batsmanout_id
        if out_batter is None and dismissal in BOWLER_CREDITED:
            # Only the striker can be out this way; the provider sometimes leaves the field null.
            out_batter = raw.batsman_id
        fielder = raw.catchstump_id if raw.catchstump_id is not None else raw.runout_by_id
    if wide:
        batter_runs = 0
    elif no_ball:
        batter_runs = max(0, row.runs - row.noball_runs)
    else:
        batter_runs = row.runs
    return {
        "outcome": row.name,
        "runs": row.runs + row.bye + row.leg_bye,
        "batter_runs": batter_runs,
        "wides": row.runs if wide else 0,
        "no_balls": row.noball_runs if no_ball else 0,
        "byes": row.bye,
        "leg_byes": row.leg_bye,
        "legal": row.ball and not no_ball,
        "four": row.four,
        "six": row.six,
        "wicket": wicket,
        "dismissal": dismissal,
        "out_batter_id": out_batter,
        "fielder_id": fielder,
        "bowler_wicket": wicket and dismissal in BOWLER_CREDITED,
    }


def _dismissal(row: ScoreRow) -> Dismissal | None:
    # `out` and `is_wicket` are both true on every dismissal (run-outs too); a retirement may
    # carry neither and is still worth naming, though it is not a wicket.
    name = (row.name or "").casefold()
    if not (row.out or row.is_wicket or "retired" in name):
        return None
    return next((kind for needle, kind in _DISMISSALS if needle in name), Dismissal.OTHER)


def _non_striker(raw: RawBall) -> int | None:
    # The crease pair is in a fixed slot order: the non-striker is whichever is not the striker.
    pair = (raw.batsman_one_on_creeze_id, raw.batsman_two_on_creeze_id)
    if raw.batsman_id is None or raw.batsman_id not in pair:
        return None
    other = pair[1] if pair[0] == raw.batsman_id else pair[0]
    return None if other == raw.batsman_id else other


def _side_of(team_id: int | None, teams: Participants) -> Side | None:
    if team_id is None:
        return None
    if teams.home is not None and teams.home.id == team_id:
        return Side.HOME
    if teams.away is not None and teams.away.id == team_id:
        return Side.AWAY
    return None


def _fixture_id(payload: object) -> int | None:
    if isinstance(payload, Mapping):
        value = payload.get("id")
        if type(value) is int and value > 0:
            return value
    return None


__all__ = [
    "ProviderPayloadError",
    "ScoreRow",
    "normalise_cricket_fixture",
    "normalise_cricket_fixtures",
    "parse_score_rows",
]
