"""Cricket in domain terms: the ball, the innings and the board every output shows.

`board` holds the frozen models (what a snapshot, a read view and a push carry); `scoring` folds a
list of balls into a board. Both are pure (stdlib and pydantic only), safe in a Temporal workflow.
"""
