"""One trace id finds every log line of one change: client → workflow → activity, across processes' hops."""

from __future__ import annotations

import io
import json
import uuid
from collections.abc import Iterator

import pytest
from temporalio.client import Client

from domain.probe import WorkerProbeInput
from scoreline.settings import Settings
from scoreline.tracing import bound_trace, trace_id_from_traceparent, traceparent_for
from tests.support.logs import json_log_lines as captured_log_lines
from tests.support.worker import running_worker
from workflows.probe import WorkerProbeWorkflow


@pytest.fixture
def json_log_lines() -> Iterator[io.StringIO]:
    """Scoreline's real JSON logging, written to a buffer the test can read."""
    with captured_log_lines() as buffer:
        yield buffer


def test_traceparent_round_trip() -> None:
    """A traceparent we send carries the id we parse back; all-zero ids are invalid."""
    trace = "0af7651916cd43dd8448eb211c80319c"
    assert trace_id_from_traceparent(traceparent_for(trace)) == trace
    assert trace_id_from_traceparent("00-" + "0" * 32 + "-00f067aa0ba902b7-01") is None
    assert trace_id_from_traceparent(None) is None


async def test_trace_id_reaches_workflow_and_activity_logs(
    temporal_client: Client, settings: Settings, json_log_lines: io.StringIO
) -> None:
    """A workflow started under a trace id logs it in the workflow and in the activity it runs."""
    async with running_worker(temporal_client, settings):
        with bound_trace() as trace_id:
            result = await temporal_client.execute_workflow(
                WorkerProbeWorkflow.run,
                WorkerProbeInput(),
                id=f"probe-{uuid.uuid4()}",
                task_queue=settings.temporal_task_queue,
            )
    assert result.ok
    lines = [json.loads(line) for line in json_log_lines.getvalue().splitlines() if line.startswith("{")]
    traced = {line["event"] for line in lines if line.get("trace_id") == trace_id}
    assert "worker probe" in traced, lines
    assert any(event.startswith("worker probe started") for event in traced), lines
