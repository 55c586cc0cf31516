"""The skeleton every long-running loop of a process shares: start, stop, and start over after a failure.

The outbox listener, the feed builder, the partner directory and the live relay each run one or two
loops for the life of their process. `BackgroundService` starts them as tasks and cancels them
together; `run_forever` runs one connection's life again and again, logging why it ended and
waiting a moment, so a database or Redis that goes away is retried instead of ending the service.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from scoreline.logging import get_logger

log = get_logger(__name__)

Loop = Callable[[], Coroutine[Any, Any, None]]


class BackgroundService:
    """Loops started by `start()` and cancelled, and awaited, by `stop()`."""

    name = "service"

    def __init__(self) -> None:
        self._tasks: list[asyncio.Task[None]] = []

    def loops(self) -> list[Loop]:
        """The loops to run; each runs until cancelled."""
        raise NotImplementedError

    @property
    def running(self) -> bool:
        return bool(self._tasks)

    def start(self) -> None:
        if self._tasks:
            raise RuntimeError(f"the {self.name} is already running")
        self._tasks = [
            asyncio.create_task(loop(), name=f"{self.name}-{index}")
            for index, loop in enumerate(self.loops())
        ]

    async def stop(self) -> None:
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task


async def run_forever(
    life: Callable[[], Awaitable[None]],
    *,
    expected: tuple[type[BaseException], ...],
    event: str,
    retry_after: float | Callable[[], float],
) -> None:
    """Run `life` again and again: an `expected` failure (the database went away) is logged as
    `event` with a warning, anything else with its traceback; then wait `retry_after` seconds."""
    while True:
        try:
            await life()
        except expected as error:
            delay = retry_after() if callable(retry_after) else retry_after
            log.warning(event, error=f"{type(error).__name__}: {error}", retry_in=delay)
        except Exception:  # a service must outlive any one failure
            delay = retry_after() if callable(retry_after) else retry_after
            log.exception(event, retry_in=delay)
        else:
            delay = retry_after() if callable(retry_after) else retry_after
        await asyncio.sleep(delay)
