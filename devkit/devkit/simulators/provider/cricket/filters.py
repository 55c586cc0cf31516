"""`filter[…]` and `sort` on Cricket v2 fixture lists.

Supported: `filter[starts_between]=YYYY-MM-DD,YYYY-MM-DD` (UTC dates of the served, mapped
`starting_at`, both days included), `filter[status]=Finished,NS` (any of; letters compared without
case, as the provider's database does), and the id filters `filter[league_id]`, `season_id`,
`stage_id`, `localteam_id`, `visitorteam_id`, `venue_id` (comma-separated: any of). Other
filters are ignored. `sort=starting_at` / `-starting_at` / `id` / `-id` (comma-separated);
without it lists run by `starting_at`, then `id`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from devkit.simulators.provider.cricket.envelope import bad_request
from devkit.simulators.provider.envelope import ApiError

ID_FILTERS = ("league_id", "season_id", "stage_id", "localteam_id", "visitorteam_id", "venue_id")
SORT_KEYS = ("starting_at", "id")


def _param(params: Mapping[str, str], name: str) -> str | None:
    value = params.get(f"filter[{name}]")
    return value.strip() if value is not None and value.strip() else None


def _parts(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _window(text: str) -> tuple[float, float] | ApiError:
    parts = _parts(text)
    try:
        first, last = (date.fromisoformat(part) for part in parts) if len(parts) == 2 else (None, None)
    except ValueError:
        first = last = None
    if first is None or last is None:
        return bad_request("The starts_between filter needs two dates written as YYYY-MM-DD,YYYY-MM-DD.")
    if last < first:
        return bad_request("The starts_between filter's second date must not be before the first.")
    start = datetime(first.year, first.month, first.day, tzinfo=UTC).timestamp()
    return start, start + (last - first + timedelta(days=1)).total_seconds()


@dataclass(frozen=True)
class FixtureFilter:
    """The filters of one request.

    Attributes:
        ids: Allowed values per id field (only the fields filtered on).
        statuses: Allowed statuses, case-folded; None allows any.
        starts: `[start, end)` epoch window of the mapped `starting_at`; None allows any.
    """

    ids: Mapping[str, frozenset[int]]
    statuses: frozenset[str] | None = None
    starts: tuple[float, float] | None = None

    @classmethod
    def parse(cls, params: Mapping[str, str]) -> FixtureFilter | ApiError:
        """The filters in the query, or a 400 for a value the API would reject."""
        ids: dict[str, frozenset[int]] = {}
        for name in ID_FILTERS:
            text = _param(params, name)
            if text is None:
                continue
            parts = _parts(text)
            if not all(part.isdigit() for part in parts):
                return bad_request(f"The {name} filter takes comma-separated ids.")
            ids[name] = frozenset(int(part) for part in parts)
        status = _param(params, "status")
        statuses = frozenset(part.casefold() for part in _parts(status)) if status else None
        starts_text = _param(params, "starts_between")
        starts = _window(starts_text) if starts_text else None
        if isinstance(starts, ApiError):
            return starts
        return cls(ids=ids, statuses=statuses, starts=starts)

    def matches(self, fixture: Mapping[str, Any], start_epoch: float | None) -> bool:
        """True if the recorded `fixture`, starting at mapped `start_epoch`, passes every filter."""
        for name, allowed in self.ids.items():
            if fixture.get(name) not in allowed:
                return False
        if self.statuses is not None:
            status = fixture.get("status")
            if not isinstance(status, str) or status.casefold() not in self.statuses:
                return False
        if self.starts is not None:
            return start_epoch is not None and self.starts[0] <= start_epoch < self.starts[1]
        return True


def sort_order(params: Mapping[str, str]) -> Sequence[tuple[str, bool]]:
    """`(key, descending)` pairs from `sort`, unknown keys dropped; `id` always ends the order."""
    order = [
        (part.lstrip("-"), part.startswith("-"))
        for part in _parts(params.get("sort") or "")
        if part.lstrip("-") in SORT_KEYS
    ]
    if not order:
        order = [("starting_at", False)]
    if all(key != "id" for key, _ in order):
        order.append(("id", False))
    return order
