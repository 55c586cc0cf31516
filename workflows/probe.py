"""WorkerProbeWorkflow: proves a worker is polling and can reach its dependencies.

`scoreline dev` runs it once before it prints `ready`, and operators can start it from the Temporal
UI (empty input) to see, from inside the worker, whether Postgres and Redis answer.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy

with workflow.unsafe.imports_passed_through():
    from activities.probe import ProbeActivities
    from domain.probe import ProbeResult, WorkerProbeInput


@workflow.defn
class WorkerProbeWorkflow:
    @workflow.run
    async def run(self, _: WorkerProbeInput) -> ProbeResult:
        workflow.logger.info("worker probe started")
        return await workflow.execute_activity_method(
            ProbeActivities.probe_dependencies,
            start_to_close_timeout=timedelta(seconds=10),
            retry_policy=RetryPolicy(maximum_attempts=1),
        )
