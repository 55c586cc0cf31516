"""`include=`: which relations of a recorded fixture a response carries.

Recordings hold fixtures with their relations already included. The real API returns only the
base fields plus the relations asked for, nested ones included (`events.type`), under lower-cased
keys (`weatherReport` comes back as `weatherreport`), with optional field selection
(`participants:name,short_code`, where `id` is always kept). A relation the recording lacks is
simply absent, as when the real API does not honour an include.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# Object-valued fields that are part of an entity, not relations: `scores[].score`,
# `participants[].meta`, `statistics[].data`.
PLAIN_OBJECT_FIELDS = frozenset({"score", "meta", "data"})
# Relations that may be recorded as null (no current period, no venue yet), which would
# otherwise look like plain fields.
NULLABLE_RELATIONS = frozenset(
    {"currentperiod", "venue", "league", "season", "stage", "round", "group", "aggregate", "weatherreport"}
)


def is_relation(key: str, value: Any) -> bool:
    """True if `key` holds an included relation rather than a field of the entity."""
    if isinstance(value, dict | list):
        return key not in PLAIN_OBJECT_FIELDS
    return value is None and key.lower() in NULLABLE_RELATIONS


@dataclass(frozen=True)
class Include:
    """One level of an include tree; the root stands for the fixture itself.

    Attributes:
        fields: Field selection for this level (`id` is always kept); None keeps every field.
        children: Requested relations by lower-cased name.
    """

    fields: frozenset[str] | None = None
    children: Mapping[str, Include] = field(default_factory=dict)

    @classmethod
    def parse(cls, text: str | None) -> Include:
        """The tree for an `include` query value (`participants;events.type;scores:score`)."""
        root: dict[str, Any] = {}
        for item in (text or "").split(";"):
            path, _, selection = item.partition(":")
            names = [name.strip().lower() for name in path.split(".") if name.strip()]
            if not names:
                continue
            level, leaf = root, {}
            for name in names:
                leaf = level.setdefault(name, {"fields": None, "children": {}})
                level = leaf["children"]
            if selection.strip():
                leaf["fields"] = frozenset(part.strip() for part in selection.split(",") if part.strip())
        return cls(children=_freeze(root))

    def has(self, path: str) -> bool:
        """True if the dotted relation `path` was requested."""
        node: Include | None = self
        for name in path.lower().split("."):
            node = node.children.get(name) if node is not None else None
        return node is not None

    def without(self, path: str) -> Include:
        """The same tree minus the dotted relation `path` (and what hangs below it)."""
        head, _, rest = path.lower().partition(".")
        if head not in self.children:
            return self
        children = dict(self.children)
        if rest:
            children[head] = children[head].without(rest)
        else:
            del children[head]
        return Include(fields=self.fields, children=children)

    def apply(self, entity: Mapping[str, Any]) -> dict[str, Any]:
        """A copy of `entity` with only the selected fields and the requested relations."""
        shown: dict[str, Any] = {}
        for key, value in entity.items():
            if is_relation(key, value):
                child = self.children.get(key.lower())
                if child is not None:
                    shown[key.lower()] = child._relation(value)
            elif self.fields is None or key == "id" or key in self.fields:
                shown[key] = value
        return shown

    def _relation(self, value: Any) -> Any:
        if isinstance(value, list):
            return [self.apply(item) if isinstance(item, Mapping) else item for item in value]
        if isinstance(value, Mapping):
            return self.apply(value)
        return value


def _freeze(level: dict[str, Any]) -> dict[str, Include]:
    return {
        name: Include(fields=spec["fields"], children=_freeze(spec["children"]))
        for name, spec in level.items()
    }
