"""Deterministic generators of provider recordings for scenarios no real recording shows.

`python -m devkit.simulators.provider.scenarios.cricket` writes the cricket ones into `recordings/`: each a
gzip JSON Lines recording in the Part 1 format of `provider-api.md`, beside its `.expected.json`.
The same seed always writes the same lines, and `tests/provider_sim/test_cricket_scenarios.py` keeps
the committed files equal to what the generator writes.
"""
