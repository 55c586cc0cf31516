"""The devices' check (`scoreline.soak.device_check`), on journal records built by hand.

Each rule has a test that breaks it and one that shows what it must not flag: a check that
cannot fail proves nothing, and one that flags what the design allows would fail every soak.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
from collections.abc import Sequence
from pathlib import Path

import httpx
import pytest

from scoreline.soak import devices
from scoreline.soak.device_check import (
    AFTER_DEAD,
    ALERT_MISSING,
    ALERT_TWICE,
    ANSWER_WRITE_S,
    END_MISSING,
    END_TWICE,
    GRACE_S,
    IN_FLIGHT_S,
    OUT_OF_ORDER,
    START_MISSING,
    START_TWICE,
    START_UNFOLLOWED,
    ActivityReport,
    DeviceLedger,
    MatchFacts,
    PhoneRecord,
    Push,
    Unregister,
    parse_line,
)
from scoreline.soak.devices import DevicePart, _JournalTail
from scoreline.soak.model import SoakFixtures, SoakTargets
from simulators.apns.journal import PushRecord
from simulators.apns.journal_file import JournalFile

pytestmark = pytest.mark.unit

T0 = 1_800_000_000.0
FIXTURE = 101
STARTER = "a1" * 80
ACTIVITY = "b2" * 80
OTHER_STARTER = "c3" * 80
OTHER_ACTIVITY = "d4" * 80
HORIZON = T0 + 10_000
FACTS = MatchFacts(kicked_off=frozenset({FIXTURE}), over=frozenset({FIXTURE}))


def phone(
    *,
    name: str = "phone-1",
    starter: str = STARTER,
    activity: str | None = ACTIVITY,
    followed_at: float = T0,
    reported_at: float = T0 + 2,
    deleted_at: float | None = None,
) -> PhoneRecord:
    reports = () if activity is None else (ActivityReport(activity, FIXTURE, 1, reported_at),)
    return PhoneRecord(
        device=name,
        push_to_start_token=starter,
        follows={FIXTURE: followed_at},
        asked=frozenset({FIXTURE}),
        activities=reports,
        deleted_at=deleted_at,
    )


def start(
    seq: int,
    at: float,
    *,
    token: str = STARTER,
    version: int = 1,
    fixture: int = FIXTURE,
    generation: int = 1,
) -> Push:
    return Push(
        seq,
        at,
        token,
        200,
        event="start",
        timestamp=at,
        version=version,
        alert=True,
        fixture_id=fixture,
        generation=generation,
    )


def update(
    seq: int,
    at: float,
    version: int,
    *,
    token: str = ACTIVITY,
    alert: bool = False,
    timestamp: float | None = None,
    status: int = 200,
    reason: str | None = None,
) -> Push:
    stamp = at if timestamp is None else timestamp
    return Push(seq, at, token, status, reason, event="update", timestamp=stamp, version=version, alert=alert)


def end(seq: int, at: float, version: int, *, token: str = ACTIVITY) -> Push:
    return Push(seq, at, token, 200, event="end", timestamp=at, version=version, alert=True)


def match(token: str = ACTIVITY, starter: str = STARTER) -> list[Push]:
    """A whole match on one activity: start, a routine update, a goal, another update, the end."""
    return [
        start(1, T0 + 1, token=starter),
        update(2, T0 + 10, 2, token=token),
        update(3, T0 + 20, 3, token=token, alert=True),
        update(4, T0 + 30, 4, token=token),
        end(5, T0 + 100, 5, token=token),
    ]


def judge(
    phones: list[PhoneRecord],
    records: Sequence[Push | Unregister],
    facts: MatchFacts = FACTS,
    horizon: float = HORIZON,
) -> list[str]:
    ledger = DeviceLedger(phones)
    for record in records:
        ledger.add(record)
    return [violation.detail for violation in ledger.violations(facts, horizon)]


def brief(details: list[str]) -> list[str]:
    """Violations without their particulars (what follows the first ": ")."""
    return [detail.split(": ", 1)[0] for detail in details]


def without(records: list[Push], seq: int) -> list[Push | Unregister]:
    return [record for record in records if record.seq != seq]


def test_a_whole_match_passes_and_is_counted() -> None:
    ledger = DeviceLedger([phone()])
    for record in match():
        ledger.add(record)

    assert ledger.violations(FACTS, HORIZON) == []
    assert ledger.figures() == {
        "pushes": 5,
        "starts": 1,
        "updates": 3,
        "ends": 1,
        "unregistered": 0,
        "alerts_in_doubt_at_kill": 0,
        "deaths_lost_at_kill": 0,
    }


def test_a_start_that_never_came_is_a_violation() -> None:
    assert brief(judge([phone(activity=None)], [])) == [START_MISSING]


def test_a_missing_start_says_when_it_was_owed_and_how_postgres_shows_it() -> None:
    """CI's 10-minute soak of 2026-12-06 (seed 18) failed on nine phones of one desk match whose
    start never came, and its log kept only the violations: nothing told when each was owed,
    whether the follow, the activity row or the start's claim existed. Each violation now says."""
    late = phone(activity=None, followed_at=T0 + 50)
    other = phone(name="phone-2", starter=OTHER_STARTER, activity=OTHER_ACTIVITY)
    records = [start(1, T0 + 1, token=OTHER_STARTER)]
    playing = MatchFacts(kicked_off=frozenset({FIXTURE}))
    words = "follow stored 08:00:50.120; no activity"
    read = dataclasses.replace(playing, starts={("phone-1", FIXTURE): words})

    assert judge([late, other], records, playing) == [
        f"{START_MISSING}: owed at 08:00:50.000, follow confirmed at 08:00:50.000"
    ]
    assert judge([late, other], records, read) == [
        f"{START_MISSING}: owed at 08:00:50.000, follow confirmed at 08:00:50.000 (postgres: {words})"
    ]
    assert judge([phone(activity=None)], [], dataclasses.replace(FACTS, starts={})) == [
        f"{START_MISSING}: owed at 08:00:00.000, follow confirmed at 08:00:00.000 (postgres: no follow)"
    ]


def test_a_start_is_not_judged_too_early_nor_once_the_match_was_closing() -> None:
    """Within `GRACE_S` of the horizon, or for a follow that met the end going out, nothing is owed."""
    late_follow = phone(activity=None, followed_at=T0 + 100 - GRACE_S / 2)
    ending = [end(9, T0 + 100, 5, token=OTHER_ACTIVITY)]
    other = phone(name="phone-2", starter=OTHER_STARTER, activity=OTHER_ACTIVITY)

    assert judge([phone(activity=None)], [], horizon=T0 + GRACE_S / 2) == []
    assert judge([late_follow, other], [start(8, T0 + 1, token=OTHER_STARTER), *ending]) == []


def test_no_start_is_owed_to_a_dead_push_to_start_token_or_a_match_not_played() -> None:
    dead = Push(1, T0 + 1, STARTER, 410, "Unregistered", event="start", fixture_id=FIXTURE)

    assert judge([phone(activity=None)], [dead]) == []
    assert judge([phone(activity=None)], [], facts=MatchFacts()) == []


def test_a_follow_after_the_day_ended_is_owed_the_next_days_start() -> None:
    """A Test followed overnight: no start while the day's generation is over, the next one owed."""
    other = phone(name="phone-2", starter=OTHER_STARTER, activity=OTHER_ACTIVITY)
    overnight = phone(activity=None, followed_at=T0 + 150)
    day_one = [start(1, T0 + 1, token=OTHER_STARTER), end(2, T0 + 100, 5, token=OTHER_ACTIVITY)]
    day_two = start(3, T0 + 300, token=OTHER_STARTER, generation=2)
    playing = MatchFacts(kicked_off=frozenset({FIXTURE}))

    assert brief(judge([overnight, other], [*day_one, day_two], playing)) == [START_MISSING]
    assert judge([overnight, other], [*day_one, day_two, start(4, T0 + 300, generation=2)], playing) == []
    assert judge([overnight, other], day_one, playing) == []


def test_a_phone_that_had_the_last_generation_is_owed_the_next() -> None:
    renewed = [*match(), start(6, T0 + 200, token=OTHER_STARTER, generation=2)]
    other = phone(name="phone-2", starter=OTHER_STARTER, activity=None)

    assert brief(judge([phone(), other], renewed)) == [START_MISSING]
    assert judge([phone(), other], [*renewed, start(7, T0 + 200, generation=2)]) == []


def test_a_second_start_for_the_same_match_is_a_violation() -> None:
    records: list[Push | Unregister] = [*match(), start(6, T0 + 2)]

    (detail,) = judge([phone()], records)
    assert detail.startswith(f"{START_TWICE} 2 times at ") and "token reported at " in detail


def test_a_start_the_phone_would_drop_does_not_count() -> None:
    dropped = Push(1, T0 + 1, STARTER, 200, dropped="MissingAlert", event="start", fixture_id=FIXTURE)

    assert brief(judge([phone(activity=None)], [dropped])) == [START_MISSING]


def test_a_start_for_a_match_never_followed_is_a_violation() -> None:
    records: list[Push | Unregister] = [*match(), start(6, T0 + 3, fixture=FIXTURE + 1)]

    assert START_UNFOLLOWED in judge([phone()], records)


def test_a_key_moment_twice_is_a_violation() -> None:
    records: list[Push | Unregister] = [*match()[:3], update(6, T0 + 21, 3, alert=True), *match()[3:]]

    assert judge([phone()], records) == [f"{ALERT_TWICE} 2 times: version 3"]


def test_a_key_moment_skipped_after_the_token_got_pushes_is_a_violation() -> None:
    """The goal (version 3) went to another activity of the match; ours had version 2 already."""
    other = phone(name="phone-2", starter=OTHER_STARTER, activity=OTHER_ACTIVITY)
    records = [*without(match(), 3), *match(OTHER_ACTIVITY, OTHER_STARTER)]

    assert judge([phone(), other], records) == [f"{ALERT_MISSING}: version 3"]


def test_a_key_moment_only_postgres_knows_is_owed_too() -> None:
    """Scoreline alerted version 3 (its gate says so) but it reached nobody."""
    facts = MatchFacts(FACTS.kicked_off, FACTS.over, {(FIXTURE, 1): {3: T0 + 20}})

    assert judge([phone()], without(match(), 3), facts) == [f"{ALERT_MISSING}: version 3"]


def test_a_missing_key_moment_names_how_its_claim_stands() -> None:
    """CI's soak of 2026-12-05 (seed 18) failed on 77 phones never alerted one red card, and its
    log kept only the violations: nothing told whether the claims were in doubt, released or never
    made. Each violation now says it; an activity with no claim at all says "none"."""
    claims = {(ACTIVITY, 3): "in_doubt by run/7#2 marked 12:26:20.312", (OTHER_ACTIVITY, 9): "sent"}
    alerted = MatchFacts(FACTS.kicked_off, FACTS.over, {(FIXTURE, 1): {3: T0 + 20}})
    facts = dataclasses.replace(alerted, claims=claims)
    no_claims = dataclasses.replace(alerted, claims={})

    assert judge([phone()], without(match(), 3), facts) == [
        f"{ALERT_MISSING}: version 3 (claim: in_doubt by run/7#2 marked 12:26:20.312)"
    ]
    assert judge([phone()], without(match(), 3), no_claims) == [f"{ALERT_MISSING}: version 3 (claim: none)"]


def test_claim_words_read_an_effect_log_outcome() -> None:
    """The words a violation names a claim with, from the outcome Postgres holds."""
    doubt = '{"state": "in_doubt", "claim": {"state": "claimed", "by": "r/a#1", "sending": true, "sending_at": 0.25}}'

    assert devices._claim_words(doubt) == "in_doubt by r/a#1 marked 00:00:00.250"
    assert devices._claim_words('{"state": "claimed", "by": "r/a#2"}') == "claimed by r/a#2"
    assert devices._claim_words('{"state": "stale"}') == "stale"


GOAL_IN_DOUBT = MatchFacts(
    FACTS.kicked_off,
    FACTS.over,
    {(FIXTURE, 1): {3: T0 + 20}},
    in_doubt={(ACTIVITY, 3): T0 + 20.5},
)
"""The goal's claim on the activity was marked as being sent at T0 + 20.5, then doubted."""


def test_an_alert_in_flight_when_its_worker_was_killed_is_excused_and_counted() -> None:
    """The soak of 2026-12-03 (seed 17): a worker was SIGKILLed under a second after marking a
    goal's 155 claims as being sent, before its loop had written their requests. At most once:
    nothing can tell whether they reached APNs, so they are not sent again."""
    killed = dataclasses.replace(GOAL_IN_DOUBT, worker_kills=(T0 + 20.5 + IN_FLIGHT_S,))
    ledger = DeviceLedger([phone()])
    for record in without(match(), 3):
        ledger.add(record)

    assert ledger.violations(killed, HORIZON) == []
    assert ledger.figures()["alerts_in_doubt_at_kill"] == 1


def test_an_alert_in_doubt_is_owed_unless_a_kill_came_while_it_was_in_flight() -> None:
    """A kill before the mark or long after it, or an answer APNs gave (the claim outlived its
    request: the soak's seed 16 held 74 goal alerts marked through a 429 backoff), is a loss."""
    missing = [f"{ALERT_MISSING}: version 3"]
    too_late = dataclasses.replace(GOAL_IN_DOUBT, worker_kills=(T0 + 20.5 + IN_FLIGHT_S + 0.1,))
    too_early = dataclasses.replace(GOAL_IN_DOUBT, worker_kills=(T0 + 20.4,))
    in_flight = dataclasses.replace(GOAL_IN_DOUBT, worker_kills=(T0 + 20.6 + ANSWER_WRITE_S + 0.1,))
    throttled = [*without(match(), 3), update(3, T0 + 20.6, 3, alert=True, status=429)]

    assert judge([phone()], without(match(), 3), GOAL_IN_DOUBT) == missing
    assert judge([phone()], without(match(), 3), too_late) == missing
    assert judge([phone()], without(match(), 3), too_early) == missing
    assert judge([phone()], throttled, in_flight) == missing


def test_an_alert_whose_worker_was_killed_right_after_apns_answered_is_excused() -> None:
    """The soak of 2026-12-03 (seed 17, second run): a goal alert met a 500 burst, and its worker
    was SIGKILLed about 0.3 s after APNs answered its last try, before it wrote that answer down
    (its claim still marked as being sent). The next attempt cannot tell it from a request cut
    off in flight, so the check judged a loss the design allows; answers from tries before the
    last mark, which the worker did write, change nothing either."""
    killed = dataclasses.replace(GOAL_IN_DOUBT, worker_kills=(T0 + 20.9,))
    answered = [
        *without(match(), 3),
        update(3, T0 + 19.0, 3, alert=True, status=500),
        update(6, T0 + 20.6, 3, alert=True, status=500),
    ]
    ledger = DeviceLedger([phone()])
    for record in answered:
        ledger.add(record)

    assert ledger.violations(killed, HORIZON) == []
    assert ledger.figures()["alerts_in_doubt_at_kill"] == 1


def test_a_key_moment_before_the_token_could_be_known_is_not_owed() -> None:
    """Right after the report, before any push reached the token, the fan-out may have read its
    targets already; a moment before the start's state, or after the end's, is not the activity's."""
    other = phone(name="phone-2", starter=OTHER_STARTER, activity=OTHER_ACTIVITY)
    both_started = [start(1, T0 + 1), start(2, T0 + 1, token=OTHER_STARTER)]
    goal_soon_after_report = [*both_started, update(3, T0 + 5, 3, token=OTHER_ACTIVITY, alert=True)]
    playing = MatchFacts(kicked_off=frozenset({FIXTURE}))
    started_later = [start(1, T0 + 1, version=4), start(2, T0 + 1, token=OTHER_STARTER)]
    before_start = [*started_later, update(3, T0 + 0.5, 3, token=OTHER_ACTIVITY, alert=True)]
    after_end = [
        *match(),
        start(6, T0 + 1, token=OTHER_STARTER),
        update(9, T0 + 200, 9, token=OTHER_ACTIVITY, alert=True),
    ]

    assert judge([phone(), other], goal_soon_after_report, playing) == []
    assert judge([phone(), other], before_start, playing) == []
    assert ALERT_MISSING not in " ".join(judge([phone(), other], after_end))


def test_a_key_moment_walked_before_the_token_got_an_older_push_is_not_owed() -> None:
    """Seed 6: a goal's fan-out (version 103) began at t+20, before this token's first push; then
    an older routine update (version 101, queued earlier) reached the token at t+22. By version the
    token looked known before the goal; by time it was not, and the goal's walk had passed it."""
    other = phone(name="phone-2", starter=OTHER_STARTER, activity=OTHER_ACTIVITY)
    playing = MatchFacts(kicked_off=frozenset({FIXTURE}))
    records: list[Push | Unregister] = [
        start(1, T0 + 1),
        start(2, T0 + 1, token=OTHER_STARTER),
        update(3, T0 + 20, 103, token=OTHER_ACTIVITY, alert=True),
        update(4, T0 + 22, 101, timestamp=T0 + 19),
    ]

    assert judge([phone(reported_at=T0 + 18), other], records, playing) == []


def test_a_key_moment_claimed_before_the_token_was_reported_is_not_owed() -> None:
    """The 30-minute soak's seed 29: a wicket's fan-out (version 11) claimed its 99 targets at
    16:10:43.64, before this phone's token report landed; an older routine update claimed after
    the report reached the token at 16:10:44.64, and the wicket's first push reached APNs only at
    16:10:45.06. The check dated the fan-out by that push, not by its claim, and judged the
    wicket owed to two phones its walk had passed. A fan-out begins at its first claim."""
    other = phone(name="phone-2", starter=OTHER_STARTER, activity=OTHER_ACTIVITY)
    claimed_first = MatchFacts(kicked_off=frozenset({FIXTURE}), alerts={(FIXTURE, 1): {11: T0 + 19}})
    records: list[Push | Unregister] = [
        start(1, T0 + 1),
        start(2, T0 + 1, token=OTHER_STARTER),
        update(3, T0 + 20, 6, timestamp=T0 + 10),
        update(4, T0 + 21, 11, token=OTHER_ACTIVITY, alert=True),
    ]
    claimed_later = MatchFacts(kicked_off=frozenset({FIXTURE}), alerts={(FIXTURE, 1): {11: T0 + 20.5}})

    assert judge([phone(reported_at=T0 + 19.5), other], records, claimed_first) == []
    assert judge([phone(reported_at=T0 + 19.5), other], records, claimed_later) == [
        f"{ALERT_MISSING}: version 11"
    ]


def test_an_update_older_than_one_before_it_is_a_violation() -> None:
    records: list[Push | Unregister] = [
        *match()[:4],
        update(6, T0 + 40, 6, timestamp=T0 + 25),
        end(7, T0 + 100, 6),
    ]

    assert judge([phone()], records) == [f"{OUT_OF_ORDER}: 1800000025 after 1800000030 (seq 6)"]


def test_the_same_timestamp_again_is_in_order() -> None:
    records: list[Push | Unregister] = [*match()[:4], update(6, T0 + 31, 4, timestamp=T0 + 30), match()[4]]

    assert judge([phone()], records) == []


def test_an_activity_without_its_end_is_a_violation() -> None:
    assert judge([phone()], without(match(), 5)) == [END_MISSING]


def test_an_end_is_not_owed_while_the_match_goes_on() -> None:
    playing = MatchFacts(kicked_off=frozenset({FIXTURE}))

    assert judge([phone()], without(match(), 5), playing) == []


def test_two_ends_with_their_alert_are_a_violation() -> None:
    records: list[Push | Unregister] = [*match(), end(6, T0 + 101, 5)]

    assert judge([phone()], records) == [f"{END_TWICE} 2 times"]


def test_an_end_sent_again_without_its_alert_is_dropped_by_the_ended_activity() -> None:
    """An end a SIGKILL left in doubt goes again without its alert (`PushInput.resent_quietly`):
    the activity ended on the first, so the phone shows one end and one banner."""
    again = dataclasses.replace(end(6, T0 + 101, 5), alert=False)

    assert judge([phone()], [*match(), again]) == []


def test_a_dead_token_sent_to_again_is_a_violation() -> None:
    """After our unregister, the first push gets the 410; only one sent later counts (in-flight ones
    within the grace are excused), and nothing more is owed to the deleted phone."""
    records: list[Push | Unregister] = [
        start(1, T0 + 1),
        update(2, T0 + 10, 2),
        Unregister(2, T0 + 11, ACTIVITY),
        update(3, T0 + 20, 3, alert=True, status=410, reason="Unregistered"),
        update(4, T0 + 20.5, 4, status=410, reason="Unregistered"),
        update(5, T0 + 30, 5, status=410, reason="Unregistered"),
    ]
    deleted = phone(deleted_at=T0 + 11)

    details = judge([deleted], records)

    assert len(details) == 1 and details[0].startswith(f"{AFTER_DEAD}: 1 pushes after APNs answered 410")
    assert judge([deleted], records[:5]) == []


def test_a_death_answered_just_after_its_worker_was_killed_is_learnt_again_once() -> None:
    """The 30-minute soak's seed 25: worker-2 was SIGKILLed and APNs journalled a 410 to one of its
    requests about a second later (written before the kill, answered to no one); the fan-out's
    next attempt sent the update to the token again and learnt the death from it. Only a kill
    after the answer excused the push; one just before it now does too."""
    records: list[Push | Unregister] = [
        start(1, T0 + 1),
        update(2, T0 + 10, 2),
        Unregister(2, T0 + 11, ACTIVITY),
        update(3, T0 + 20, 3, status=410, reason="Unregistered"),
        update(4, T0 + 50, 3, status=410, reason="Unregistered"),
    ]
    deleted = phone(deleted_at=T0 + 11)
    killed = MatchFacts(kicked_off=frozenset({FIXTURE}), worker_kills=(T0 + 19.0,))

    assert judge([deleted], records, killed) == []


def test_a_death_whose_worker_was_killed_before_writing_it_is_learnt_again_once() -> None:
    """The 30-minute soak of 2026-12-06 (seed 21): a 410 came to a worker SIGKILLed 0.6 s later,
    before Postgres or the other workers heard of it, and the next push to the token 35 s later
    was flagged, though no part of Scoreline could know. That push, which gets the 410 again, is
    excused; one after it is not."""
    records: list[Push | Unregister] = [
        start(1, T0 + 1),
        update(2, T0 + 10, 2),
        Unregister(2, T0 + 11, ACTIVITY),
        update(3, T0 + 20, 3, status=410, reason="Unregistered"),
        update(4, T0 + 55, 4, status=410, reason="Unregistered"),
    ]
    deleted = phone(deleted_at=T0 + 11)
    killed = MatchFacts(kicked_off=frozenset({FIXTURE}), worker_kills=(T0 + 20.6,))
    ledger = DeviceLedger([deleted])
    for record in records:
        ledger.add(record)

    assert ledger.violations(killed, HORIZON) == []
    assert ledger.figures()["deaths_lost_at_kill"] == 1
    too_late = judge([deleted], records, dataclasses.replace(killed, worker_kills=(T0 + 21.1,)))
    assert too_late == [f"{AFTER_DEAD}: 1 pushes after APNs answered 410 Unregistered at seq 3"]
    too_early = judge([deleted], records, dataclasses.replace(killed, worker_kills=(T0 + 17.9,)))
    assert too_early == too_late
    again = [*records, update(5, T0 + 70, 5, status=410, reason="Unregistered")]
    details = judge([deleted], again, killed)
    assert len(details) == 1 and details[0].startswith(f"{AFTER_DEAD}: 1 pushes after APNs answered 410")


def test_journal_lines_parse_as_the_simulator_writes_them(tmp_path: Path) -> None:
    """The check reads exactly what `JournalFile` writes (and skips a line still being written)."""
    path = tmp_path / "apns.jsonl"
    file = JournalFile(path)
    payload = {
        "aps": {
            "timestamp": 1_800_000_001,
            "event": "start",
            "content-state": {"version": 7},
            "attributes": {"fixtureId": FIXTURE, "generation": 2},
            "alert": {"title": "A v B"},
        }
    }
    file.push(
        PushRecord(
            seq=4,
            received_at="2027-01-15T08:00:01.250+00:00",
            connection_id=1,
            stream_id=1,
            method="POST",
            path=f"/3/device/{STARTER.upper()}",
            token=STARTER.upper(),
            headers={"apns-push-type": "liveactivity", "apns-priority": "10"},
            jwt=None,
            payload=payload,
            payload_bytes=120,
            apns_id="00000000-0000-0000-0000-000000000001",
            status=200,
            reason=None,
            dropped_by_device=None,
            fault_id=None,
            latency_ms=0,
        )
    )
    file.unregister(ACTIVITY, 1_800_000_002_000, after_seq=4)
    file.close()
    first, second = path.read_text().splitlines()

    assert parse_line(first) == Push(
        4, 1_800_000_001.25, STARTER, 200, None, None, "start", 1_800_000_001.0, 7, True, FIXTURE, 2
    )
    unregister = parse_line(second)
    assert isinstance(unregister, Unregister) and (unregister.token, unregister.after_seq) == (ACTIVITY, 4)
    assert parse_line(first[:40]) is None


def test_phones_are_planned_from_the_seed_alone(tmp_path: Path) -> None:
    """Same seed, same phones: tokens, install ids, follows and who deletes the app."""
    targets = SoakTargets(("http://127.0.0.1:1",), "http://p", "http://a", "postgresql://x/y", tmp_path / "j")
    fixtures = SoakFixtures(provider=(1, 2, 3, 4), desk=(5,))

    def plan(seed: int) -> list[tuple[str, str, tuple[int, ...], bool]]:
        part = DevicePart(targets, fixtures, random.Random(seed), 300)
        return [
            (p.install_id, p.push_to_start_token, p.wanted, p.delete_after is not None) for p in part._phones
        ]

    first = plan(7)

    assert first == plan(7) and first != plan(8)
    assert sum(deletes for *_, deletes in first) == 3
    assert all(1 <= len(wanted) <= 3 and len(set(wanted)) == len(wanted) for _, _, wanted, _ in first)
    assert len({token for _, token, _, _ in first}) == 300


def test_the_journal_is_read_in_whole_lines_from_where_it_left_off(tmp_path: Path) -> None:
    """The phones' reader never hands over half a line, nor a line twice."""
    path = tmp_path / "apns.jsonl"
    tail = _JournalTail(path)
    before = tail.read()
    path.write_text('{"seq":1}\n{"se')
    first = tail.read()
    with path.open("a") as file:
        file.write('q":2}\n')
    second = tail.read()

    assert (before, first, second, tail.read()) == ([], ['{"seq":1}'], ['{"seq":2}'], [])


async def test_a_call_moves_on_from_a_dead_process_and_retries_until_an_answer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A refused connection moves to the next API process; a 503 and a 429 are tried again; the
    first other answer (a 404 too: it is the API's) is the result; a set `stop` ends the retries."""
    monkeypatch.setattr(devices, "BACKOFF_S", (0.001, 0.002))
    answers = iter(
        [httpx.Response(503), httpx.Response(429, headers={"Retry-After": "0"}), httpx.Response(404)]
    )
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.host)
        if request.url.host == "dead":
            raise httpx.ConnectError("refused", request=request)
        return next(answers)

    stop = asyncio.Event()
    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        api = devices._Api(client, ("http://dead", "http://alive", "http://other"), stop)
        answer = await api.call(random.Random(1), "GET", "/x", body=None)
        stop.set()
        stopped = await api.call(random.Random(1), "GET", "/x", body=None)

    assert answer is not None and answer.status_code == 404
    assert seen == ["dead", "alive", "other", "other"]
    assert stopped is None


def test_a_follow_after_postgres_shows_the_match_over_is_owed_no_start() -> None:
    """The soak of 2026-12-02 (seed 3): 412 phones followed a desk cricket match in the minutes
    after it ended; its end reached no phone, so the journal showed the generation still running
    and every one of them was reported "start never reached the phone". Postgres' last change
    of the over match now bounds when a follow can still be started."""
    other = phone(name="phone-2", starter=OTHER_STARTER, activity=OTHER_ACTIVITY)
    after_the_end = phone(activity=None, followed_at=T0 + 200)
    kicked_off = [start(1, T0 + 1, token=OTHER_STARTER)]
    over = MatchFacts(kicked_off=frozenset({FIXTURE}), over=frozenset({FIXTURE}), over_at={FIXTURE: T0 + 100})
    still_playing = MatchFacts(kicked_off=frozenset({FIXTURE}))

    assert START_MISSING not in brief(judge([after_the_end, other], kicked_off, over))
    assert brief(judge([after_the_end, other], kicked_off, still_playing)) == [START_MISSING]
