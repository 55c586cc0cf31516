"""The API's half of the command road (design §4): from a checked request to the workflow's answer.

A key the `command` table already holds is answered from there at once (duplicate, or refused
`key_reused`): that is what makes a resend after a lost answer a duplicate even in a new workflow
run. Anything else goes to the match workflow's `submit` Update with update id = key, so a resend
while the first is still in flight attaches to it instead of running twice. A workflow that is not
running (a desk-only fixture before its first command, a match whose run has ended) is started by
update-with-start (`MatchRuns`, from the facts Postgres holds); only then is the fixture row read
(to start it, or to answer 404). If the answer takes longer than `COMMAND_ANSWER_TIMEOUT`, the desk
hears `try_again` while the update keeps going.
"""

from __future__ import annotations

import asyncio
import hashlib
import json

from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.client import WorkflowUpdateFailedError, WorkflowUpdateRPCTimeoutOrCancelledError
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode

from domain.commands import KEY_REUSED, CommandAnswer, CommandRequest, Outcome
from domain.failures import UNKNOWN_FIXTURE, UnknownFixture
from domain.match_run import SUBMIT
from domain.rules import COMMAND_SHAPE_ERROR
from scoreline.readmodel.commands import lookup
from scoreline.settings import Settings
from scoreline.temporal.match_runs import MatchRuns, match_workflow_id


class WorkflowRefused(Exception):
    """The workflow's validator refused the command (a shape the API let through)."""

    def __init__(self, message: str, path: str | None) -> None:
        super().__init__(message)
        self.message = message
        self.path = path


class NotAnswered(Exception):
    """No answer in time, or Temporal could not be reached: the desk should resend the same key."""


def payload_hash(fixture_id: int, code: str, input: object, saw: int) -> str:
    """What makes a resend the same command. `sent_at` is left out: a client may restamp a retry."""
    canonical = json.dumps(
        {"fixture_id": fixture_id, "code": code, "input": input, "saw": saw},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


async def stored_answer(
    engine: AsyncEngine, fixture_id: int, request: CommandRequest
) -> CommandAnswer | None:
    """The answer for a key the `command` table already holds; None for a new key."""
    stored = await lookup(engine, request.key)
    if stored is None:
        return None
    if stored.payload_hash == request.payload_hash and stored.fixture_id == fixture_id:
        return CommandAnswer(outcome=Outcome.DUPLICATE, answer=stored.answer)
    return CommandAnswer(
        outcome=Outcome.REFUSED,
        reason=KEY_REUSED,
    )


async def submit(
    runs: MatchRuns, settings: Settings, fixture_id: int, request: CommandRequest
) -> CommandAnswer:
    """The workflow's answer to `request`.

    Raises:
        UnknownFixture: the fixture does not exist (found out only when no workflow runs for it,
            so the usual command costs no fixture lookup), or a running workflow's book load or
            commit found no row for it.
        NotAnswered: no answer within `COMMAND_ANSWER_TIMEOUT`, or Temporal is unreachable.
        WorkflowRefused: the update validator refused the command.
        WorkflowUpdateFailedError: the update failed for any other reason (a bug, not the desk's
            doing: the API's catch-all answers 500 `internal_error`).
    """
    try:
        async with asyncio.timeout(settings.command_answer_timeout.total_seconds()):
            return await _send(runs, fixture_id, request)
    except (TimeoutError, WorkflowUpdateRPCTimeoutOrCancelledError) as error:
        raise NotAnswered("no answer in time") from error
    except WorkflowUpdateFailedError as error:
        cause = error.cause
        if isinstance(cause, ApplicationError) and cause.type == COMMAND_SHAPE_ERROR:
            details = cause.details[0] if cause.details else {}
            path = details.get("path") if isinstance(details, dict) else None
            raise WorkflowRefused(cause.message, path) from error
        if _names_unstored_fixture(cause):
            raise UnknownFixture(fixture_id) from error
        raise
    except RPCError as error:
        raise NotAnswered(f"Temporal did not take the command: {error.message}") from error


def _names_unstored_fixture(error: BaseException | None) -> bool:
    """Whether a failed update's cause chain (ActivityError → ApplicationError) says the fixture's
    row is missing: a workflow running for a fixture the database does not hold."""
    while error is not None:
        if isinstance(error, ApplicationError) and error.type == UNKNOWN_FIXTURE:
            return True
        error = error.__cause__
    return False


async def _send(runs: MatchRuns, fixture_id: int, request: CommandRequest) -> CommandAnswer:
    client = runs.client
    try:
        handle = client.get_workflow_handle(match_workflow_id(fixture_id))
        answer: CommandAnswer = await handle.execute_update(
            SUBMIT, request, id=request.key, result_type=CommandAnswer
        )
        return answer
    except RPCError as error:
        if error.status is not RPCStatusCode.NOT_FOUND:
            raise
    facts = await runs.facts(fixture_id)
    started: CommandAnswer = await client.execute_update_with_start_workflow(
        SUBMIT,
        request,
        id=request.key,
        start_workflow_operation=runs.start_operation(facts),
        result_type=CommandAnswer,
    )
    return started
