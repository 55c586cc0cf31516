"""Match-time order for events and the opaque cursor that pages through it.

Events sort by minute, extra minute, sort order and row id. A late backfill (an event the provider
adds minutes after it happened) therefore lands where it happened, not at the end. NULLs are mapped
to sentinels outside each column's range so that SQL row comparison (which has no NULLS LAST) gives
the same total order as the ORDER BY: no minute sorts after every minute, no extra minute before
`+1` (45' comes before 45+1'), no sort order after every sort order. The row id breaks every tie, so
keyset pages never overlap and never skip.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any

SMALLINT_MAX = 2**15 - 1
INT_MAX = 2**31 - 1
BIGINT_MAX = 2**63 - 1

MINUTE_NULL = SMALLINT_MAX + 1
"""After every minute: events with no minute come last."""
EXTRA_MINUTE_NULL = -SMALLINT_MAX - 2
"""Before every extra minute: 45' precedes 45+1'."""
SORT_ORDER_NULL = INT_MAX + 1
"""After every provider sort order."""

MAX_CURSOR_LENGTH = 200
"""A real cursor is about 40 characters; anything much longer is not one of ours."""

SortKey = tuple[int, int, int, int]


class InvalidCursorError(ValueError):
    """A `before` value this API did not make (or that was damaged on the way)."""


@dataclass(frozen=True, slots=True)
class EventCursor:
    """The position of one event in match-time order; pages are read strictly before it."""

    minute: int | None
    extra_minute: int | None
    sort_order: int | None
    id: int

    def sort_key(self) -> SortKey:
        """The same non-null key the SQL sorts and compares on."""
        return sort_key(self.minute, self.extra_minute, self.sort_order, self.id)

    def encode(self) -> str:
        """URL-safe and opaque, so clients pass it back instead of building their own."""
        raw = json.dumps([self.minute, self.extra_minute, self.sort_order, self.id], separators=(",", ":"))
        return base64.urlsafe_b64encode(raw.encode()).rstrip(b"=").decode()

    @classmethod
    def decode(cls, token: str) -> EventCursor:
        """Parse a cursor made by `encode`.

        Raises:
            InvalidCursorError: the token is malformed or holds values no event can have.
        """
        if not token or len(token) > MAX_CURSOR_LENGTH:
            raise InvalidCursorError("cursor is empty or too long")
        try:
            raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
            values = json.loads(raw)
        except (binascii.Error, ValueError) as error:
            raise InvalidCursorError("cursor is not one this API made") from error
        if not isinstance(values, list) or len(values) != 4:
            raise InvalidCursorError("cursor is not one this API made")
        minute, extra_minute, sort_order, event_id = values
        if not (
            _fits(minute, SMALLINT_MAX, nullable=True)
            and _fits(extra_minute, SMALLINT_MAX, nullable=True)
            and _fits(sort_order, INT_MAX, nullable=True)
            and _fits(event_id, BIGINT_MAX, nullable=False)
        ):
            raise InvalidCursorError("cursor holds values out of range")
        return cls(minute=minute, extra_minute=extra_minute, sort_order=sort_order, id=event_id)


def sort_key(minute: int | None, extra_minute: int | None, sort_order: int | None, event_id: int) -> SortKey:
    """Match-time order as a tuple of integers (see the module docstring for where NULLs go)."""
    return (
        MINUTE_NULL if minute is None else minute,
        EXTRA_MINUTE_NULL if extra_minute is None else extra_minute,
        SORT_ORDER_NULL if sort_order is None else sort_order,
        event_id,
    )


def _fits(value: Any, bound: int, *, nullable: bool) -> bool:
    if value is None:
        return nullable
    # bool is an int to Python but never a column value.
    return isinstance(value, int) and not isinstance(value, bool) and -bound - 1 <= value <= bound
