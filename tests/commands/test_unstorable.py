"""Commands Postgres can never store are refused, not retried under the desk's lock (issue 33).

Before the fix a commit that Postgres refused (a NUL in a commentary, a `sent_at` offset beyond
Postgres's ±15:59) was retried as if the database were down: that desk command answered `try_again`
for good, and so did every later command on the fixture, queued behind it.
"""

from __future__ import annotations

import asyncio
import uuid

import asyncpg
import pytest
from temporalio.client import Client, WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError

from domain.commands import CommandAnswer
from domain.match_run import SUBMIT
from domain.rules import COMMAND_SHAPE_ERROR
from scoreline.db.urls import asyncpg_dsn
from scoreline.temporal.match_runs import match_workflow_id
from tests.commands.harness import Road

NO_WEDGE_S = 10
"""Longer than the road's answer timeout (3 s): a wedged desk would have answered `try_again` by now."""

REFUSE_POISON: dict[str, list[str]] = {
    # A NUL byte fails the commit with SQLSTATE 22P05 before the function runs; the validator now
    # keeps NULs away from the commit, so this trigger makes Postgres raise the same error for a
    # plain word instead.
    "data error": [
        """CREATE FUNCTION refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $fn$
        BEGIN
            IF NEW.body->>'text' = 'poison' THEN
                RAISE EXCEPTION 'unsupported Unicode escape sequence'
                    USING ERRCODE = 'untranslatable_character';
            END IF;
            RETURN NEW;
        END $fn$""",
        "CREATE TRIGGER refuse_poison BEFORE INSERT ON timeline_item "
        "FOR EACH ROW EXECUTE FUNCTION refuse_poison()",
    ],
    "constraint error": [
        "ALTER TABLE timeline_item ADD CONSTRAINT no_poison CHECK (body->>'text' IS DISTINCT FROM 'poison')"
    ],
}


async def _execute(road: Road, *statements: str) -> None:
    db = await asyncpg.connect(asyncpg_dsn(road.database_url))
    try:
        for statement in statements:
            await db.execute(statement)
    finally:
        await db.close()


@pytest.mark.parametrize("setup", REFUSE_POISON.values(), ids=REFUSE_POISON.keys())
async def test_a_command_postgres_refuses_to_store_is_refused_unstorable_and_the_next_is_accepted(
    road: Road, setup: list[str]
) -> None:
    """A commit failing with a data or constraint error was retried forever (the desk heard
    `try_again`, then so did every later command); now it is refused `unstorable`, the refusal is
    stored like any other (a resend is its duplicate), and the next command is accepted at once."""
    fixture_id = await road.fixture()
    token = await road.desk(fixture_id)
    await _execute(road, *setup)
    key = road.key()

    async with asyncio.timeout(NO_WEDGE_S):
        refused = await road.send(token, fixture_id, "match.commentary", {"text": "poison"}, key=key)
        following = await road.send(token, fixture_id, "football.period_start", {"period": "1H"})
        resend = await road.send(token, fixture_id, "match.commentary", {"text": "poison"}, key=key)

    assert refused.status_code == 200, refused.text
    body = refused.json()
    assert (body["outcome"], body["reason"]["code"]) == ("refused", "unstorable"), body
    assert body["reason"]["message"]
    assert following.json() == {"outcome": "accepted", "seq": 1}
    assert resend.json() == {"outcome": "duplicate", "answer": body}
    (stored,) = await road.rows("SELECT outcome, seq FROM command WHERE command_id = $1", key)
    assert (stored["outcome"], stored["seq"]) == ("refused", None)
    assert [row["seq"] for row in await road.log(fixture_id)] == [1], "only the period start is logged"


async def test_a_command_stamped_with_an_offset_postgres_cannot_parse_is_accepted(road: Road) -> None:
    """A `sent_at` of `+20:00` (valid ISO 8601, beyond Postgres's ±15:59) failed the commit for good
    and wedged the desk; the instant is now stored in UTC, so the command goes through."""
    fixture_id = await road.fixture()
    token = await road.desk(fixture_id)
    body = {
        "key": road.key(),
        "code": "football.period_start",
        "input": {"period": "1H"},
        "saw": 0,
        "sent_at": "2026-12-02T09:00:00+20:00",
    }

    async with asyncio.timeout(NO_WEDGE_S):
        answer = await road.post(token, fixture_id, body)

    assert answer.json() == {"outcome": "accepted", "seq": 1}
    (stored,) = await road.rows("SELECT sent_at FROM command WHERE command_id = $1", body["key"])
    assert stored["sent_at"].isoformat() == "2026-12-01T13:00:00+00:00"


UNSTORABLE_TEXT = {
    "NUL in the commentary": ("match.commentary", {"text": "a\u0000b"}, "desk:1"),
    "NUL in the sender": ("match.commentary", {"text": "fine"}, "desk:\u0000"),
}


@pytest.mark.parametrize("code, input, sender", UNSTORABLE_TEXT.values(), ids=UNSTORABLE_TEXT.keys())
async def test_text_postgres_cannot_store_sent_straight_to_the_workflow_is_refused_by_its_validator(
    road: Road, temporal_client: Client, code: str, input: dict[str, str], sender: str
) -> None:
    """A command sent through Temporal itself (CLI, UI), past the API's checks, with text Postgres
    cannot store reached the commit and was retried forever; now the `submit` validator refuses it
    before history, and the fixture's next command is accepted at once."""
    fixture_id = await road.fixture()
    token = await road.desk(fixture_id)
    started = await road.send(token, fixture_id, "football.period_start", {"period": "1H"})
    assert started.json() == {"outcome": "accepted", "seq": 1}
    key = f"direct-{uuid.uuid4().hex}"
    # As the Temporal CLI or UI would send it: plain JSON, no CommandRequest on the sender's side.
    request = {"key": key, "code": code, "input": input, "saw": 1, "sender": sender, "payload_hash": "x"}
    handle = temporal_client.get_workflow_handle(match_workflow_id(fixture_id))

    async with asyncio.timeout(NO_WEDGE_S):
        with pytest.raises(WorkflowUpdateFailedError) as refused:
            await handle.execute_update(SUBMIT, request, id=key, result_type=CommandAnswer)
        following = await road.send(token, fixture_id, "match.commentary", {"text": "kick-off"}, saw=1)

    assert isinstance(refused.value.cause, ApplicationError)
    if sender == "desk:1":
        assert refused.value.cause.type == COMMAND_SHAPE_ERROR
        assert refused.value.cause.details[0] == {"path": "input.text"}
    assert following.json() == {"outcome": "accepted", "seq": 2}
    assert await road.rows("SELECT 1 FROM command WHERE command_id = $1", key) == []
