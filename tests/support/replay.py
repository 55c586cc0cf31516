"""Determinism checks: replay recorded histories with the worker's converter and interceptors."""

from __future__ import annotations

from collections.abc import Sequence

from temporalio.client import WorkflowHistory
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.worker import Replayer

from scoreline.temporal.tracing import TraceInterceptor


async def assert_replays(workflows: Sequence[type], *histories: WorkflowHistory) -> None:
    """Fail if today's workflow code would take a different path through any of `histories`."""
    replayer = Replayer(
        workflows=list(workflows), data_converter=pydantic_data_converter, interceptors=[TraceInterceptor()]
    )
    for history in histories:
        await replayer.replay_workflow(history)
