"""Cricket in domain terms: the ball, the innings and the board every output shows.

`board` holds the frozen models (what a snapshot, a read view and a push carry); the fold of a
snapshot's balls into a board is `domain.cricket_scoring`, beside the snapshot it reads. All are pure (stdlib and
pydantic only), safe in a Temporal workflow.
"""
