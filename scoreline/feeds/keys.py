"""Document keys, parsed strictly: `match/{fixture_id}` and `fixtures/{YYYY-MM-DD}`.

Only the canonical spelling of a key is accepted (no leading zeros, a real calendar date), so each
document has exactly one URL and one cache entry; anything else is simply not a document.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

_MATCH = re.compile(r"match/([1-9][0-9]{0,18})")
_FIXTURES = re.compile(r"fixtures/([0-9]{4}-[0-9]{2}-[0-9]{2})")
_BIGINT_MAX = 2**63 - 1


@dataclass(frozen=True, slots=True)
class MatchDoc:
    """One match: fixture facts, scoreboard and events."""

    fixture_id: int
    kind = "match"

    @property
    def key(self) -> str:
        return f"match/{self.fixture_id}"


@dataclass(frozen=True, slots=True)
class FixturesDoc:
    """One UTC day's fixtures with their state and score."""

    day: date
    kind = "fixtures"

    @property
    def key(self) -> str:
        return f"fixtures/{self.day.isoformat()}"


DocKey = MatchDoc | FixturesDoc


def parse_doc_key(raw: str) -> DocKey | None:
    """The document `raw` names, or None if it names none (the API answers 404 then)."""
    match = _MATCH.fullmatch(raw)
    if match is not None:
        fixture_id = int(match.group(1))
        return MatchDoc(fixture_id) if fixture_id <= _BIGINT_MAX else None
    found = _FIXTURES.fullmatch(raw)
    if found is not None:
        try:
            return FixturesDoc(date.fromisoformat(found.group(1)))
        except ValueError:
            return None
    return None
