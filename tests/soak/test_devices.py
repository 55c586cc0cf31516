"""The devices' check (`devkit.soak.device_check`), on journal records and published pushes
built by hand.

Each rule has a test that breaks it and one that shows what it must not flag, and each excuse a
test of its own: a check that cannot fail proves nothing, and one that flags what the design
allows would fail every soak.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from pathlib import Path

import httpx
import pytest

from devkit.simulators.apns.journal import PushRecord
from devkit.simulators.apns.journal_file import JournalFile
from devkit.soak import devices
from devkit.soak.device_check import (
    ALERT_MISSING,
    ALERT_TWICE,
    END_MISSING,
    HORIZON_GRACE_S,
    START_MISSING,
    START_TWICE,
    START_UNFOLLOWED,
    STATE_BEHIND,
    ActivityReport,
    Alert,
    DeviceLedger,
    MatchFacts,
    PhoneRecord,
    Published,
    Push,
    Shown,
    Span,
    Unregister,
    parse_line,
    phone_view,
)
from devkit.soak.devices import DevicePart, _JournalTail
from devkit.soak.faults import InjectedFault
from devkit.soak.model import SoakFixtures, SoakTargets
from devkit.soak.schedule import APNS_DISCONNECT, FaultKind, PlannedFault

pytestmark = pytest.mark.unit

T0 = 1_800_000_000.0
FIXTURE = 101
STARTER = "a1" * 80
ACTIVITY = "b2" * 80
ROTATED = "e5" * 80
HORIZON = T0 + 10_000
GOAL: Alert = ("GOAL! Riverside FC", "Riverside FC 1-0 Harbour United (23')")
SECOND: Alert = ("GOAL! Riverside FC", "Riverside FC 2-0 Harbour United (60')")
FULL_TIME: Alert = ("Full time", "Riverside FC 2-0 Harbour United")


def published(
    stamp: int,
    event: str,
    version: int,
    *,
    at: float,
    generation: int = 1,
    alert: Alert | None = None,
    stale_after: float = 900.0,
) -> Published:
    return Published(FIXTURE, float(stamp), event, generation, version, alert, at + stale_after, at)


MATCH = (
    published(100, "start", 1, at=T0 + 10),
    published(101, "update", 2, at=T0 + 200, alert=GOAL),
    published(102, "update", 3, at=T0 + 300),
    published(103, "end", 4, at=T0 + 400, alert=FULL_TIME),
)


def phone(
    *,
    reports: Sequence[ActivityReport] = (ActivityReport(ACTIVITY, FIXTURE, 1, T0 + 12),),
    followed_at: float = T0,
    deleted_at: float | None = None,
    asked: frozenset[int] = frozenset({FIXTURE}),
) -> PhoneRecord:
    return PhoneRecord(
        device="phone-1",
        push_to_start_token=STARTER,
        follows={FIXTURE: followed_at},
        asked=asked,
        activities=tuple(reports),
        deleted_at=deleted_at,
    )


def push(
    seq: int,
    at: float,
    event: str,
    stamp: float,
    version: int,
    *,
    token: str = ACTIVITY,
    alert: Alert | None = None,
    status: int | None = 200,
    generation: int = 1,
) -> Push:
    starting = event == "start"
    return Push(
        seq=seq,
        at=at,
        token=token,
        status=status,
        event=event,
        timestamp=stamp,
        version=version,
        alert=alert,
        fixture_id=FIXTURE if starting else None,
        generation=generation,
    )


def start(seq: int, at: float, *, generation: int = 1, stamp: float = 100, version: int = 1) -> Push:
    return push(seq, at, "start", stamp, version, token=STARTER, generation=generation)


def journal() -> list[Push | Unregister]:
    """The whole match as it reached the phone."""
    return [
        start(1, T0 + 11),
        push(2, T0 + 201, "update", 101, 2, alert=GOAL),
        push(3, T0 + 301, "update", 102, 3),
        push(4, T0 + 401, "end", 103, 4, alert=FULL_TIME),
    ]


def judge(
    records: Sequence[Push | Unregister],
    *,
    phones: Sequence[PhoneRecord] | None = None,
    facts: MatchFacts | None = None,
    horizon: float = HORIZON,
) -> tuple[list[str], DeviceLedger]:
    ledger = DeviceLedger([phone()] if phones is None else phones)
    for record in records:
        ledger.add(record)
    found = ledger.violations(MatchFacts(published=MATCH) if facts is None else facts, horizon)
    return [violation.detail for violation in found], ledger


def brief(records: Sequence[Push | Unregister], **given: object) -> list[str]:
    """The violations' kinds (their details up to the first colon or parenthesis)."""
    details, _ = judge(records, **given)  # type: ignore[arg-type]
    return [detail.split(":")[0].split(" (")[0] for detail in details]


def without(records: list[Push | Unregister], seq: int) -> list[Push | Unregister]:
    return [record for record in records if not (isinstance(record, Push) and record.seq == seq)]


def replaced(records: list[Push | Unregister], new: Push) -> list[Push | Unregister]:
    return [new if isinstance(record, Push) and record.seq == new.seq else record for record in records]


# --- the whole match ---------------------------------------------------------------------------


def test_a_whole_match_passes_and_is_counted() -> None:
    details, ledger = judge(journal())

    assert details == []
    figures = ledger.figures()
    assert (figures["pushes"], figures["starts"], figures["updates"], figures["ends"]) == (4, 1, 2, 1)


def test_the_phone_keeps_the_newest_timestamp_and_nothing_after_an_end() -> None:
    """An older update is dropped, whichever token it came to; an end closes the activity."""
    shown, taken = phone_view(
        start(1, T0),
        [
            push(2, T0 + 1, "update", 102, 3),
            push(3, T0 + 2, "update", 101, 2, token=ROTATED),
            push(4, T0 + 3, "end", 103, 4),
            push(5, T0 + 4, "update", 104, 5),
        ],
    )

    assert shown == Shown(103, "end", 4)
    assert [push.seq for push in taken] == [2, 4]


# --- rule 1: starts ----------------------------------------------------------------------------


def test_a_start_that_never_came_is_a_violation() -> None:
    assert START_MISSING in brief(without(journal(), 1))


def test_a_missing_start_says_when_it_was_owed_and_how_postgres_shows_it() -> None:
    words = {("phone-1", FIXTURE): "follow stored 08:00:00.000; no activity"}
    details, _ = judge(without(journal(), 1), facts=MatchFacts(published=MATCH, words=words))

    missing = next(detail for detail in details if detail.startswith(START_MISSING))
    assert "owed at " in missing and "(postgres: follow stored 08:00:00.000; no activity)" in missing


def test_a_start_is_not_owed_when_the_generation_ran_too_briefly_after_the_follow() -> None:
    """A follow as the whistle blows may meet the end instead of a start."""
    late = phone(reports=(), followed_at=T0 + 400 - HORIZON_GRACE_S + 1)

    assert START_MISSING not in brief([], phones=[late])


def test_an_outage_does_not_count_as_time_the_start_could_go() -> None:
    """A follow two minutes before full time owes a start, unless APNs was down meanwhile."""
    follower = phone(reports=(), followed_at=T0 + 400 - HORIZON_GRACE_S - 60)
    outage = MatchFacts(published=MATCH, outages=(Span(T0 + 300, T0 + 500),))

    assert START_MISSING in brief([], phones=[follower])
    assert START_MISSING not in brief([], phones=[follower], facts=outage)


def test_a_start_is_judged_only_once_the_grace_has_passed() -> None:
    running = MATCH[:2]

    assert START_MISSING not in brief(
        [], phones=[phone(reports=())], facts=MatchFacts(published=running), horizon=T0 + 100
    )
    assert START_MISSING in brief(
        [], phones=[phone(reports=())], facts=MatchFacts(published=running), horizon=T0 + 200
    )


def test_no_start_is_owed_to_a_dead_push_to_start_token_or_a_deleted_app() -> None:
    dead = [push(1, T0 + 11, "start", 100, 1, token=STARTER, status=410)]

    assert START_MISSING not in brief(dead, phones=[phone(reports=())])
    assert START_MISSING not in brief([], phones=[phone(reports=(), deleted_at=T0 + 5_000)])


def test_a_follow_overnight_is_owed_the_next_generation_and_every_one_after() -> None:
    days = (
        published(100, "start", 1, at=T0),
        published(101, "end", 2, at=T0 + 300),
        published(102, "start", 3, at=T0 + 600, generation=2),
        published(103, "end", 4, at=T0 + 900, generation=2),
        published(104, "start", 5, at=T0 + 1200, generation=3),
    )
    overnight = phone(reports=(), followed_at=T0 + 400)
    facts = MatchFacts(published=days)
    ledger = DeviceLedger([overnight])
    ledger.add(start(1, T0 + 601, generation=2, stamp=102))

    missing = ledger.violations(facts, HORIZON)
    assert [(v.subject.endswith("generation 3"), v.detail.split(":")[0]) for v in missing] == [
        (True, START_MISSING)
    ]
    assert len(DeviceLedger([overnight]).violations(facts, HORIZON)) == 2, "generations 2 and 3, not 1"


def test_a_second_start_after_the_report_was_confirmed_is_a_violation() -> None:
    again = [*journal(), start(5, T0 + 70)]

    assert brief(again) == [START_TWICE]


def test_a_second_start_before_any_report_was_confirmed_is_excused_and_counted() -> None:
    """Scoreline resends a start whose outcome it lost only when no report came."""
    slow = phone(reports=(ActivityReport(ACTIVITY, FIXTURE, 1, T0 + 80),))
    details, ledger = judge([*journal(), start(5, T0 + 70)], phones=[slow])

    assert details == []
    assert ledger.figures()["starts_again_unreported"] == 1


def test_a_start_for_a_match_never_followed_is_a_violation() -> None:
    stranger = phone(asked=frozenset({FIXTURE + 1}))

    assert START_UNFOLLOWED in brief(journal(), phones=[stranger])


# --- rule 2: what the phone shows --------------------------------------------------------------


def test_an_activity_without_the_end_is_a_violation() -> None:
    assert brief(without(journal(), 4)) == [END_MISSING]


def test_an_end_without_the_final_state_is_a_violation() -> None:
    stale_end = replaced(journal(), push(4, T0 + 401, "end", 103, 3, alert=FULL_TIME))

    assert brief(stale_end) == [END_MISSING]


def test_a_running_generation_shows_the_newest_state_published_before_the_cut() -> None:
    running = MatchFacts(published=MATCH[:3])
    behind = without(without(journal(), 4), 3)

    assert brief(behind, facts=running) == [STATE_BEHIND]
    assert brief(behind, facts=running, horizon=T0 + 300 + HORIZON_GRACE_S - 1) == []


def test_a_rotated_token_is_judged_on_the_new_one_and_owes_the_rest_of_the_match() -> None:
    rotated = phone(
        reports=(ActivityReport(ACTIVITY, FIXTURE, 1, T0 + 12), ActivityReport(ROTATED, FIXTURE, 1, T0 + 251))
    )
    records: list[Push | Unregister] = [
        start(1, T0 + 11),
        push(2, T0 + 201, "update", 101, 2, alert=GOAL),
        Unregister(2, T0 + 250, ACTIVITY),
        push(3, T0 + 252, "update", 101, 2),
        push(4, T0 + 301, "update", 102, 3, token=ROTATED),
        push(5, T0 + 401, "end", 103, 4, token=ROTATED, alert=FULL_TIME),
    ]

    assert brief(records, phones=[rotated]) == []
    assert brief(without(records, 5), phones=[rotated]) == [END_MISSING]


def test_a_token_reported_after_the_end_must_get_the_end() -> None:
    late = phone(reports=(ActivityReport(ACTIVITY, FIXTURE, 1, T0 + 450),))
    records: list[Push | Unregister] = [start(1, T0 + 11), push(2, T0 + 451, "end", 103, 4, alert=FULL_TIME)]

    assert brief(records, phones=[late]) == []
    assert brief(records[:1], phones=[late]) == [END_MISSING]


def test_a_refused_report_leaves_the_activity_on_screen_and_says_so() -> None:
    refused = phone(reports=(ActivityReport(ACTIVITY, FIXTURE, 1, T0 + 450, refused=409),))
    details, _ = judge([start(1, T0 + 11)], phones=[refused])

    assert len(details) == 1 and details[0].startswith(END_MISSING) and "refused 409" in details[0]


def test_nothing_is_owed_to_a_dead_token_or_a_deleted_app() -> None:
    dead = [*without(journal(), 4), push(4, T0 + 401, "end", 103, 4, status=410)]

    assert brief(dead) == []
    assert brief(without(journal(), 4), phones=[phone(deleted_at=T0 + 350)]) == []


# --- rule 3: alerts ----------------------------------------------------------------------------


def test_a_key_moment_shown_twice_is_a_violation() -> None:
    twice = [
        *journal()[:2],
        push(3, T0 + 202, "update", 101, 2, alert=GOAL),
        push(4, T0 + 301, "update", 102, 3),
        push(5, T0 + 401, "end", 103, 4, alert=FULL_TIME),
    ]

    assert brief(twice) == [ALERT_TWICE]


def test_the_results_banner_on_the_end_is_not_the_last_moment_again() -> None:
    """The end carries the final state, often the last key moment's version, with the result's own
    alert: the check counted that banner as the moment shown twice."""
    last_goal_then_end = MatchFacts(
        published=(
            published(100, "start", 1, at=T0 + 10),
            published(101, "update", 2, at=T0 + 200, alert=GOAL),
            published(103, "end", 2, at=T0 + 400, alert=FULL_TIME),
        )
    )
    records: list[Push | Unregister] = [
        start(1, T0 + 11),
        push(2, T0 + 201, "update", 101, 2, alert=GOAL),
        push(3, T0 + 401, "end", 103, 2, alert=FULL_TIME),
    ]

    assert brief(records, facts=last_goal_then_end) == []


def test_an_alert_riding_on_a_newer_state_is_the_moment_it_was_published_with() -> None:
    """The alert goes with the next request, with the newest state: its text names the moment."""
    riding = replaced(without(journal(), 2), push(3, T0 + 301, "update", 102, 3, alert=GOAL))
    trimmed = replaced(
        without(journal(), 2), push(3, T0 + 301, "update", 102, 3, alert=(GOAL[0][:10] + "…", ""))
    )

    assert brief(riding) == []
    assert brief(trimmed) == []


def test_a_key_moment_the_next_push_did_not_carry_is_a_violation() -> None:
    quiet = replaced(journal(), push(2, T0 + 201, "update", 101, 2))
    details, _ = judge(quiet)

    assert [detail.split(":")[0] for detail in details] == [ALERT_MISSING]
    assert "version 2" in details[0] and "carried no alert" in details[0]


def test_an_alert_is_not_owed_before_the_token_was_reported() -> None:
    quiet = replaced(journal(), push(2, T0 + 201, "update", 101, 2))
    reported_late = phone(reports=(ActivityReport(ACTIVITY, FIXTURE, 1, T0 + 250),))

    assert brief(quiet, phones=[reported_late]) == []


def test_an_alert_replaced_by_a_newer_one_is_excused_and_counted() -> None:
    """A newer alert replaced one not sent yet: the phone showed the newer state."""
    facts = MatchFacts(
        published=(*MATCH[:2], published(102, "update", 3, at=T0 + 300, alert=SECOND), MATCH[3])
    )
    records = [*without(journal(), 2)[:1], push(3, T0 + 301, "update", 102, 3, alert=SECOND), journal()[3]]
    details, ledger = judge(records, facts=facts)

    assert details == []
    assert ledger.figures()["alerts_replaced"] == 1


def test_an_alert_past_its_stale_date_is_excused_and_counted() -> None:
    facts = MatchFacts(
        published=(MATCH[0], published(101, "update", 2, at=T0 + 200, alert=GOAL, stale_after=50), *MATCH[2:])
    )
    late = replaced(without(journal(), 2), push(3, T0 + 301, "update", 102, 3))
    details, ledger = judge(late, facts=facts)

    assert details == []
    assert ledger.figures()["alerts_expired"] == 1
    assert brief(late) == [ALERT_MISSING]


def test_an_alert_whose_request_lost_its_worker_is_excused_and_counted() -> None:
    """A SIGKILL or a SIGSTOP between the publish and the next push: the outcome may be lost."""
    quiet = replaced(journal(), push(2, T0 + 201, "update", 101, 2))
    for span in (Span(T0 + 200.5, T0 + 200.5), Span(T0 + 200.5, T0 + 250)):
        details, ledger = judge(quiet, facts=MatchFacts(published=MATCH, interruptions=(span,)))
        assert details == []
        assert ledger.figures()["alerts_lost_at_interruption"] == 1
    before = MatchFacts(published=MATCH, interruptions=(Span(T0 + 150, T0 + 199),))
    assert brief(quiet, facts=before) == [ALERT_MISSING]


def test_a_pause_already_under_way_at_the_publish_excuses_no_lost_alert() -> None:
    """A worker paused before a goal was published excused its lost alert, though a paused worker
    takes nothing: the check let a lost alert through whenever any pause overlapped."""
    quiet = replaced(journal(), push(2, T0 + 201, "update", 101, 2))
    under_way = MatchFacts(published=MATCH, interruptions=(Span(T0 + 100, T0 + 250),))
    assert brief(quiet, facts=under_way) == [ALERT_MISSING]


def test_an_alert_whose_request_apns_never_answered_is_excused_and_counted() -> None:
    """The connection dropped with the request: Scoreline cannot know whether it was shown."""
    records = [
        start(1, T0 + 11),
        push(2, T0 + 201, "update", 101, 2, alert=GOAL, status=None),
        push(3, T0 + 202, "update", 101, 2),
        *journal()[2:],
    ]
    details, ledger = judge(records)

    assert details == []
    assert ledger.figures()["alerts_lost_unanswered"] == 1


def test_an_older_request_landing_after_the_publish_does_not_count_as_the_next_push() -> None:
    """A request built before the moment was published could not carry its alert."""
    records = [start(1, T0 + 11), push(2, T0 + 200.5, "update", 100, 1), *journal()[1:]]

    assert brief(records) == []


# --- the journal and the phones ----------------------------------------------------------------


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
        4, 1_800_000_001.25, STARTER, 200, None, None, "start", 1_800_000_001.0, 7, ("A v B", ""), FIXTURE, 2
    )
    unregister = parse_line(second)
    assert isinstance(unregister, Unregister) and (unregister.token, unregister.after_seq) == (ACTIVITY, 4)
    assert parse_line(first[:40]) is None


def test_phones_are_planned_from_the_seed_alone(tmp_path: Path) -> None:
    """Same seed, same phones: tokens, install ids, follows, and who deletes, rotates, reports late."""
    targets = SoakTargets(("http://127.0.0.1:1",), "http://p", "http://a", "postgresql://x/y", tmp_path / "j")
    fixtures = SoakFixtures(provider=(1, 2, 3, 4), desk=(5,))

    def plan(seed: int) -> list[tuple[str, str, tuple[int, ...], bool, bool, bool]]:
        part = DevicePart(targets, fixtures, random.Random(seed), 300)
        return [
            (
                p.install_id,
                p.push_to_start_token,
                p.wanted,
                p.delete_after is not None,
                p.rotate_after is not None,
                p.reports_late,
            )
            for p in part._phones
        ]

    first = plan(7)

    assert first == plan(7) and first != plan(8)
    behaviours = [(deletes, rotates, late) for *_, deletes, rotates, late in first]
    assert [sum(column) for column in zip(*behaviours, strict=True)] == [3, 9, 9]
    assert all(sum(phone) <= 1 for phone in behaviours), "one special behaviour per phone"
    assert all(1 <= len(wanted) <= 3 and len(set(wanted)) == len(wanted) for _, _, wanted, *_ in first)
    assert len({phone[1] for phone in first}) == 300


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


def test_the_hot_token_is_a_running_activity_of_an_ordinary_phone(tmp_path: Path) -> None:
    """The hot-token fault fails a token whose phone does nothing else special, while it runs."""
    targets = SoakTargets(("http://127.0.0.1:1",), "http://p", "http://a", "postgresql://x/y", tmp_path / "j")
    part = DevicePart(targets, SoakFixtures(provider=(FIXTURE,), desk=()), random.Random(3), 100)
    ordinary, rotating = (
        next(p for p in part._phones if p.ordinary),
        next(p for p in part._phones if p.rotate_after is not None),
    )
    ordinary.device_id, rotating.device_id = "d-1", "d-2"
    ordinary.reports.append(ActivityReport(ACTIVITY, FIXTURE, 1, T0))
    rotating.reports.append(ActivityReport(ROTATED, FIXTURE, 1, T0))

    assert part.hot_token() == (ACTIVITY, f"fixture {FIXTURE} device d-1")
    part._ended.add((FIXTURE, 1))
    assert part.hot_token() is None


def test_an_apns_outage_that_drops_connections_interrupts_what_was_on_its_way() -> None:
    """An outage that dropped every connection mid-request cut off the goal requests on their way
    when it began, with no record of APNs' to show them; an outage answering 503 cuts off none."""

    def outage(target: str) -> InjectedFault:
        planned = PlannedFault(100.0, FaultKind.APNS_OUTAGE, target, 200.0)
        return InjectedFault(planned, 100.0, 300.0, target, began_at=T0 + 200.5, ended_at=T0 + 400)

    quiet = replaced(journal(), push(2, T0 + 401, "update", 101, 2))
    drops = devices._connection_drops([outage(APNS_DISCONNECT), outage("apns:503")])
    details, ledger = judge(quiet, facts=MatchFacts(published=MATCH, interruptions=drops))
    assert details == []
    assert ledger.figures()["alerts_lost_at_interruption"] == 1
    assert devices._connection_drops([outage("apns:503")]) == ()


def test_an_alert_held_back_while_apns_was_in_doubt_may_follow_its_state() -> None:
    """A drainer in doubt sends the goal's state alone and the goal's alert once APNs answers:
    the phone shows the alert once. A later alert (full time) after a quiet push is no excuse."""
    held = [
        *journal()[:1],
        push(2, T0 + 201, "update", 101, 2),
        push(3, T0 + 202, "update", 101, 2, alert=GOAL),
        *journal()[2:],
    ]
    assert brief(held) == []
    quiet = replaced(journal(), push(2, T0 + 201, "update", 101, 2))
    assert brief(quiet) == [ALERT_MISSING]


def test_an_alert_held_back_from_a_token_that_died_within_the_grace_is_excused() -> None:
    """A drainer in doubt sent the goal's state alone and APNs answered the token 410 before the
    held alert could follow: the checker called the alert missing on a phone nothing could reach."""
    died_soon = [
        *journal()[:1],
        push(2, T0 + 201, "update", 101, 2),
        push(3, T0 + 235, "update", 101, 2, status=410),
    ]
    details, ledger = judge(died_soon)
    assert details == []
    assert ledger.figures()["alerts_lost_token_dead"] == 1

    died_late = [*died_soon[:2], push(3, T0 + 201 + 2 * HORIZON_GRACE_S, "update", 101, 2, status=410)]
    assert brief(died_late) == [ALERT_MISSING]


def test_an_alert_on_a_second_end_is_never_shown() -> None:
    """An end that came quietly closed the activity: the full-time alert on the end after it never
    showed, so the goal it would have replaced is still owed."""
    late = [
        *journal()[:1],
        push(2, T0 + 401, "end", 103, 4),
        push(3, T0 + 402, "end", 103, 4, alert=FULL_TIME),
    ]
    assert ALERT_MISSING in brief(late)
