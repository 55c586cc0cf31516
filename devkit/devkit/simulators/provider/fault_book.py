"""Which faults are in force at a replay time, and how much of each has been used.

Scripted faults come from the recordings and start at their line's `t`; live faults come from
`POST /_sim/faults` and start at the replay time they were posted. Both are judged against the
replay clock, so moving the test clock ends (or re-enters) a duration fault deterministically.
A scripted fault without `endpoints` acts on its recording's API only (a cricket recording's
outage is the cricket API's, as the two are different hosts on the real provider); a live one
without `endpoints` acts on every data endpoint.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable, Set
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar, cast

from devkit.simulators.provider.endpoints import Endpoint
from devkit.simulators.provider.faults import FaultBase, FaultSpec

S = TypeVar("S", bound=FaultBase)
FaultSource = Literal["recording", "live"]


@dataclass
class Activation(Generic[S]):
    """One fault, placed on the replay timeline.

    Attributes:
        id: Handle shown by `GET /_sim/faults`.
        spec: The fault as written.
        start_t: Replay time it starts.
        source: `recording` or `live`.
        used: Responses it has affected so far.
        cleared: Set by `DELETE /_sim/faults`; a cleared fault affects nothing more.
        scope: The endpoints it may act on besides its own `endpoints` (None: all).
    """

    id: str
    spec: S
    start_t: float
    source: FaultSource
    used: int = 0
    cleared: bool = False
    scope: Set[Endpoint] | None = None

    def in_force(self, t: float) -> bool:
        """True if the fault applies at replay time `t` (any endpoint)."""
        if self.cleared or t < self.start_t:
            return False
        if self.spec.duration is not None and t >= self.start_t + self.spec.duration:
            return False
        return self.spec.count is None or self.used < self.spec.count

    def applies(self, t: float, endpoint: Endpoint) -> bool:
        """True if the fault applies to a request for `endpoint` at replay time `t`."""
        if self.scope is not None and endpoint not in self.scope:
            return False
        return self.in_force(t) and (self.spec.endpoints is None or endpoint in self.spec.endpoints)

    def holds(self, t: float) -> bool:
        """True while a taken fault keeps acting on its request (a hang holds it until then).

        Its own use is already counted, so only the clock and clearing end it.
        """
        if self.cleared or t < self.start_t:
            return False
        left = self.seconds_left(t)
        return left is None or left > 0

    def seconds_left(self, t: float) -> float | None:
        """Replay seconds until the duration runs out; None when it has no duration."""
        if self.spec.duration is None:
            return None
        return max(0.0, self.start_t + self.spec.duration - t)


class FaultBook:
    """All scripted and live faults, and how often each kind was injected.

    Args:
        scripted: `(start_t, spec, scope)` from the recordings; `scope` is the endpoints of the
            recording's API (None: all).
    """

    def __init__(self, scripted: Iterable[tuple[float, FaultSpec, Set[Endpoint] | None]] = ()) -> None:
        self._ids = itertools.count(1)
        self._activations: list[Activation[FaultBase]] = [
            self._activation(spec, t, "recording", scope)
            for t, spec, scope in sorted(scripted, key=lambda p: p[0])
        ]
        self.injected: Counter[str] = Counter()

    def _activation(
        self, spec: FaultSpec, t: float, source: FaultSource, scope: Set[Endpoint] | None = None
    ) -> Activation[FaultBase]:
        prefix = "rec" if source == "recording" else "live"
        return Activation(id=f"{prefix}-{next(self._ids)}", spec=spec, start_t=t, source=source, scope=scope)

    @property
    def activations(self) -> tuple[Activation[FaultBase], ...]:
        """Every fault, scripted first, in start order."""
        return tuple(self._activations)

    def add_live(self, spec: FaultSpec, t: float) -> Activation[FaultBase]:
        """Start a live fault at replay time `t`."""
        activation = self._activation(spec, t, "live")
        self._activations.append(activation)
        return activation

    def clear_live(self) -> int:
        """End every live fault; returns how many there were."""
        live = [a for a in self._activations if a.source == "live"]
        self._activations = [a for a in self._activations if a.source != "live"]
        for activation in live:
            activation.cleared = True
        return len(live)

    def applicable(self, kind: type[S], t: float, endpoint: Endpoint) -> list[Activation[S]]:
        """Every fault of `kind` that applies to a request for `endpoint` at `t`, unspent."""
        return [
            cast(Activation[S], activation)
            for activation in self._activations
            if isinstance(activation.spec, kind) and activation.applies(t, endpoint)
        ]

    def use(self, activation: Activation[S]) -> None:
        """Count one response affected by `activation`."""
        activation.used += 1
        self.injected[activation.spec.kind] += 1

    def take(self, kind: type[S], t: float, endpoint: Endpoint) -> Activation[S] | None:
        """The first fault of `kind` that applies, counted as used by this response."""
        for activation in self.applicable(kind, t, endpoint):
            self.use(activation)
            return activation
        return None
