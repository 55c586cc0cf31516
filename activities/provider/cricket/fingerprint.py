"""A cheap fingerprint of a raw Cricket v2 fixture: equal fingerprints, nothing to normalise again.

`livescores` with its balls is large — about 110 KB a T20, 11 MB for 100 matches — and strict
normalisation of ~20,000 balls costs seconds of CPU every poll interval, while between two polls
only a few matches bowled a ball. The fingerprint reads the fields that change when anything does:
the status and result fields, the `runs` rows, and of the balls their count, the last id and the
newest `updated_at` (the provider moves it when it edits a ball in place, cricket.md §3). It never
raises: anything unexpected gives None, and the fixture is normalised as usual.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

Fingerprint = tuple[Any, ...]

FACT_FIELDS = (
    "id",
    "status",
    "note",
    "starting_at",
    "winner_team_id",
    "draw_noresult",
    "super_over",
    "total_overs_played",
    "rpc_target",
    "rpc_overs",
    "toss_won_team_id",
    "elected",
    "type",
    "localteam_id",
    "visitorteam_id",
)


def fingerprint(raw: object) -> Fingerprint | None:
    """The fixture's fingerprint, or None when it cannot be taken cheaply and safely."""
    if not isinstance(raw, Mapping):
        return None
    try:
        facts = tuple(_hashable(raw.get(name)) for name in FACT_FIELDS)
        return (*facts, _balls(raw.get("balls", _ABSENT)), _rows(raw.get("runs", _ABSENT)), _teams(raw))
    except (TypeError, ValueError):
        return None


_ABSENT = object()


def _balls(balls: object) -> Fingerprint:
    if balls is _ABSENT:
        return ("absent",)
    if not isinstance(balls, list):
        raise TypeError("balls")
    newest = max((str(ball.get("updated_at")) for ball in balls if isinstance(ball, Mapping)), default="")
    last = balls[-1].get("id") if balls and isinstance(balls[-1], Mapping) else None
    return (len(balls), _hashable(last), newest)


def _rows(rows: object) -> Fingerprint:
    if rows is _ABSENT:
        return ("absent",)
    if not isinstance(rows, list):
        raise TypeError("runs")
    return tuple(
        tuple(
            _hashable(row.get(name))
            for name in ("inning", "team_id", "score", "wickets", "overs", "updated_at")
        )
        if isinstance(row, Mapping)
        else ("?",)
        for row in rows
    )


def _teams(raw: Mapping[str, Any]) -> Fingerprint:
    return tuple(
        _hashable(team.get("name")) if isinstance(team, Mapping) else _hashable(team)
        for team in (raw.get("localteam", _ABSENT), raw.get("visitorteam", _ABSENT))
        if team is not _ABSENT
    )


def _hashable(value: object) -> Any:
    """Scalars as they are; anything else (an odd nested value) by its repr, so it still compares."""
    if value is None or isinstance(value, str | int | float | bool):
        return (type(value).__name__, value)
    return ("repr", repr(value)[:200])
