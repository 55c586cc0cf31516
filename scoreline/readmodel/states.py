"""Which normalised states a `?state=` filter means: a group name, an exact state, or a list of both.

Only `live` is a group. It holds every state between kick-off and the end in which the match is
still going on for a fan: the ball in play, a scheduled break (half time, before extra time, before
penalties), and a stoppage (`interrupted`: resumes shortly; `suspended`: resumes later, possibly
another day, but the match has started and is not over, so its screen stays up). `delayed` is not
live: SportMonks uses it for a kick-off that has been put back, so nothing has happened yet.
`awaiting_updates` is not live either: the provider has lost track, before or after the end.
Cricket's live states are its innings and the breaks between sessions, stumps included: a Test
that stopped for the night has started and is not over, so its screen stays up like a suspended
match's.
"""

from __future__ import annotations

from collections.abc import Mapping

from domain.snapshot import MatchState

LIVE_STATES: frozenset[MatchState] = frozenset(
    {
        MatchState.LIVE_FIRST_HALF,
        MatchState.HALF_TIME,
        MatchState.LIVE_SECOND_HALF,
        MatchState.EXTRA_TIME_BREAK,
        MatchState.EXTRA_TIME,
        MatchState.PENALTIES_BREAK,
        MatchState.PENALTIES,
        MatchState.INTERRUPTED,
        MatchState.SUSPENDED,
        MatchState.INNINGS_1,
        MatchState.INNINGS_2,
        MatchState.INNINGS_3,
        MatchState.INNINGS_4,
        MatchState.INNINGS_BREAK,
        MatchState.LUNCH,
        MatchState.TEA,
        MatchState.DINNER,
        MatchState.STUMPS,
    }
)
"""Started and not over: what a live-scores screen lists."""

STATE_GROUPS: Mapping[str, frozenset[MatchState]] = {"live": LIVE_STATES}
"""Filter names that stand for several states."""

MAX_FILTER_TERMS = 32
"""More terms than there are states and groups is a mistake, not a query."""


class UnknownStateError(ValueError):
    """A `?state=` term that is neither a group nor a normalised state name."""

    def __init__(self, term: str) -> None:
        super().__init__(f"unknown state {term!r}: use a state name, a group ({', '.join(STATE_GROUPS)})")
        self.term = term


def parse_state_filter(raw: str | None) -> frozenset[MatchState] | None:
    """The states a filter such as `live`, `finished` or `live,finished` stands for.

    `None` or a blank filter means "every state" and gives `None`, so the caller can skip the
    condition entirely rather than list all of them.

    Raises:
        UnknownStateError: a term names no group and no state.
    """
    terms = [term.strip().lower() for term in (raw or "").split(",") if term.strip()]
    if not terms:
        return None
    if len(terms) > MAX_FILTER_TERMS:
        raise UnknownStateError(",".join(terms)[:40] + "…")
    states: set[MatchState] = set()
    for term in terms:
        group = STATE_GROUPS.get(term)
        if group is not None:
            states |= group
            continue
        try:
            states.add(MatchState(term))
        except ValueError:
            raise UnknownStateError(term) from None
    return frozenset(states)
