"""Carries the trace id through Temporal as a header: client → workflow → activity / child / next run.

One interceptor serves both sides. On the client it stamps the caller's trace id (bound by the API
middleware or the CLI) on every start, signal, query and update. In the worker it binds the id from
the incoming header into structlog's contextvars for the workflow, each update/signal handler and
each activity, and copies it onto everything the workflow schedules, so one id finds every log line
of one change. Reading a header is pure, so this is safe inside the workflow sandbox.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager, nullcontext
from typing import Any, NoReturn, Protocol

import temporalio.api.common.v1
import temporalio.client
import temporalio.converter
import temporalio.worker
from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from scoreline.tracing import TRACE_KEY, bound_trace, current_trace_id

HEADER = "scoreline-trace-id"
_converter = temporalio.converter.default().payload_converter


class _HasHeaders(Protocol):
    headers: Mapping[str, temporalio.api.common.v1.Payload]


def _stamp(target: _HasHeaders) -> None:
    trace_id = current_trace_id()
    if trace_id is not None and HEADER not in target.headers:
        target.headers = {**target.headers, HEADER: _converter.to_payload(trace_id)}


def _trace_from(source: _HasHeaders) -> str | None:
    payload = source.headers.get(HEADER)
    if payload is None:
        return None
    try:
        value = _converter.from_payload(payload, str)
    except Exception:  # noqa: BLE001 - a foreign or corrupt header must never fail a task
        return None
    return value if isinstance(value, str) and value else None


def _bound(source: _HasHeaders) -> AbstractContextManager[object]:
    trace_id = _trace_from(source)
    return bound_trace(trace_id) if trace_id is not None else nullcontext()


class TraceInterceptor(temporalio.client.Interceptor, temporalio.worker.Interceptor):
    """Install on the client (`interceptors=[TraceInterceptor()]`); workers built from it inherit it."""

    def intercept_client(
        self, next: temporalio.client.OutboundInterceptor
    ) -> temporalio.client.OutboundInterceptor:
        return _ClientOutbound(next)

    def intercept_activity(
        self, next: temporalio.worker.ActivityInboundInterceptor
    ) -> temporalio.worker.ActivityInboundInterceptor:
        return _ActivityInbound(next)

    def workflow_interceptor_class(
        self, input: temporalio.worker.WorkflowInterceptorClassInput
    ) -> type[temporalio.worker.WorkflowInboundInterceptor]:
        return _WorkflowInbound


class _ClientOutbound(temporalio.client.OutboundInterceptor):
    async def start_workflow(
        self, input: temporalio.client.StartWorkflowInput
    ) -> temporalio.client.WorkflowHandle[Any, Any]:
        _stamp(input)
        return await super().start_workflow(input)

    async def signal_workflow(self, input: temporalio.client.SignalWorkflowInput) -> None:
        _stamp(input)
        await super().signal_workflow(input)

    async def query_workflow(self, input: temporalio.client.QueryWorkflowInput) -> Any:
        _stamp(input)
        return await super().query_workflow(input)

    async def start_workflow_update(
        self, input: temporalio.client.StartWorkflowUpdateInput
    ) -> temporalio.client.WorkflowUpdateHandle[Any]:
        _stamp(input)
        return await super().start_workflow_update(input)

    async def start_update_with_start_workflow(
        self, input: temporalio.client.StartWorkflowUpdateWithStartInput
    ) -> temporalio.client.WorkflowUpdateHandle[Any]:
        _stamp(input.start_workflow_input)
        _stamp(input.update_workflow_input)
        return await super().start_update_with_start_workflow(input)


class _ActivityInbound(temporalio.worker.ActivityInboundInterceptor):
    async def execute_activity(self, input: temporalio.worker.ExecuteActivityInput) -> Any:
        with _bound(input):
            return await super().execute_activity(input)


class _WorkflowInbound(temporalio.worker.WorkflowInboundInterceptor):
    def init(self, outbound: temporalio.worker.WorkflowOutboundInterceptor) -> None:
        super().init(_WorkflowOutbound(outbound))

    async def execute_workflow(self, input: temporalio.worker.ExecuteWorkflowInput) -> Any:
        with _bound(input):
            return await super().execute_workflow(input)

    async def handle_signal(self, input: temporalio.worker.HandleSignalInput) -> None:
        with _bound(input):
            await super().handle_signal(input)

    async def handle_update_handler(self, input: temporalio.worker.HandleUpdateInput) -> Any:
        with _bound(input):
            return await super().handle_update_handler(input)


class _WorkflowOutbound(temporalio.worker.WorkflowOutboundInterceptor):
    def start_activity(self, input: temporalio.worker.StartActivityInput) -> workflow.ActivityHandle[Any]:
        _stamp(input)
        return super().start_activity(input)

    def start_local_activity(
        self, input: temporalio.worker.StartLocalActivityInput
    ) -> workflow.ActivityHandle[Any]:
        _stamp(input)
        return super().start_local_activity(input)

    async def start_child_workflow(
        self, input: temporalio.worker.StartChildWorkflowInput
    ) -> workflow.ChildWorkflowHandle[Any, Any]:
        _stamp(input)
        return await super().start_child_workflow(input)

    def continue_as_new(self, input: temporalio.worker.ContinueAsNewInput) -> NoReturn:
        _stamp(input)
        super().continue_as_new(input)

    async def signal_external_workflow(self, input: temporalio.worker.SignalExternalWorkflowInput) -> None:
        _stamp(input)
        await super().signal_external_workflow(input)


__all__ = ["HEADER", "TRACE_KEY", "TraceInterceptor"]
