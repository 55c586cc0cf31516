"""The webhooks check: each receiver gets every owed seq of each match, first arrivals in seq order,
bodies as the log says, retries under one id, every signature valid; each broken promise is named."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta

import pytest

from devkit.soak.webhook_check import Endpoint, LogEntry, Received, check_receiver, complete, not_owed
from devkit.soak.webhook_receivers import Down, Flaky, Slow
from scoreline.webhooks.signing import message_id, new_secret, signed_headers

pytestmark = pytest.mark.unit

CREATED = datetime(2025, 5, 1, 12, 0, tzinfo=UTC)
SECRET = new_secret()
ENDPOINT = Endpoint("flaky", 7, SECRET, CREATED)
FIXTURE = 101


def _log(count: int, fixture: int = FIXTURE, *, since: datetime = CREATED) -> list[LogEntry]:
    return [
        LogEntry(seq, "event", None, {"type": "goal", "n": seq}, since + timedelta(seconds=seq))
        for seq in range(1, count + 1)
    ]


def _body(entry: LogEntry, fixture: int = FIXTURE, **changed: object) -> bytes:
    document = {
        "type": "match.change",
        "fixture_id": fixture,
        "seq": entry.seq,
        "version": entry.seq,
        "committed_at": entry.committed_at.isoformat(),
        "kind": entry.kind,
        "origin": "provider",
        "minute": None,
        "extra_minute": None,
        "target_seq": entry.target_seq,
        "body": entry.body,
        "state": "live",
        "score": {"home": 0, "away": 0},
        **changed,
    }
    return json.dumps(document, separators=(",", ":")).encode()


def _received(
    entry: LogEntry, status: int = 204, *, secret: str = SECRET, fixture: int = FIXTURE, **changed: object
) -> Received:
    body = _body(entry, fixture, **changed)
    msg_id = message_id(ENDPOINT.id, fixture, entry.seq)
    headers = signed_headers([secret], msg_id, datetime.now(UTC), body)
    return Received(msg_id, headers["webhook-timestamp"], headers["webhook-signature"], body, status)


def _details(journal: list[Received], log: list[LogEntry]) -> list[str]:
    return [
        f"{violation.subject}: {violation.detail}"
        for violation in check_receiver(ENDPOINT, journal, {FIXTURE: log})
    ]


def test_every_seq_in_order_with_retries_of_one_id_passes() -> None:
    log = _log(4)
    journal = [
        _received(log[0]),
        _received(log[1], 500),
        _received(log[1], 503),
        _received(log[1]),
        _received(log[2]),
        _received(log[2]),
        _received(log[3]),
    ]
    assert _details(journal, log) == []
    assert complete(ENDPOINT, journal, {FIXTURE: log})


def test_a_gap_is_named_with_its_seqs() -> None:
    log = _log(5)
    journal = [_received(log[0]), _received(log[1])]
    assert _details(journal, log) == ["flaky fixture 101 seqs 3-5: never arrived"]
    assert not complete(ENDPOINT, journal, {FIXTURE: log})


def test_a_seq_only_answered_500_is_not_received() -> None:
    log = _log(2)
    assert _details([_received(log[0]), _received(log[1], 500)], log) == [
        "flaky fixture 101 seq 2: never accepted (answered 2xx) by the end"
    ]


def test_a_first_arrival_before_a_lower_seq_was_accepted_is_named() -> None:
    log = _log(3)
    journal = [_received(log[0]), _received(log[2]), _received(log[1]), _received(log[2])]
    assert _details(journal, log) == ["flaky fixture 101 seq 3: arrived before seq 2 was answered 2xx"]


def test_a_seq_sent_while_the_one_before_was_still_failing_is_out_of_order() -> None:
    log = _log(2)
    journal = [_received(log[0], 503), _received(log[1]), _received(log[0])]
    assert _details(journal, log) == ["flaky fixture 101 seq 2: arrived before seq 1 was answered 2xx"]


def test_a_bad_signature_is_named() -> None:
    log = _log(2)
    journal = [_received(log[0]), _received(log[1], secret=new_secret())]
    assert _details(journal, log) == [
        "flaky fixture 101 seq 2: the signature of msg_7_101_2 does not verify with its secret"
    ]


def test_a_body_that_is_not_the_logs_is_named() -> None:
    log = _log(2)
    journal = [_received(log[0]), _received(log[1], kind="retraction", body={"type": "card"})]
    assert _details(journal, log) == [
        "flaky fixture 101 seq 2: its kind is 'retraction', the log has 'event'; "
        "its body is {'type': 'card'}, the log has {'type': 'goal', 'n': 2}"
    ]


def test_a_duplicate_under_another_id_or_with_another_body_is_named() -> None:
    log = _log(1)
    retry = _received(log[0], state="over")
    other_id = Received("msg_7_101_9", retry.timestamp, retry.signature, _body(log[0]), 204)
    details = _details([_received(log[0]), retry, other_id], log)
    assert (
        details[0] == "flaky fixture 101 seq 1: the retry msg_7_101_1 has another body than its first arrival"
    )
    assert "flaky fixture 101 seq 1: webhook-id msg_7_101_9, not msg_7_101_1" in details


def test_a_seq_not_in_the_log_and_a_match_not_granted_are_named() -> None:
    log = _log(1)
    beyond = LogEntry(2, "event", None, {}, CREATED)
    assert _details([_received(log[0]), _received(beyond), _received(log[0], fixture=999)], log) == [
        "flaky fixture 101 seq 2: the log has no such seq",
        "flaky fixture 999 seq 1: a match not in the partner's competitions",
    ]


def test_entries_committed_before_the_endpoint_are_not_owed() -> None:
    log = _log(3, since=CREATED - timedelta(seconds=2))
    assert not_owed(ENDPOINT, {FIXTURE: log}) == 1
    assert _details([_received(log[1]), _received(log[2])], log) == []


def test_an_unreadable_body_is_named() -> None:
    received = Received("msg_7_101_1", "1", "v1,x", b"not json", 204)
    assert _details([received], []) == [
        "flaky fixture ? seq ?: request 1 (msg_7_101_1): its body is not JSON"
    ]


def test_the_receivers_behave_as_seeded() -> None:
    flaky = Flaky(0.3, random.Random(1))
    statuses = [flaky.reply(0).status for _ in range(1000)]
    assert 250 < sum(status >= 500 for status in statuses) < 350
    slow = Slow(3.0, 0.02, random.Random(2))
    delays = [slow.reply(0).delay for _ in range(1000)]
    assert all(0 < delay < 3.0 or delay > 3.0 for delay in delays)
    assert 5 <= sum(delay > 3.0 for delay in delays) <= 40
    down = Down(10.0, 70.0, resets=False)
    assert [down.reply(now).status for now in (5.0, 10.0, 69.9, 70.0)] == [204, 503, 503, 204]
    assert Down(10.0, 70.0, resets=True).reply(20.0).reset
