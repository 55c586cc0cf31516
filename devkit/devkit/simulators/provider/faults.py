"""The fault JSON: what a recording's `fault` line or `POST /_sim/faults` asks the simulator to do.

Every fault may be bounded by `duration` (replay seconds from its start) and/or `count` (responses
it affects); with neither it lasts until cleared (a scripted one: for the rest of the replay).
`endpoints` limits it to some data endpoints; without it, all of them.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from devkit.simulators.provider.endpoints import Endpoint


class FaultBase(BaseModel):
    """The fields every fault has."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: str
    duration: float | None = Field(default=None, gt=0, description="Replay seconds it lasts.")
    count: int | None = Field(default=None, gt=0, description="Responses it affects.")
    endpoints: tuple[Endpoint, ...] | None = None


class StatusFault(FaultBase):
    """Answer with this HTTP status instead of data."""

    kind: Literal["status"]
    status: int = Field(default=503, ge=400, le=599)


class RateLimitFault(FaultBase):
    """Answer 429 with SportMonks' rate-limit body."""

    kind: Literal["rate_limit"]


class MalformedFault(FaultBase):
    """Answer 200 with a body that is not JSON."""

    kind: Literal["malformed"]


class TruncatedFault(FaultBase):
    """Declare the full Content-Length, send half the body, close the connection."""

    kind: Literal["truncated"]


class HangFault(FaultBase):
    """Accept the request and answer nothing while the fault lasts.

    With a `duration` the request is held until it ends (then answered normally); with only a
    `count`, until the client gives up or the fault is cleared.
    """

    kind: Literal["hang"]


class ResetFault(FaultBase):
    """Reset the TCP connection instead of answering."""

    kind: Literal["reset"]


class DropIncludeFault(FaultBase):
    """Leave a requested relation out, as the real API does when it does not honour an include."""

    kind: Literal["drop_include"]
    include: str = Field(min_length=1, description="A relation, dotted for nested: `events.type`.")


class LatencyFault(FaultBase):
    """Delay each affected response by `seconds` of real time."""

    kind: Literal["latency"]
    seconds: float = Field(gt=0)


FaultSpec = Annotated[
    StatusFault
    | RateLimitFault
    | MalformedFault
    | TruncatedFault
    | HangFault
    | ResetFault
    | DropIncludeFault
    | LatencyFault,
    Field(discriminator="kind"),
]
