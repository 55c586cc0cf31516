"""Determinism checks: replay recorded histories with the worker's converter and interceptors.

Histories are committed under `tests/match/histories/` and replayed on every run
(`test_committed_histories_still_replay`), so a change that would take a running workflow down
another path fails here first. Tests that play a scenario worth keeping call `replays_and_keep`:
with `SCORELINE_RECORD_HISTORIES=1` they write `<name>.<RELEASE>.json`. Which files stay, and when a
change must be versioned, is docs/workflow-versions.md.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from temporalio.client import WorkflowHistory
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.worker import Replayer

from scoreline.temporal.tracing import TraceInterceptor

HISTORIES = Path(__file__).parents[1] / "match" / "histories"
RELEASE = "pre-release"
"""The release whose workers would replay these histories; named at the first release."""


async def assert_replays(workflows: Sequence[type], *histories: WorkflowHistory) -> None:
    """Fail if today's workflow code would take a different path through any of `histories`."""
    replayer = Replayer(
        workflows=list(workflows), data_converter=pydantic_data_converter, interceptors=[TraceInterceptor()]
    )
    for history in histories:
        await replayer.replay_workflow(history)


async def replays_and_keep(name: str, workflows: Sequence[type], *histories: WorkflowHistory) -> None:
    """Replay `histories`; when recording, keep them as `<name>[-<n>].<RELEASE>.json`."""
    await assert_replays(workflows, *histories)
    if not os.environ.get("SCORELINE_RECORD_HISTORIES"):
        return
    HISTORIES.mkdir(exist_ok=True)
    for number, history in enumerate(histories, start=1):
        suffix = f"-{number}" if len(histories) > 1 else ""
        (HISTORIES / f"{name}{suffix}.{RELEASE}.json").write_text(history.to_json())
