"""A commit whose workflow task was lost still counts in every later decision.

A worker paused or killed between a commit and the end of its workflow task leaves the command in
Postgres but not in the workflow's history; the Update then runs again elsewhere, or the next
command finds the log past the workflow's book. Here that lost task is reproduced by running its
own code, the commit local activity's store, on a book opened from Postgres, outside the workflow.
"""

from __future__ import annotations

import uuid

from activities.commands.store import CommandStore
from domain.commands import CommandRequest, CommitStatus
from domain.desk import decide, desk_progress, open_book
from tests.commands.harness import Road
from tests.commands.test_cricket_board import Scorer


async def _commit_behind_the_workflow(road: Road, fixture_id: int, saw: int) -> int:
    """One ball committed exactly as the workflow's commit would, the workflow none the wiser."""
    store = CommandStore(road.engine)
    book = open_book(await store.context(fixture_id))
    progress = desk_progress(book)
    assert progress is not None
    request = CommandRequest(
        key=f"lost-{uuid.uuid4().hex[:12]}",
        code="cricket.ball",
        input={"runs": 1},
        saw=saw,
        sender="desk:lost-task",
        payload_hash=uuid.uuid4().hex,
    )
    decision = decide(book, fixture_id, request, progress, has_provider=False)
    result = await store.commit(decision.commit, trace_id=None)
    assert result.status is CommitStatus.COMMITTED, result
    assert decision.commit.seq is not None
    return decision.commit.seq


async def test_an_over_whose_last_ball_was_committed_by_a_lost_workflow_task_can_be_ended(
    road: Road,
) -> None:
    """The workflow skipped over a ball it had not decided, so the desk's over_end was refused."""
    fixture_id = await road.fixture(sport="cricket")
    desk = Scorer(road, await road.desk(fixture_id), fixture_id)
    await desk.do(
        "cricket.innings_start",
        {"batting": "home", "striker_id": 101, "non_striker_id": 102, "bowler_id": 211},
    )
    for _ in range(5):
        await desk.do("cricket.ball", {"runs": 0})

    desk.seq = await _commit_behind_the_workflow(road, fixture_id, saw=desk.seq)

    await desk.do("cricket.over_end")
    await desk.do("cricket.bowler_change", {"bowler_id": 210})
    await desk.do("cricket.ball", {"runs": 4, "boundary": "four"})
    columns, board = await desk.stored()
    (first,) = board.innings
    assert (first.runs, first.overs) == (5, "1.1")
    assert columns[3] == desk.seq
