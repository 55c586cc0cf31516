"""The one way every process connects to Temporal: pydantic payloads and trace propagation."""

from __future__ import annotations

from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter

from scoreline.settings import Settings
from scoreline.temporal.tracing import TraceInterceptor


async def connect(address: str, namespace: str = "default") -> Client:
    """A client whose workers and calls carry trace ids and encode pydantic models."""
    return await Client.connect(
        address,
        namespace=namespace,
        data_converter=pydantic_data_converter,
        interceptors=[TraceInterceptor()],
    )


async def connect_from(settings: Settings) -> Client:
    return await connect(settings.temporal_address, settings.temporal_namespace)
