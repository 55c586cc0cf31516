"""`Frozen`: the base of the domain's strict value models (snapshots, rule states, pushes, moments).

A value never changes once built (pydantic refuses an assignment), and a field nobody declared is
an error rather than silently dropped, so a misspelt field in a push or a stored rule state is
found where it is read. The cricket board ignores unknown fields instead (`domain.cricket.board`:
a newer build's stored board must still read); the messages of `domain.commands` and
`domain.match_run` keep pydantic's default, which ignores them too.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Frozen(BaseModel):
    """Immutable, and no field it does not declare."""

    model_config = ConfigDict(frozen=True, extra="forbid")
