"""The messages of WorkerProbeWorkflow: an empty input for the UI form, and what the worker saw."""

from __future__ import annotations

from pydantic import BaseModel


class WorkerProbeInput(BaseModel):
    """Empty on purpose: the UI's Start Workflow form can send `{}`."""


class ProbeResult(BaseModel):
    """Each dependency's answer as the worker saw it: "ok" or the error."""

    postgres: str
    redis: str

    @property
    def ok(self) -> bool:
        return self.postgres == "ok" and self.redis == "ok"
