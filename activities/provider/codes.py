"""SportMonks Football v3 code tables and their domain meaning (provider-api.md §3.2, §4.1 to §4.3).

Pure data: stdlib and project types only, safe inside the Temporal workflow sandbox.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from domain.snapshot import FinishedAfter, ItemType, MatchState, PeriodKind, Sport

SPORT_IDS: Mapping[int, Sport] = {1: Sport.FOOTBALL}


class StateCode(NamedTuple):
    """One row of the provider's state table."""

    developer_name: str
    state: MatchState
    finished_after: FinishedAfter | None = None


# The 25-row table from GET /v3/football/states (there is no id 24).
STATES: Mapping[int, StateCode] = {
    1: StateCode("NS", MatchState.SCHEDULED),
    2: StateCode("INPLAY_1ST_HALF", MatchState.LIVE_FIRST_HALF),
    3: StateCode("HT", MatchState.HALF_TIME),
    # Regular time over, extra time to follow.
    4: StateCode("BREAK", MatchState.EXTRA_TIME_BREAK),
    # FT is shown briefly before BREAK when extra time follows: not necessarily the final state.
    5: StateCode("FT", MatchState.FINISHED, FinishedAfter.REGULAR_TIME),
    6: StateCode("INPLAY_ET", MatchState.EXTRA_TIME),
    7: StateCode("AET", MatchState.FINISHED, FinishedAfter.EXTRA_TIME),
    8: StateCode("FT_PEN", MatchState.FINISHED, FinishedAfter.PENALTIES),
    9: StateCode("INPLAY_PENALTIES", MatchState.PENALTIES),
    10: StateCode("POSTPONED", MatchState.POSTPONED),
    11: StateCode("SUSPENDED", MatchState.SUSPENDED),
    12: StateCode("CANCELLED", MatchState.CANCELLED),
    13: StateCode("TBA", MatchState.TO_BE_ANNOUNCED),
    14: StateCode("WO", MatchState.AWARDED),
    15: StateCode("ABANDONED", MatchState.ABANDONED),
    16: StateCode("DELAYED", MatchState.DELAYED),
    17: StateCode("AWARDED", MatchState.AWARDED),
    18: StateCode("INTERRUPTED", MatchState.INTERRUPTED),
    19: StateCode("AWAITING_UPDATES", MatchState.AWAITING_UPDATES),
    20: StateCode("DELETED", MatchState.DELETED),
    21: StateCode("EXTRA_TIME_BREAK", MatchState.EXTRA_TIME_BREAK),
    22: StateCode("INPLAY_2ND_HALF", MatchState.LIVE_SECOND_HALF),
    23: StateCode("INPLAY_ET_2ND_HALF", MatchState.EXTRA_TIME),
    25: StateCode("PEN_BREAK", MatchState.PENALTIES_BREAK),
    26: StateCode("PENDING", MatchState.PENDING),
}

STATES_BY_DEVELOPER_NAME: Mapping[str, StateCode] = {code.developer_name: code for code in STATES.values()}

# Event and timeline type ids share one id space, so one table serves both streams.
ITEM_TYPES: Mapping[int, ItemType] = {
    10: ItemType.VAR,
    14: ItemType.GOAL,
    15: ItemType.OWN_GOAL,
    16: ItemType.PENALTY_GOAL,
    17: ItemType.MISSED_PENALTY,
    18: ItemType.SUBSTITUTION,
    19: ItemType.YELLOW_CARD,
    20: ItemType.RED_CARD,
    21: ItemType.SECOND_YELLOW,
    22: ItemType.PENALTY_SHOOTOUT_MISS,
    23: ItemType.PENALTY_SHOOTOUT_GOAL,
    1697: ItemType.VAR_CARD,
    126: ItemType.CORNER,
    569: ItemType.SHOT_ON_TARGET,
    570: ItemType.SHOT_OFF_TARGET,
    1514: ItemType.OFFSIDE,
    132791: ItemType.DELAY_START,
    132792: ItemType.DELAY_END,
}

# Score rows are matched on `description` first; the type id is the fallback. Field names are
# those of `domain.snapshot.Scores`.
SCORE_DESCRIPTIONS: Mapping[str, str] = {
    "CURRENT": "current",
    "1ST_HALF": "first_half",
    "2ND_HALF": "second_half",
    "2ND_HALF_ONLY": "second_half_only",
    # The extra-time row has not been seen in a real response; both spellings are guesses.
    "ET": "extra_time",
    "EXTRA_TIME": "extra_time",
    "PENALTY_SHOOTOUT": "penalties",
}
SCORE_TYPE_IDS: Mapping[int, str] = {
    1525: "current",
    1: "first_half",
    2: "second_half",
    48996: "second_half_only",
    5: "penalties",
}

PERIOD_TYPES: Mapping[int, PeriodKind] = {
    1: PeriodKind.FIRST_HALF,
    2: PeriodKind.SECOND_HALF,
    3: PeriodKind.EXTRA_TIME,
    5314: PeriodKind.EXTRA_TIME_FIRST_HALF,
    39: PeriodKind.EXTRA_TIME_SECOND_HALF,
    5: PeriodKind.PENALTIES,
}
