"""The baseline of `bench/command_latency.py`: a workflow whose Updates do (almost) nothing.

It lives in an importable module (the worker's sandbox needed one) rather than in the bench script.
Like `MatchWorkflow` it runs outside the sandbox, so the baseline pays for the sandbox exactly when
the road does (the bench's `sandbox` what-if puts both back in). `bare` returns at once: one Update round trip, one workflow task. `with_local_activity`
runs one local activity that returns at once, as `MatchWorkflow.submit` runs its commit.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import activity, workflow

LOCAL_ACTIVITY = "bench_trivial_local"


@activity.defn(name=LOCAL_ACTIVITY)
async def trivial_local(value: int) -> int:
    return value + 1


@workflow.defn(sandboxed=False)
class TrivialUpdateWorkflow:
    """Runs until `stop`; answers Updates meanwhile."""

    def __init__(self) -> None:
        self._stopped = False

    @workflow.run
    async def run(self) -> None:
        # Like MatchWorkflow, continue as new when Temporal suggests it (a run takes 2,000 Updates).
        await workflow.wait_condition(lambda: self._stopped or workflow.info().is_continue_as_new_suggested())
        if not self._stopped:
            await workflow.wait_condition(workflow.all_handlers_finished)
            workflow.continue_as_new()

    @workflow.update
    async def bare(self, value: int) -> int:
        return value + 1

    @workflow.update
    async def with_local_activity(self, value: int) -> int:
        result: int = await workflow.execute_local_activity(
            trivial_local, value, start_to_close_timeout=timedelta(seconds=10)
        )
        return result

    @workflow.signal
    def stop(self) -> None:
        self._stopped = True
