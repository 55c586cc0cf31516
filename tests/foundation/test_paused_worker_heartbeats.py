"""A main-queue activity outlives a pause of its worker shorter than its heartbeat timeout.

The soak of 2026-12-05 (seed 18): the SDK sends a heartbeat at most once per 0.8 heartbeat
timeout by default, so a push fan-out (timeout 30 s) beating every 2 s was heard every 24 s. Its
worker, SIGSTOPped for 19.5 s eighteen seconds after the last heartbeat that went out, lost the
attempt to a heartbeat time-out; the retries met more faults, and 41 followers of two matches
never got their Live Activity. Here the timeout is 20 s (the SDK's default sends one every 16 s)
and the worker stops for 10 s, 12 s into the activity: heard only at its start, it timed out
(about 2 s late); heard every 2 s, it has about 8 s to spare.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from datetime import timedelta

from temporalio import workflow
from temporalio.client import Client
from temporalio.common import RetryPolicy
from temporalio.worker import UnsandboxedWorkflowRunner, Worker

HEARTBEAT_TIMEOUT = timedelta(seconds=20)
STOPPED_AFTER_S = 12.0
STOPPED_FOR_S = 10.0


@workflow.defn(sandboxed=False)
class BeatOnce:
    @workflow.run
    async def run(self) -> int:
        attempt: int = await workflow.execute_activity(
            "beat_for",
            STOPPED_AFTER_S + STOPPED_FOR_S + 2,
            start_to_close_timeout=timedelta(minutes=1),
            heartbeat_timeout=HEARTBEAT_TIMEOUT,
            retry_policy=RetryPolicy(maximum_attempts=1),
            result_type=int,
        )
        return attempt


async def test_a_worker_paused_for_less_than_the_heartbeat_timeout_keeps_its_activity(
    temporal_client: Client, task_queue: str
) -> None:
    address = temporal_client.service_client.config.target_host
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.foundation.heartbeat_worker",
        address,
        task_queue,
        stdout=asyncio.subprocess.PIPE,
    )
    try:
        async with Worker(
            temporal_client,
            task_queue=task_queue,
            workflows=[BeatOnce],
            workflow_runner=UnsandboxedWorkflowRunner(),
        ):
            run = await temporal_client.start_workflow(
                BeatOnce.run, id=f"beat-{task_queue}", task_queue=task_queue
            )
            assert process.stdout is not None
            async with asyncio.timeout(30):
                assert (await process.stdout.readline()).strip() == b"started"
            await asyncio.sleep(STOPPED_AFTER_S)
            process.send_signal(signal.SIGSTOP)
            await asyncio.sleep(STOPPED_FOR_S)
            process.send_signal(signal.SIGCONT)
            async with asyncio.timeout(30):
                assert await run.result() == 1, "the first attempt finished"
    finally:
        if process.returncode is None:
            process.kill()
        await process.wait()
        if process.stdout is not None:
            await process.stdout.read()
