"""`LastLook`: the deliveries' last look before sending, many askers to one statement."""

from __future__ import annotations

import asyncio

import pytest

from activities.push.last_look import ClaimedHere, LastLook, Marks, Standing


class Statement:
    """A stand-in for `PushStore.mark_sending` (its SQL is run by the fan-out tests): records each
    question, marks what is not in `newer` as it was when the question came."""

    def __init__(self, newer: set[int], delay: float = 0.0, reachable: bool = True) -> None:
        self.newer = newer
        self.delay = delay
        self.reachable = reachable
        self.questions: list[list[int]] = []

    async def __call__(self, live_activity_ids: list[int]) -> Marks | None:
        self.questions.append(sorted(live_activity_ids))
        marked = set(live_activity_ids) - self.newer  # as of when the statement began
        await asyncio.sleep(self.delay)
        return Marks(marked) if self.reachable else None


async def never_unmarked(live_activity_ids: list[int]) -> None:
    raise AssertionError(f"unmarked {live_activity_ids}: no answer came back undelivered")


async def test_deliveries_looking_together_share_one_statement() -> None:
    statement = Statement(newer={2})
    last_look = LastLook(statement, never_unmarked, gather=0.01)
    looks = await asyncio.gather(*(last_look.look(activity) for activity in (1, 2, 3, 1)))
    assert looks == [Standing.GO, Standing.OVERTAKEN, Standing.GO, Standing.GO]
    assert statement.questions == [[1, 2, 3]]


async def test_a_look_during_a_statement_gets_one_begun_after_it() -> None:
    """A claim can commit while a statement is on its way: a later look must not get its answer."""
    statement = Statement(newer=set(), delay=0.05)
    last_look = LastLook(statement, never_unmarked, gather=0.0)
    first = asyncio.create_task(last_look.look(1))
    await asyncio.sleep(0.02)  # the first statement is running
    statement.newer = {1}  # a newer push claims activity 1 meanwhile
    second = await last_look.look(1)
    assert (await first, second) == (Standing.GO, Standing.OVERTAKEN)
    assert statement.questions == [[1], [1]]


async def test_a_token_switched_off_is_gone_before_overtaken() -> None:
    """A dead token is never sent to, whatever else the statement found for its activity."""

    async def found(live_activity_ids: list[int]) -> Marks | None:
        return Marks(marked={1}, gone={2})

    last_look = LastLook(found, never_unmarked, gather=0.0)
    looks = await asyncio.gather(*(last_look.look(activity) for activity in (1, 2, 3)))
    assert looks == [Standing.GO, Standing.GONE, Standing.OVERTAKEN]


async def test_postgres_out_of_reach_is_unknown_not_go() -> None:
    last_look = LastLook(Statement(newer=set(), reachable=False), never_unmarked, gather=0.0)
    assert await last_look.look(1) is Standing.UNKNOWN


async def test_a_failed_statement_fails_its_askers_and_the_next_one_is_asked_again() -> None:
    calls = 0

    async def flaky(live_activity_ids: list[int]) -> Marks | None:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise RuntimeError("broken statement")
        return Marks(set(live_activity_ids))

    last_look = LastLook(flaky, never_unmarked, gather=0.0)
    with pytest.raises(RuntimeError, match="broken statement"):
        await last_look.look(7)
    assert await last_look.look(7) is Standing.GO


async def test_unmarks_asked_together_share_one_statement() -> None:
    unmarked: list[list[int]] = []

    async def unmark(live_activity_ids: list[int]) -> None:
        unmarked.append(sorted(live_activity_ids))

    last_look = LastLook(Statement(newer=set()), unmark, gather=0.01)
    await asyncio.gather(*(last_look.unmark(activity) for activity in (4, 2, 4)))
    assert unmarked == [[2, 4]]


def test_claimed_here_keeps_the_newest_claim_and_forgets_the_least_recent() -> None:
    claimed_here = ClaimedHere(kept=2)
    claimed_here.claimed([1, 2], 100)
    claimed_here.claimed([1], 90)  # an older push claimed later: the newest stays
    assert (claimed_here.newer_than(1, 95), claimed_here.newer_than(1, 100)) == (True, False)
    claimed_here.claimed([3], 100)  # 2 is the least recently claimed
    assert not claimed_here.newer_than(2, 50), "forgotten: the look in Postgres still answers"
    assert claimed_here.newer_than(3, 99)
