"""The data endpoints the simulator serves, by the name faults and stats use for them."""

from __future__ import annotations

from typing import Literal

API_PREFIX = "/v3/football"

# Each name is the route below `API_PREFIX`, so a recording's `endpoints` list reads like the URL.
Endpoint = Literal[
    "livescores",
    "livescores/inplay",
    "livescores/latest",
    "fixtures/{id}",
    "fixtures/multi/{ids}",
    "fixtures/between/{start}/{end}",
]

# Every fixture and livescore endpoint shares one rate-limit bucket on the real API.
FIXTURE_ENTITY = "Fixture"
