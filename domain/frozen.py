"""`Frozen`: the base of the domain's value models and messages.

A value never changes once built (pydantic refuses an assignment), and a field nobody declared is
an error rather than silently dropped, so a misspelt field in a message or a stored rule state is
found where it is read. The cricket board alone ignores unknown fields (`domain.cricket.board`).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Frozen(BaseModel):
    """Immutable, and no field it does not declare."""

    model_config = ConfigDict(frozen=True, extra="forbid")
