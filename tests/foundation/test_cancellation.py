"""A stopped service stops: no shipped code may lose a cancellation that meets an answer.

On Python 3.11, `asyncio.wait_for` returns the inner result when the outer task is cancelled in the
same loop iteration as that result arrives, and the cancellation is gone (fixed in 3.12, which
rebuilt `wait_for` on `asyncio.timeout`). CI hung on it: `FeedBuilder.stop()` cancelled the
builder just as its lock connection answered a ping, the builder went on looping, and
`tests/feeds/test_builder.py::test_no_change_is_held_more_than_three_seconds` waited for it until
pytest-timeout ended the run. `asyncio.timeout` counts cancellations and keeps the outer one.
"""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path
from typing import Any, cast

import asyncpg
import pytest

from scoreline.db.listen import Listening

pytestmark = pytest.mark.unit

ROOT = Path(__file__).parents[2]
SHIPPED = ("scoreline", "api", "activities", "workflows", "domain", "bench")


def _wait_for_calls(path: Path) -> list[int]:
    tree = ast.parse(path.read_text())
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "wait_for"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "asyncio"
    ]


def test_shipped_code_never_calls_asyncio_wait_for() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line}"
        for package in SHIPPED
        for path in sorted((ROOT / package).rglob("*.py"))
        for line in _wait_for_calls(path)
    ]
    assert found == [], "use `async with asyncio.timeout(...)` instead: " + ", ".join(found)


class _AnswerOnCue:
    """A connection whose ping answer the test releases: the only way to meet the race on cue."""

    def __init__(self) -> None:
        self.answer: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    def is_closed(self) -> bool:
        return False

    async def fetchval(self, _query: str) -> int:
        return await self.answer


async def test_a_cancel_that_meets_the_ping_answer_ends_the_ping() -> None:
    connection = _AnswerOnCue()
    listening = Listening(cast(asyncpg.Connection, cast(Any, connection)), asyncio.Event())
    ping = asyncio.create_task(listening.ping())
    await asyncio.sleep(0)  # the ping now waits for its answer
    connection.answer.set_result(1)
    ping.cancel()  # in the same loop iteration as the answer
    with pytest.raises(asyncio.CancelledError):
        await ping
