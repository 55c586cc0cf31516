"""The messages of ReplayFixtureWorkflow: one plain JSON input an operator can type, and its result."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class ReplayInput(BaseModel):
    """Every field has a default so the UI form can send only what it changes."""

    model_config = ConfigDict(frozen=True)

    fixture_id: int = 0
    rebuild: bool = True
    """Also rewrite the derived read copies (the Redis match view and event page) from Postgres."""


class ReplayResult(BaseModel):
    """Whether the fixture was found, and what the replay added or rebuilt."""

    model_config = ConfigDict(frozen=True)

    fixture_id: int
    found: bool
    entries_added: int = 0
    version_before: int = 0
    version_after: int = 0
    rebuilt: bool = False

    @property
    def changed(self) -> bool:
        return self.entries_added > 0
