"""Request bodies for new fixtures: one valid draft, and players, to vary field by field."""

from __future__ import annotations

from typing import Any


def player(shirt: Any, *, starting: Any = True, **extra: Any) -> dict[str, Any]:
    """A squad player; `shirt` and `starting` are Any so tests can send the wrong types."""
    return {"name": f"Player {shirt}", "shirt_number": shirt, "starting": starting, **extra}


def draft(**changes: Any) -> dict[str, Any]:
    """A valid fixture body; `changes` replace top-level fields."""
    body: dict[str, Any] = {
        "sport": "football",
        "home": {
            "name": "Harbour FC",
            "short_code": "HAR",
            "players": [player(1), player(2, starting=False)],
        },
        "away": {"name": "Quarry Town", "players": [player(1)]},
        "kickoff": "2026-03-14T15:00:00+00:00",
    }
    return {**body, **changes}
