"""The one way every process connects to Temporal: pydantic payloads and trace propagation."""

from __future__ import annotations

from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.runtime import Runtime

from scoreline.settings import Settings
from scoreline.temporal.tracing import TraceInterceptor


async def connect(address: str, namespace: str = "default", *, runtime: Runtime | None = None) -> Client:
    """A client whose workers and calls carry trace ids and encode pydantic models.

    `runtime` is the process's metrics exporter (`scoreline.metrics.exporter`); workers built on
    the client inherit it.
    """
    return await Client.connect(
        address,
        namespace=namespace,
        data_converter=pydantic_data_converter,
        interceptors=[TraceInterceptor()],
        runtime=runtime,
    )


async def connect_from(settings: Settings, *, runtime: Runtime | None = None) -> Client:
    return await connect(settings.temporal_address, settings.temporal_namespace, runtime=runtime)
