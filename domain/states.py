"""Groups of match states that decide how a match is watched and when it is over."""

from __future__ import annotations

from domain.snapshot import MatchState

OVER_STATES = frozenset(
    {MatchState.FINISHED, MatchState.CANCELLED, MatchState.ABANDONED, MatchState.AWARDED, MatchState.DELETED}
)
"""States after which nothing more will happen to a match (a cricket match's late ball edits are
fetched by the post-match rechecks, not by watching)."""

BREAK_STATES = frozenset(
    {
        MatchState.HALF_TIME,
        MatchState.EXTRA_TIME_BREAK,
        MatchState.PENALTIES_BREAK,
        MatchState.INNINGS_BREAK,
        MatchState.LUNCH,
        MatchState.TEA,
        MatchState.DINNER,
    }
)

OVERNIGHT_STATES = frozenset({MatchState.STUMPS})
"""Play is over for the day: polled at the stumps interval until the next day starts."""

PLAYING_STATES = frozenset(
    {
        MatchState.LIVE_FIRST_HALF,
        MatchState.LIVE_SECOND_HALF,
        MatchState.EXTRA_TIME,
        MatchState.PENALTIES,
        MatchState.INNINGS_1,
        MatchState.INNINGS_2,
        MatchState.INNINGS_3,
        MatchState.INNINGS_4,
    }
)
"""States in which the ball is in play: polled at the live interval."""

STARTED_STATES = PLAYING_STATES | BREAK_STATES | OVERNIGHT_STATES | OVER_STATES
"""Once a match is in one of these, its followers' Live Activities have been started."""

HALTED_STATES = frozenset({MatchState.INTERRUPTED, MatchState.SUSPENDED})
"""Play stopped after it began (rain, bad light, crowd trouble), to go on later. Not in
`STARTED_STATES`, which recorded workflow histories were decided with; a follower who follows
while play is halted is owed a Live Activity all the same."""

BEGUN_STATES = STARTED_STATES | HALTED_STATES
"""Play began: it goes on, stands halted or is over."""
