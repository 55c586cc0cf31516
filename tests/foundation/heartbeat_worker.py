"""A worker in a process of its own, heartbeating as the main queue's do, for a test to SIGSTOP.

Run as `python -m tests.foundation.heartbeat_worker ADDRESS TASK_QUEUE`; it prints `started` when
its activity begins, so the test knows when to stop it.
"""

from __future__ import annotations

import asyncio
import sys
import time

from temporalio import activity
from temporalio.client import Client

from workers.main import MAIN_QUEUE_HEARTBEATS, new_worker

BEAT_EVERY_S = 0.2


@activity.defn
async def beat_for(seconds: float) -> int:
    """Heartbeat for `seconds` (the clock runs on while the process is stopped); the attempt number."""
    print("started", flush=True)
    ends = time.monotonic() + seconds
    while time.monotonic() < ends:
        activity.heartbeat()
        await asyncio.sleep(BEAT_EVERY_S)
    return activity.info().attempt


async def main(address: str, task_queue: str) -> None:
    client = await Client.connect(address)
    async with new_worker(client, task_queue=task_queue, activities=[beat_for], **MAIN_QUEUE_HEARTBEATS):
        await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
