"""The pure SportMonks → domain normaliser: fixture JSON in, `Snapshot` out.

Deterministic and side-effect-free (no clock, no I/O, no randomness), so it can run inside a
Temporal workflow as well as in an activity. Whatever the input, it returns a `Snapshot` or raises
`ProviderPayloadError`, naming the first bad field as a dotted path such as `events.3.minute`; it
never raises anything else.

Stdlib, pydantic and project modules only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta

from pydantic import ValidationError

from activities.provider.codes import (
    ITEM_TYPES,
    PERIOD_TYPES,
    SCORE_DESCRIPTIONS,
    SCORE_TYPE_IDS,
    SPORT_IDS,
    STATES,
    STATES_BY_DEVELOPER_NAME,
    StateCode,
)
from activities.provider.payload import (
    RawFixture,
    RawItem,
    RawParticipant,
    RawPeriod,
    RawScore,
)
from domain.snapshot import (
    Item,
    ItemType,
    MatchState,
    Participants,
    Period,
    PeriodKind,
    ScorePair,
    Scores,
    Side,
    Snapshot,
    Sport,
    Stream,
    Team,
)

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# `ProviderPayloadError.code` when the normaliser itself failed; tests assert it never happens.
INTERNAL_ERROR = "internal"


class ProviderPayloadError(Exception):
    """The provider sent something that is not a fixture (or not a list of fixtures).

    Attributes:
        path: dotted path of the first bad field (`events.3.minute`); `""` is the payload itself.
        reason: what is wrong with it, without echoing the (possibly huge) value.
        code: a stable machine-readable kind (pydantic's error type, or e.g. `unsupported_sport`).
        index: position in the list for `normalise_fixtures`, else `None`.
        fixture_id: the payload's `id` when it had a usable one, for logs.
    """

    def __init__(
        self,
        path: str,
        reason: str,
        code: str = "invalid",
        index: int | None = None,
        fixture_id: int | None = None,
    ) -> None:
        super().__init__(path, reason, code, index, fixture_id)
        self.path = path
        self.reason = reason
        self.code = code
        self.index = index
        self.fixture_id = fixture_id

    def __str__(self) -> str:
        return f"{self.path or '<payload>'}: {self.reason}"

    def to_dict(self) -> dict[str, str | int | None]:
        """A JSON-ready form, for logs and activity results."""
        return {
            "path": self.path,
            "reason": self.reason,
            "code": self.code,
            "index": self.index,
            "fixture_id": self.fixture_id,
        }


def normalise_fixture(payload: object) -> Snapshot:
    """Normalise one SportMonks fixture.

    Args:
        payload: a decoded fixture object with its includes, or a single-fixture response envelope
            `{"data": {...}, ...}` (then error paths start with `data.`).

    Returns:
        The fixture as a `Snapshot`.

    Raises:
        ProviderPayloadError: the payload is not a fixture. Nothing else is ever raised.
    """
    prefix = ""
    if isinstance(payload, dict) and "id" not in payload and ("data" in payload or "message" in payload):
        if "data" not in payload:
            raise ProviderPayloadError("data", _no_data_reason(payload), code="missing")
        payload, prefix = payload["data"], "data"
    return _guarded(payload, prefix, index=None)


def normalise_fixtures(response_data: object) -> list[Snapshot | ProviderPayloadError]:
    """Normalise a list endpoint's fixtures one by one, so one bad item spoils only itself.

    Args:
        response_data: the `data` list, or the whole response envelope. An envelope without `data`
            (SportMonks' 200 "No result(s) found" body) is an empty list.

    Returns:
        One `Snapshot` or `ProviderPayloadError` per item, in the provider's order.

    Raises:
        ProviderPayloadError: the container itself is neither a list nor an envelope.
    """
    items, prefix = listed_fixtures(response_data)
    return [_result(item, join_path(prefix, str(index)), index) for index, item in enumerate(items)]


def listed_fixtures(response_data: object) -> tuple[list[object], str]:
    """The items of a list answer (either sport) and the path prefix that names them in errors.

    An envelope with a `message` and no `data` is SportMonks' empty result; a single object under
    `data` is a list of one.

    Raises:
        ProviderPayloadError: the container itself is neither a list nor an envelope.
    """
    if not isinstance(response_data, dict):
        data: object = response_data
        prefix = ""
    elif "data" in response_data:
        data, prefix = response_data["data"], "data"
        if isinstance(data, dict):
            data = [data]
    elif "id" not in response_data and "message" in response_data:
        return [], ""
    else:
        raise ProviderPayloadError("", "expected a list of fixtures or a response envelope", "list_type")
    if not isinstance(data, list):
        raise ProviderPayloadError(prefix, "expected a list of fixtures", code="list_type")
    return data, prefix


def _result(item: object, prefix: str, index: int) -> Snapshot | ProviderPayloadError:
    try:
        return _guarded(item, prefix, index)
    except ProviderPayloadError as error:
        return error


def _guarded(payload: object, prefix: str, index: int | None) -> Snapshot:
    fixture_id = _fixture_id(payload)
    try:
        try:
            raw = RawFixture.model_validate(payload)
        except ValidationError as exc:
            first = exc.errors(include_url=False, include_input=False, include_context=False)[0]
            path = join_path(prefix, ".".join(str(part) for part in first["loc"]))
            raise ProviderPayloadError(path, _reason(first), first["type"], index, fixture_id) from None
        try:
            return _snapshot(raw)
        except _SnapshotError as exc:
            path = join_path(prefix, exc.path)
            raise ProviderPayloadError(path, exc.reason, exc.code, index, fixture_id) from None
    except ProviderPayloadError:
        raise
    except Exception as exc:
        # The contract is "a Snapshot or a ProviderPayloadError": inside a workflow any other
        # exception would fail the workflow task and retry forever. A validated payload that still
        # fails to convert is a normaliser bug, reported with its own code.
        reason = f"normaliser failed: {type(exc).__name__}"
        raise ProviderPayloadError(prefix, reason, INTERNAL_ERROR, index, fixture_id) from exc


def _reason(error: Mapping[str, object]) -> str:
    if error["type"] == "model_type":
        # pydantic would name our internal Raw* class; the provider's shape is what matters.
        return "Input should be an object"
    return str(error["msg"]).removeprefix("Value error, ")


class _SnapshotError(Exception):
    def __init__(self, path: str, reason: str, code: str) -> None:
        super().__init__(path, reason, code)
        self.path, self.reason, self.code = path, reason, code


def _snapshot(raw: RawFixture) -> Snapshot:
    state = _state_code(raw)
    participants = _participants(raw.participants)
    teams = participants or Participants()
    return Snapshot(
        sport=_sport(raw.sport_id),
        fixture_id=raw.id,
        league_id=raw.league_id,
        season_id=raw.season_id,
        name=raw.name,
        kickoff=_kickoff(raw),
        state=state.state if state else MatchState.UNKNOWN,
        finished_after=state.finished_after if state else None,
        provider_state_id=_provider_state_id(raw),
        provider_state=_provider_state_name(raw, state),
        result_info=raw.result_info,
        minute=_running_minute(raw.periods),
        participants=participants,
        scores=None if raw.scores is None else _scores(raw.scores, teams),
        periods=None if raw.periods is None else _periods(raw.periods),
        events=None if raw.events is None else _items(raw.events, Stream.EVENTS, teams),
        timeline=None if raw.timeline is None else _items(raw.timeline, Stream.TIMELINE, teams),
    )


def _sport(sport_id: int | None) -> Sport:
    # The football API omits nothing here in practice; an absent sport_id means the football endpoint.
    if sport_id is None:
        return Sport.FOOTBALL
    sport = SPORT_IDS.get(sport_id)
    if sport is None:
        raise _SnapshotError("sport_id", f"unsupported sport id {sport_id}", "unsupported_sport")
    return sport


def _kickoff(raw: RawFixture) -> datetime | None:
    # The timestamp is unambiguous; `starting_at` follows the response's `timezone` parameter.
    if raw.starting_at_timestamp is not None:
        return _from_unix(raw.starting_at_timestamp)
    return raw.starting_at


def _from_unix(seconds: int) -> datetime:
    # Arithmetic instead of fromtimestamp(): exact over the whole validated range on every platform.
    return _EPOCH + timedelta(seconds=seconds)


def _state_code(raw: RawFixture) -> StateCode | None:
    # `state_id` is a base field, present even when the `state` include is dropped, so it decides;
    # the include only helps for ids newer than our table.
    candidates = (raw.state_id, raw.state.id if raw.state else None)
    for state_id in candidates:
        if state_id is not None and state_id in STATES:
            return STATES[state_id]
    if raw.state and raw.state.developer_name:
        return STATES_BY_DEVELOPER_NAME.get(raw.state.developer_name.upper())
    return None


def _provider_state_id(raw: RawFixture) -> int | None:
    if raw.state_id is not None:
        return raw.state_id
    return raw.state.id if raw.state else None


def _provider_state_name(raw: RawFixture, state: StateCode | None) -> str | None:
    if raw.state is not None and raw.state.developer_name is not None:
        return raw.state.developer_name
    return state.developer_name if state else None


def _participants(raw: Sequence[RawParticipant] | None) -> Participants | None:
    if raw is None:
        return None
    sides: dict[Side, Team] = {}
    for participant in raw:
        location = participant.meta.location if participant.meta else None
        side = _side_from_text(location)
        if side is not None:
            sides[side] = Team(
                id=participant.id,
                name=participant.name,
                short_code=participant.short_code,
                image_path=participant.image_path,
                winner=participant.meta.winner if participant.meta else None,
            )
    return Participants(home=sides.get(Side.HOME), away=sides.get(Side.AWAY))


def _side_from_text(location: str | None) -> Side | None:
    if location is None:
        return None
    try:
        return Side(location.lower())
    except ValueError:
        return None


def _side_of(participant_id: int | None, teams: Participants) -> Side | None:
    if participant_id is None:
        return None
    if teams.home is not None and teams.home.id == participant_id:
        return Side.HOME
    if teams.away is not None and teams.away.id == participant_id:
        return Side.AWAY
    return None


def _scores(rows: Sequence[RawScore], teams: Participants) -> Scores:
    goals: dict[tuple[str, Side], int] = {}
    for row in rows:
        field = SCORE_DESCRIPTIONS.get(row.description.upper()) if row.description else None
        if field is None and row.type_id is not None:
            field = SCORE_TYPE_IDS.get(row.type_id)
        side = Side(row.score.participant) if row.score.participant else _side_of(row.participant_id, teams)
        if field is not None and side is not None:
            goals[(field, side)] = row.score.goals
    pairs: dict[str, ScorePair] = {}
    for field in Scores.model_fields:
        home, away = goals.get((field, Side.HOME)), goals.get((field, Side.AWAY))
        if home is not None and away is not None:
            pairs[field] = ScorePair(home=home, away=away)
    return Scores.model_validate(pairs)


def _periods(rows: Sequence[RawPeriod]) -> tuple[Period, ...]:
    by_id = {row.id: row for row in rows}
    ordered = sorted(by_id.values(), key=lambda row: (row.sort_order is None, row.sort_order or 0, row.id))
    return tuple(
        Period(
            provider_id=row.id,
            kind=PERIOD_TYPES.get(row.type_id, PeriodKind.OTHER),
            provider_type_id=row.type_id,
            started_at=None if row.started is None else _from_unix(row.started),
            ended_at=None if row.ended is None else _from_unix(row.ended),
            ticking=bool(row.ticking),
            minute=row.minutes,
            second=row.seconds,
            time_added=row.time_added,
        )
        for row in ordered
    )


def _running_minute(rows: Sequence[RawPeriod] | None) -> int | None:
    if not rows:
        return None
    ticking = [row for row in rows if row.ticking]
    if not ticking:
        return None
    latest = max(ticking, key=lambda row: (row.sort_order or 0, row.id))
    return latest.minutes


def _items(rows: Sequence[RawItem], stream: Stream, teams: Participants) -> tuple[Item, ...]:
    # The provider may list an id twice in one response: the last occurrence wins.
    by_id: dict[int, Item] = {}
    for row in rows:
        by_id[row.id] = Item(
            stream=stream,
            provider_id=row.id,
            type=ITEM_TYPES.get(row.type_id, ItemType.OTHER),
            provider_type_id=row.type_id,
            minute=row.minute,
            extra_minute=row.extra_minute,
            side=_side_of(row.participant_id, teams),
            participant_id=row.participant_id,
            player_id=row.player_id,
            player_name=row.player_name,
            related_player_id=row.related_player_id,
            related_player_name=row.related_player_name,
            result=row.result,
            info=row.info,
            addition=row.addition,
            sort_order=row.sort_order,
            rescinded=bool(row.rescinded),
        )
    return tuple(sorted(by_id.values(), key=_item_order))


def _item_order(item: Item) -> tuple[bool, int, int, int]:
    return (item.minute is None, item.minute or 0, item.extra_minute or 0, item.provider_id)


def _fixture_id(payload: object) -> int | None:
    if isinstance(payload, Mapping):
        value = payload.get("id")
        if type(value) is int and value > 0:
            return value
    return None


def _no_data_reason(envelope: Mapping[object, object]) -> str:
    message = envelope.get("message")
    if isinstance(message, str):
        return f"the response has no data: {message[:200]!r}"
    return "the response has no data"


def join_path(prefix: str, path: str) -> str:
    """A dotted error path: `prefix.path`, or whichever of the two is not empty."""
    return f"{prefix}.{path}" if prefix and path else prefix or path


__all__ = [
    "INTERNAL_ERROR",
    "ProviderPayloadError",
    "Snapshot",
    "join_path",
    "listed_fixtures",
    "normalise_fixture",
    "normalise_fixtures",
]
