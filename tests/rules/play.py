"""A small driver for the rule tests: apply commands the way the match workflow does."""

from __future__ import annotations

from typing import Any

from domain import rules
from domain.rules import Actor, CricketState, FootballState, Refusal

State = FootballState | CricketState
Step = tuple[str, dict[str, Any]]

LINEUPS: dict[str, Any] = {
    "home": {"starting": list(range(1, 12)), "bench": list(range(12, 17))},
    "away": {"starting": list(range(21, 32)), "bench": list(range(32, 37))},
}
"""Home: 1-11 start, 12-16 on the bench. Away: 21-31 start, 32-36 on the bench."""


class Desk:
    """One match's state and its log counter: every accepted command takes the next seq."""

    def __init__(self, state: State) -> None:
        self.state = state
        self.seq = 0

    def do(self, code: str, body: dict[str, Any] | None = None, *, actor: Actor = "desk") -> int:
        """Apply a command that must be accepted; its seq."""
        command = rules.parse_command(code, body or {})
        refusal = rules.check(self.state, command, actor=actor)
        assert refusal is None, (code, body, refusal)
        self.seq += 1
        self.state = rules.step(self.state, command, self.seq)
        return self.seq

    def play(self, *steps: Step, actor: Actor = "desk") -> Desk:
        for code, body in steps:
            self.do(code, body, actor=actor)
        return self

    def refusal(
        self, code: str, body: dict[str, Any] | None = None, *, actor: Actor = "desk"
    ) -> Refusal | None:
        """What `check` says about a command (the state stays as it was)."""
        before = self.state
        refusal = rules.check(self.state, rules.parse_command(code, body or {}), actor=actor)
        assert self.state == before
        return refusal
