"""`include=` for Cricket v2: comma-separated, dotted for nested (`balls,runs,balls.score`).

A recorded fixture holds every relation embedded. The response carries the base fields always and a
top-level relation (`balls`, `runs`, `localteam`, …) only when it is included, itself or through a
nested path (`balls.score` includes `balls`). Below the top level the recording is served as is:
the real API embeds a ball's `batsman`, `bowler`, `score` and `team` with `include=balls` alone
(cricket.md §3), so `balls.score` adds nothing a recording does not already hold. A nested
relation leaves only when a `drop_include` fault removes it, as the real API does when it does not
honour an include.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# The documented fixture includes (provider-api.md §6), by the key they come back under.
RELATIONS = frozenset(
    {
        "balls",
        "runs",
        "bowling",
        "batting",
        "venue",
        "stage",
        "season",
        "league",
        "visitorteam",
        "localteam",
        "scoreboards",
        "firstumpire",
        "secondumpire",
        "tvumpire",
        "referee",
        "manofseries",
        "manofmatch",
        "tosswon",
        "winnerteam",
        "lineup",
    }
)
# Object-valued base fields of a fixture, which are not relations.
OBJECT_FIELDS = frozenset({"localteam_dl_data", "visitorteam_dl_data", "weather_report"})


def is_relation(key: str, value: Any) -> bool:
    """True if the fixture's `key` holds an included relation rather than a base field.

    A documented relation counts even when recorded as null (no venue yet); any other object
    or list that is not a known base field counts too, so a relation the table misses is still
    served only when asked for.
    """
    name = key.lower()
    if name in RELATIONS:
        return True
    return isinstance(value, dict | list) and name not in OBJECT_FIELDS


@dataclass(frozen=True)
class CricketInclude:
    """The requested relations of one request.

    Attributes:
        relations: Top-level relations, lower-cased.
        dropped: Nested relations a fault removes, as lower-cased name paths (`("balls", "score")`).
    """

    relations: frozenset[str] = frozenset()
    dropped: frozenset[tuple[str, ...]] = frozenset()

    @classmethod
    def parse(cls, text: str | None) -> CricketInclude:
        """The includes of an `include` query value (`balls,runs,balls.batsman`)."""
        heads = set()
        for item in (text or "").split(","):
            names = [name.strip().lower() for name in item.split(".") if name.strip()]
            if names:
                heads.add(names[0])
        return cls(relations=frozenset(heads))

    def has(self, path: str) -> bool:
        """True if the dotted relation `path` is in the response (a nested one comes with its head)."""
        names = tuple(path.lower().split("."))
        if names[0] not in self.relations:
            return False
        return not any(names[: len(gone)] == gone for gone in self.dropped)

    def without(self, path: str) -> CricketInclude:
        """The same includes minus the dotted relation `path` (and what hangs below it)."""
        names = tuple(path.lower().split("."))
        if len(names) == 1:
            return CricketInclude(self.relations - {names[0]}, self.dropped)
        return CricketInclude(self.relations, self.dropped | {names})

    def apply(self, fixture: Mapping[str, Any]) -> dict[str, Any]:
        """The fixture's base fields and the included relations, minus dropped nested ones."""
        shown: dict[str, Any] = {}
        for key, value in fixture.items():
            if not is_relation(key, value):
                shown[key] = value
            elif key.lower() in self.relations:
                shown[key] = value
                for gone in self.dropped:
                    if gone[0] == key.lower():
                        shown[key] = _drop(shown[key], gone[1:])
        return shown


def _drop(value: Any, names: tuple[str, ...]) -> Any:
    """`value` (an object or a list of them) without the nested relation `names`."""
    if isinstance(value, list):
        return [_drop(item, names) for item in value]
    if not isinstance(value, Mapping):
        return value
    head, rest = names[0], names[1:]
    kept: dict[str, Any] = {}
    for key, item in value.items():
        if key.lower() != head:
            kept[key] = item
        elif rest:
            kept[key] = _drop(item, rest)
    return kept
