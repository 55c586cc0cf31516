"""Strict pydantic models of the SportMonks Football v3 fixture JSON (provider-api.md Part 2).

Only the fields the normaliser reads are declared; everything else is ignored, so new provider fields
never break validation. What is declared is validated strictly: no coercion (a bool is not an int,
`"3"` is not 3), ids and minutes within sane bounds, timestamps that fit a `datetime`. Free text is
cut to a bounded length and made UTF-8 clean so a snapshot always serialises.

Stdlib and pydantic only: safe inside the Temporal workflow sandbox.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, PlainValidator

# Postgres bigint: ids end up in unique constraints there.
_MAX_ID = 2**63 - 1
# 0001-01-01 .. 9999-12-31 in unix seconds: the range `datetime` can hold.
_MIN_TS = -62_135_596_800
_MAX_TS = 253_402_300_799

MAX_SHORT_TEXT = 200
MAX_LONG_TEXT = 2000


def _clean_text(limit: int) -> AfterValidator:
    def clean(value: str) -> str:
        value = value[:limit]
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            # Lone surrogates (`"\ud800"` is valid JSON) would make the snapshot unserialisable.
            value = value.encode("utf-8", "replace").decode("utf-8")
        return value

    return AfterValidator(clean)


def _parse_provider_datetime(value: object) -> datetime:
    # SportMonks sends "2025-05-25 15:00:00" in the response timezone (UTC unless asked otherwise).
    if not isinstance(value, str):
        raise ValueError("Input should be a datetime string")
    if len(value) > 40:
        raise ValueError("Datetime string should have at most 40 characters")
    parsed = datetime.fromisoformat(value)
    if parsed.tzinfo is None:
        return parsed.replace(tzinfo=UTC)
    try:
        return parsed.astimezone(UTC)
    except OverflowError:
        # "0001-01-01T00:00:00+01:00" is before datetime.min once in UTC; pydantic reports ValueError.
        raise ValueError("datetime out of range") from None


ProviderId = Annotated[int, Field(ge=0, le=_MAX_ID)]
Count = Annotated[int, Field(ge=0, le=1_000_000)]
UnixSeconds = Annotated[int, Field(ge=_MIN_TS, le=_MAX_TS)]
ShortText = Annotated[str, _clean_text(MAX_SHORT_TEXT)]
LongText = Annotated[str, _clean_text(MAX_LONG_TEXT)]
ProviderDatetime = Annotated[datetime, PlainValidator(_parse_provider_datetime)]


class _Raw(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)


class RawParticipantMeta(_Raw):
    """`participants[].meta`; `location` is what makes a participant home or away."""

    location: ShortText | None = None
    winner: bool | None = None


class RawParticipant(_Raw):
    """One team of `participants`."""

    id: ProviderId
    name: ShortText | None = None
    short_code: ShortText | None = None
    image_path: LongText | None = None
    meta: RawParticipantMeta | None = None


class RawState(_Raw):
    """The `state` include."""

    id: ProviderId | None = None
    developer_name: ShortText | None = None


class RawGoals(_Raw):
    """`scores[].score`."""

    goals: Count
    participant: Literal["home", "away"] | None = None


class RawScore(_Raw):
    """One row of `scores`: one participant, one score type."""

    type_id: ProviderId | None = None
    participant_id: ProviderId | None = None
    description: ShortText | None = None
    score: RawGoals


class RawPeriod(_Raw):
    """One row of `periods`."""

    id: ProviderId
    type_id: ProviderId
    started: UnixSeconds | None = None
    ended: UnixSeconds | None = None
    ticking: bool | None = None
    sort_order: Count | None = None
    minutes: Count | None = None
    seconds: Count | None = None
    time_added: Count | None = None


class RawItem(_Raw):
    """One record of `events` or `timeline` (both share the event record shape)."""

    id: ProviderId
    type_id: ProviderId
    participant_id: ProviderId | None = None
    player_id: ProviderId | None = None
    player_name: ShortText | None = None
    related_player_id: ProviderId | None = None
    related_player_name: ShortText | None = None
    result: ShortText | None = None
    info: LongText | None = None
    addition: LongText | None = None
    minute: Count | None = None
    extra_minute: Count | None = None
    sort_order: Count | None = None
    rescinded: bool | None = None


class RawFixture(_Raw):
    """A fixture with whichever relations were included; an absent relation stays `None`."""

    id: ProviderId
    sport_id: ProviderId | None = None
    league_id: ProviderId | None = None
    season_id: ProviderId | None = None
    state_id: ProviderId | None = None
    name: ShortText | None = None
    starting_at: ProviderDatetime | None = None
    starting_at_timestamp: UnixSeconds | None = None
    result_info: LongText | None = None
    participants: list[RawParticipant] | None = None
    state: RawState | None = None
    scores: list[RawScore] | None = None
    periods: list[RawPeriod] | None = None
    events: list[RawItem] | None = None
    timeline: list[RawItem] | None = None
