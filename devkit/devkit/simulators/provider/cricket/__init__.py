"""The SportMonks Cricket v2 side of the simulator: its includes, listings, scores and bodies.

Cricket v2 is a different API from Football v3 (`/api/v2.0`, `api_token` only, comma-separated
includes, `{"data": …}` with no rate-limit block, Laravel pagination), so its rules live here; the
clock, the faults and the stats are shared with football. Its time mapping (`cricket_timemap`)
and its HTTP answer (`cricket_serving`) sit beside football's, above the simulator they use.
"""
