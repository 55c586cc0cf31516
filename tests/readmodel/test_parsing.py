"""The query parsers: state filters and event cursors, without any service."""

from __future__ import annotations

import base64

import pytest

from domain.snapshot import MatchState
from scoreline.readmodel.ordering import (
    BIGINT_MAX,
    SMALLINT_MAX,
    EventCursor,
    InvalidCursorError,
    sort_key,
)
from scoreline.readmodel.states import LIVE_STATES, UnknownStateError, parse_state_filter

pytestmark = pytest.mark.unit


def _token(raw: str) -> str:
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


@pytest.mark.parametrize(
    "cursor",
    [
        EventCursor(45, 2, 3, 17),
        EventCursor(None, None, None, 1),
        EventCursor(SMALLINT_MAX, -SMALLINT_MAX - 1, 2**31 - 1, BIGINT_MAX),
    ],
)
def test_cursor_round_trips(cursor: EventCursor) -> None:
    """Whatever `encode` makes, `decode` reads back unchanged, and it is URL-safe as it is."""
    token = cursor.encode()

    assert EventCursor.decode(token) == cursor
    assert set(token) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


@pytest.mark.parametrize(
    "token",
    [
        "",
        "!!!",
        "x" * 201,
        _token("not json"),
        _token('{"minute": 1}'),
        _token("[1,2,3]"),
        _token("[1,2,3,null]"),
        _token('[1,2,3,"4"]'),
        _token("[1,2,3,true]"),
        _token("[1.5,2,3,4]"),
        _token(f"[{SMALLINT_MAX + 1},null,null,4]"),
        _token(f"[1,null,null,{BIGINT_MAX + 1}]"),
    ],
)
def test_foreign_cursors_are_refused(token: str) -> None:
    """Anything `encode` could not have made is an InvalidCursorError, never a crash or a wild query."""
    with pytest.raises(InvalidCursorError):
        EventCursor.decode(token)


def test_sort_key_places_nulls() -> None:
    """No minute sorts last, no extra minute before +1, no sort order after any sort order."""
    keys = [
        sort_key(None, None, None, 1),
        sort_key(45, 1, None, 2),
        sort_key(45, None, None, 3),
        sort_key(45, None, 7, 4),
        sort_key(90, 5, 1, 5),
    ]

    assert [key[3] for key in sorted(keys)] == [4, 3, 2, 5, 1]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (None, None),
        ("", None),
        (" , ", None),
        ("live", LIVE_STATES),
        ("finished", {MatchState.FINISHED}),
        ("scheduled", {MatchState.SCHEDULED}),
        (" Finished , scheduled ", {MatchState.FINISHED, MatchState.SCHEDULED}),
        ("live,finished", LIVE_STATES | {MatchState.FINISHED}),
    ],
)
def test_state_filter(raw: str | None, expected: set[MatchState] | None) -> None:
    """Groups, exact names and comma lists; blank means no filter."""
    assert parse_state_filter(raw) == expected


@pytest.mark.parametrize("raw", ["nonsense", "live,nope", "live;finished", ",".join(["live"] * 40)])
def test_unknown_state_is_refused(raw: str) -> None:
    """A term that is neither a group nor a state name raises, so the API can say 422."""
    with pytest.raises(UnknownStateError):
        parse_state_filter(raw)


def test_live_excludes_not_started_and_over() -> None:
    """`live` means started and not over: nothing before kick-off, nothing after the end."""
    not_live = {
        MatchState.SCHEDULED,
        MatchState.TO_BE_ANNOUNCED,
        MatchState.DELAYED,
        MatchState.POSTPONED,
        MatchState.FINISHED,
        MatchState.AWARDED,
        MatchState.CANCELLED,
        MatchState.ABANDONED,
        MatchState.DELETED,
        MatchState.PENDING,
        MatchState.AWAITING_UPDATES,
        MatchState.UNKNOWN,
    }

    assert not_live.isdisjoint(LIVE_STATES)
    assert not_live | LIVE_STATES == set(MatchState)
