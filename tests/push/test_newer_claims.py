"""`NewerClaims`: the deliveries' last look before sending, many askers to one question."""

from __future__ import annotations

import asyncio

import pytest

from activities.push.overtaken import NewerClaims


class Reads:
    """A stand-in for `PushStore.overtaken` (its SQL is run by the fan-out tests): records each
    question, answers from `newer` as it was when the question came."""

    def __init__(self, newer: set[int], delay: float = 0.0) -> None:
        self.newer = newer
        self.delay = delay
        self.questions: list[list[int]] = []

    async def __call__(self, live_activity_ids: list[int]) -> set[int]:
        self.questions.append(sorted(live_activity_ids))
        answer = self.newer & set(live_activity_ids)  # as of when the read began
        await asyncio.sleep(self.delay)
        return answer


async def test_deliveries_asking_together_share_one_question() -> None:
    reads = Reads(newer={2})
    claims = NewerClaims(reads, gather=0.01)
    answers = await asyncio.gather(*(claims.current(activity) for activity in (1, 2, 3, 1)))
    assert answers == [True, False, True, True]
    assert reads.questions == [[1, 2, 3]]


async def test_an_asker_during_a_question_gets_a_read_begun_after_it_asked() -> None:
    """A claim can commit while a question is on its way: a later asker must not get that read's answer."""
    reads = Reads(newer=set(), delay=0.05)
    claims = NewerClaims(reads, gather=0.0)
    first = asyncio.create_task(claims.current(1))
    await asyncio.sleep(0.02)  # the first question is being read
    reads.newer = {1}  # a newer push claims activity 1 meanwhile
    second = await claims.current(1)
    assert (await first, second) == (True, False)
    assert reads.questions == [[1], [1]]


async def test_a_failed_question_fails_its_askers_and_the_next_one_is_asked_again() -> None:
    calls = 0

    async def flaky(live_activity_ids: list[int]) -> set[int]:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise RuntimeError("broken read")
        return set()

    claims = NewerClaims(flaky, gather=0.0)
    with pytest.raises(RuntimeError, match="broken read"):
        await claims.current(7)
    assert await claims.current(7) is True
