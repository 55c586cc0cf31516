"""Desk commands over HTTP through the match workflow into Postgres: the answers design §4 promises."""

from __future__ import annotations

import json

import redis.asyncio as aioredis

from domain.rules import RULE_STATE
from domain.rules.football import FootballState
from tests.commands.harness import Road
from tests.support.waiting import eventually

GOAL = {"side": "home", "minute": 12, "player_id": 109, "kind": "open_play"}


async def _kick_off(road: Road, token: str, fixture_id: int) -> int:
    response = await road.send(token, fixture_id, "football.period_start", {"period": "1H"})
    assert response.status_code == 200, response.text
    seq: int = response.json()["seq"]
    return seq


async def test_a_goal_is_accepted_after_its_commit_and_moves_every_copy(road: Road) -> None:
    fixture_id = await road.fixture()
    token = await road.desk(fixture_id)
    kickoff_seq = await _kick_off(road, token, fixture_id)

    response = await road.send(token, fixture_id, "football.goal", GOAL, saw=kickoff_seq)

    assert response.status_code == 200
    assert response.json() == {"outcome": "accepted", "seq": kickoff_seq + 1}
    log = await road.log(fixture_id)
    assert [(row["seq"], row["kind"], row["origin"]) for row in log] == [
        (1, "command", "desk"),
        (2, "command", "desk"),
    ]
    assert json.loads(log[1]["body"])["code"] == "football.goal"
    (board,) = await road.rows("SELECT * FROM scoreboard WHERE fixture_id = $1", fixture_id)
    assert (board["version"], board["state"], board["home_score"], board["away_score"]) == (
        2,
        "live_first_half",
        1,
        0,
    )
    outbox = await road.rows(
        "SELECT seq, kind FROM domain_event WHERE fixture_id = $1 ORDER BY id", fixture_id
    )
    assert [(row["seq"], row["kind"]) for row in outbox] == [(1, "match.changed"), (2, "match.changed")]
    fan = await road.http.get(f"/v1/matches/{fixture_id}")
    assert fan.json()["score"] == {"home": 1, "away": 0}
    assert fan.json()["state"] == "live_first_half"


async def test_two_desks_with_the_same_saw_one_accepted_the_other_conflict_with_the_accepted_entry(
    road: Road,
) -> None:
    fixture_id = await road.fixture()
    first, second = await road.desk(fixture_id), await road.desk(fixture_id)
    saw = await _kick_off(road, first, fixture_id)

    accepted = await road.send(first, fixture_id, "football.goal", GOAL, saw=saw)
    away_goal = {"side": "away", "minute": 13, "player_id": 209, "kind": "open_play"}
    conflict = await road.send(second, fixture_id, "football.goal", away_goal, saw=saw)

    assert accepted.json() == {"outcome": "accepted", "seq": saw + 1}
    body = conflict.json()
    assert conflict.status_code == 200
    assert body["outcome"] == "conflict"
    assert [entry["seq"] for entry in body["changed"]] == [saw + 1]
    assert body["changed"][0]["body"]["code"] == "football.goal"
    assert body["changed"][0]["body"]["side"] == "home"
    assert len(await road.log(fixture_id)) == saw + 1
    # A pure addition skips the version check; a desk that saw the goal is not in conflict.
    note = await road.send(second, fixture_id, "match.commentary", {"text": "what a strike"}, saw=saw)
    assert note.json()["outcome"] == "accepted"
    equaliser = await road.send(second, fixture_id, "football.goal", away_goal, saw=saw + 1)
    assert equaliser.json()["outcome"] == "accepted"


async def test_a_resend_is_a_duplicate_carrying_the_byte_identical_first_answer(road: Road) -> None:
    fixture_id = await road.fixture()
    token = await road.desk(fixture_id)
    saw = await _kick_off(road, token, fixture_id)
    key = road.key()

    first = await road.send(token, fixture_id, "football.goal", GOAL, saw=saw, key=key)
    again = await road.send(token, fixture_id, "football.goal", GOAL, saw=saw, key=key)

    assert first.json()["outcome"] == "accepted"
    assert again.status_code == 200
    assert again.json()["outcome"] == "duplicate"
    assert json.dumps(again.json()["answer"], separators=(",", ":")).encode() == first.content
    assert len(await road.log(fixture_id)) == 2


async def test_the_same_key_with_another_body_is_refused_key_reused_and_writes_nothing(road: Road) -> None:
    fixture_id = await road.fixture()
    token = await road.desk(fixture_id)
    saw = await _kick_off(road, token, fixture_id)
    key = road.key()
    await road.send(token, fixture_id, "football.goal", GOAL, saw=saw, key=key)
    before = await road.log(fixture_id)

    reused = await road.send(token, fixture_id, "football.goal", {**GOAL, "minute": 14}, saw=saw, key=key)

    assert reused.status_code == 200
    assert reused.json() == {
        "outcome": "refused",
        "reason": {"code": "key_reused", "message": "this key was already used for another command"},
    }
    assert await road.log(fixture_id) == before
    assert len(await road.rows("SELECT 1 FROM command WHERE fixture_id = $1", fixture_id)) == 2


async def test_a_rule_refusal_is_answered_and_stored_without_a_log_entry(road: Road) -> None:
    fixture_id = await road.fixture()
    token = await road.desk(fixture_id)
    key = road.key()

    early = await road.send(token, fixture_id, "football.goal", GOAL, key=key)
    await _kick_off(road, token, fixture_id)
    stranger = await road.send(
        token,
        fixture_id,
        "football.card",
        {"side": "home", "minute": 5, "player_id": 999, "color": "yellow"},
        saw=1,
    )

    assert early.json()["outcome"] == "refused"
    assert early.json()["reason"]["code"] == "not_started"
    assert stranger.json()["reason"]["code"] == "not_in_squad"
    (row,) = await road.rows("SELECT outcome, seq, answer FROM command WHERE command_id = $1", key)
    assert (row["outcome"], row["seq"]) == ("refused", None)
    assert json.loads(row["answer"]) == early.json()
    assert [row["seq"] for row in await road.log(fixture_id)] == [1]


async def test_a_provider_owned_match_takes_commentary_and_an_operator_takeover(road: Road) -> None:
    fixture_id = await road.fixture(mode="provider")
    token = await road.desk(fixture_id)

    owned = await road.send(token, fixture_id, "football.period_start", {"period": "1H"})
    note = await road.send(token, fixture_id, "match.commentary", {"text": "teams are out"})
    desk_switch = await road.send(token, fixture_id, "match.set_mode", {"mode": "desk"}, saw=1)
    takeover = await road.send(road.operator_token, fixture_id, "match.set_mode", {"mode": "desk"}, saw=1)
    kickoff = await road.send(token, fixture_id, "football.period_start", {"period": "1H"}, saw=2)

    assert owned.json()["reason"]["code"] == "provider_owned"
    assert note.json() == {"outcome": "accepted", "seq": 1}
    assert desk_switch.json()["reason"]["code"] == "operators_only"
    assert takeover.json() == {"outcome": "accepted", "seq": 2}
    assert kickoff.json() == {"outcome": "accepted", "seq": 3}
    log = await road.log(fixture_id)
    assert [json.loads(row["body"])["code"] for row in log] == [
        "match.commentary",
        "match.set_mode",
        "football.period_start",
    ]
    assert json.loads(log[1]["body"])["sender"].startswith("operator:")
    (mode,) = await road.rows("SELECT scoring_mode FROM fixture WHERE id = $1", fixture_id)
    assert mode["scoring_mode"] == "desk"


async def test_a_desk_only_fixture_cannot_be_handed_to_a_provider(road: Road) -> None:
    fixture_id = await road.fixture()

    response = await road.send(road.operator_token, fixture_id, "match.set_mode", {"mode": "provider"})

    assert response.json()["reason"]["code"] == "no_provider"


async def test_undo_restores_the_score_and_var_overturns_a_goal(road: Road) -> None:
    fixture_id = await road.fixture()
    token = await road.desk(fixture_id)
    await _kick_off(road, token, fixture_id)
    goal = await road.send(token, fixture_id, "football.goal", GOAL, saw=1)
    second = await road.send(token, fixture_id, "football.goal", {**GOAL, "minute": 20}, saw=2)
    undone = await road.send(token, fixture_id, "match.undo", {"target_seq": second.json()["seq"]}, saw=3)
    overturned = await road.send(
        token, fixture_id, "match.var", {"target_seq": goal.json()["seq"], "decision": "overturned"}, saw=4
    )

    assert [r.json()["outcome"] for r in (goal, second, undone, overturned)] == ["accepted"] * 4
    (board,) = await road.rows("SELECT home_score, version FROM scoreboard WHERE fixture_id = $1", fixture_id)
    assert (board["home_score"], board["version"]) == (0, 5)


async def test_a_fan_never_gets_a_cached_copy_older_than_a_version_already_committed(
    road: Road, redis_url: str
) -> None:
    fixture_id = await road.fixture()
    token = await road.desk(fixture_id)
    await _kick_off(road, token, fixture_id)
    stale = (await road.http.get(f"/v1/matches/{fixture_id}")).json()
    assert stale["version"] == 1
    await road.send(token, fixture_id, "football.goal", GOAL, saw=1)
    redis = aioredis.Redis.from_url(redis_url)
    try:
        # A cache writer that lost the race: Redis still holds version 1 after version 2 committed.
        await eventually(lambda: _cached_version(redis, fixture_id, 2))
        await redis.hset(f"match:{fixture_id}", mapping={"body": json.dumps(stale), "version": 1})

        fresh = await eventually(lambda: _served_version(road, fixture_id, 2))
    finally:
        await redis.aclose()

    assert fresh["score"] == {"home": 1, "away": 0}


async def _cached_version(redis: aioredis.Redis, fixture_id: int, version: int) -> bool:
    cached = await redis.hget(f"match:{fixture_id}", "version")
    return cached is not None and int(cached) >= version


async def _served_version(road: Road, fixture_id: int, version: int) -> dict[str, object] | None:
    body: dict[str, object] = (await road.http.get(f"/v1/matches/{fixture_id}")).json()
    return body if body["version"] == version else None


async def test_the_rule_state_is_stored_as_a_json_object_a_new_run_can_open(road: Road) -> None:
    """The commit splices the rule state in as JSON text (issue 15): it must land as an object,
    not as a string, and open again as the same state for the next run."""
    fixture_id = await road.fixture()
    token = await road.desk(fixture_id)
    await _kick_off(road, token, fixture_id)
    await road.send(token, fixture_id, "football.goal", GOAL, saw=1)
    (row,) = await road.rows(
        "SELECT jsonb_typeof(rule_state) AS kind, rule_state::text AS state FROM scoreboard WHERE fixture_id = $1",
        fixture_id,
    )
    assert row["kind"] == "object"
    state = RULE_STATE.validate_json(row["state"])
    assert isinstance(state, FootballState)
    assert [goal.side for goal in state.game.goals] == [GOAL["side"]]
