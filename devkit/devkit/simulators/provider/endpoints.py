"""The data endpoints the simulator serves, by the name faults and stats use for them.

Football names are the route below `API_PREFIX` (`livescores/inplay`), so a recording's
`endpoints` list reads like the URL. Cricket names are the route below `CRICKET_API_PREFIX` with
`cricket/` in front (`cricket/livescores`, `cricket/fixtures/{id}`), so the two APIs' counters and
faults stay apart when one process serves both.
"""

from __future__ import annotations

from typing import Literal, get_args

API_PREFIX = "/v3/football"
CRICKET_API_PREFIX = "/api/v2.0"

FootballEndpoint = Literal[
    "livescores",
    "livescores/inplay",
    "livescores/latest",
    "fixtures/{id}",
    "fixtures/multi/{ids}",
    "fixtures/between/{start}/{end}",
]
CricketEndpoint = Literal[
    "cricket/livescores",
    "cricket/fixtures/{id}",
    "cricket/fixtures",
    "cricket/scores",
    "cricket/scores/{id}",
]
Endpoint = FootballEndpoint | CricketEndpoint

FOOTBALL_ENDPOINTS: frozenset[Endpoint] = frozenset(get_args(FootballEndpoint))
CRICKET_ENDPOINTS: frozenset[Endpoint] = frozenset(get_args(CricketEndpoint))

# Every fixture and livescore endpoint shares one rate-limit bucket on the real API.
FIXTURE_ENTITY = "Fixture"
