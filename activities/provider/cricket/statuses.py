"""Cricket v2 `status` text → domain `MatchState` (cricket.md §2, provider-api.md §6.4).

The status is the only reliable phase signal: `live` is true on every fixture, finished ones
included, so it is never read. An unknown status is `unknown`, kept with its text, never an error:
a new provider status must not stop a match from being ingested.
"""

from __future__ import annotations

import re

from domain.snapshot import MatchState

_STATES: dict[str, MatchState] = {
    "ns": MatchState.SCHEDULED,
    "delayed": MatchState.DELAYED,
    "1st innings": MatchState.INNINGS_1,
    "2nd innings": MatchState.INNINGS_2,
    "3rd innings": MatchState.INNINGS_3,
    "4th innings": MatchState.INNINGS_4,
    "innings break": MatchState.INNINGS_BREAK,
    "lunch": MatchState.LUNCH,
    "tea break": MatchState.TEA,
    "dinner": MatchState.DINNER,
    "int.": MatchState.INTERRUPTED,
    "finished": MatchState.FINISHED,
    "aban.": MatchState.ABANDONED,
    # The docs table writes `Cancl` with the period outside the code span; the API sends `Cancl.`.
    "cancl.": MatchState.CANCELLED,
    "cancl": MatchState.CANCELLED,
    "postp.": MatchState.POSTPONED,
}

# The day of a multi-day match exists only inside this string ("Stump Day 2").
_STUMPS = re.compile(r"stump day ([0-9]{1,2})")


def _key(status: str) -> str:
    # Hand-typed provider text: tolerate case and stray or doubled spaces, nothing more.
    return " ".join(status.split()).casefold()


def cricket_state(status: str | None) -> MatchState:
    """The domain state of a Cricket v2 `status`; `unknown` for a status not in the table."""
    if status is None:
        return MatchState.UNKNOWN
    key = _key(status)
    if _STUMPS.fullmatch(key):
        return MatchState.STUMPS
    return _STATES.get(key, MatchState.UNKNOWN)


def stumps_day(status: str | None) -> int | None:
    """The day that ended at stumps (`Stump Day 2` → 2); None for any other status."""
    if status is None:
        return None
    match = _STUMPS.fullmatch(_key(status))
    return int(match.group(1)) if match else None
