"""A test-only workflow that runs the push activity once, the way MatchWorkflow will, and a worker for it."""

from __future__ import annotations

import uuid
from datetime import timedelta

from temporalio import workflow

# Everything else passes through the sandbox: re-importing SQLAlchemy or the worker for every run
# costs about a second per workflow task.
with workflow.unsafe.imports_passed_through():
    from sqlalchemy.ext.asyncio import AsyncEngine
    from temporalio.client import Client
    from temporalio.common import RetryPolicy
    from temporalio.worker import Worker

    from activities.push.apns import ApnsClient
    from activities.push.fanout import FanoutConfig, PushActivities
    from domain.failures import APNS_CONFIG_ERROR
    from domain.pushes import PushInput, PushResult

HEARTBEAT_TIMEOUT = timedelta(seconds=10)


@workflow.defn
class PushOnceWorkflow:
    @workflow.run
    async def run(self, push: PushInput) -> PushResult:
        result: PushResult = await workflow.execute_activity_method(
            PushActivities.push_live_activities,
            push,
            start_to_close_timeout=timedelta(minutes=5),
            heartbeat_timeout=HEARTBEAT_TIMEOUT,
            retry_policy=RetryPolicy(
                initial_interval=timedelta(milliseconds=200),
                maximum_interval=timedelta(seconds=2),
                maximum_attempts=10,
                non_retryable_error_types=[APNS_CONFIG_ERROR],
            ),
        )
        return result


def push_worker(
    client: Client, task_queue: str, engine: AsyncEngine, apns: ApnsClient | None, config: FanoutConfig
) -> Worker:
    """A real worker with the real activity; heartbeats reach the server every second."""
    activities = PushActivities(engine, apns, config)
    return Worker(
        client,
        task_queue=task_queue,
        workflows=[PushOnceWorkflow],
        activities=[activities.push_live_activities],
        max_heartbeat_throttle_interval=timedelta(seconds=1),
        default_heartbeat_throttle_interval=timedelta(seconds=1),
    )


async def run_push(client: Client, task_queue: str, push: PushInput) -> PushResult:
    """Run `push` once through `PushOnceWorkflow` on a worker of `task_queue`; its result."""
    result: PushResult = await client.execute_workflow(
        PushOnceWorkflow.run, push, id=f"push-{uuid.uuid4()}", task_queue=task_queue
    )
    return result
