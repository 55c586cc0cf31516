"""The match domain, pure: states, snapshots, sport rules, desk decisions, key moments, push plans,
and the messages workflows, activities and the API share (`match_run`, `commands`, `pushes`,
`fixture_sync`, `retention`).

Nothing here does I/O, reads a clock or draws a random number, so workflows, activities and the API
can all use it and the workflow sandbox can import it (`tests/foundation/test_purity.py` checks).
"""
