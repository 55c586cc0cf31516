"""What a webhook receiver got, against what the match logs hold: the pure rules behind the
webhooks check (`scoreline.webhooks`: one signed POST per log entry, in seq order per endpoint and
match, retried with the same `webhook-id` until answered 2xx).

Judged from the partner's side, per receiver (one endpoint) and per match of its partner's
competitions, over the receiver's journal in arrival order:
1. every request is signed as Standard Webhooks says, with the endpoint's secret: one of the
   `webhook-signature` entries is `v1,` + base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}`;
2. its body is a `match.change` naming a fixture of the partner's matches and a seq of its log, and
   what it says of the entry (`fixture_id`, `seq`, `kind`, `target_seq`, `body`) is what the log holds;
3. its `webhook-id` is the one of that change to that endpoint (`msg_<endpoint>_<fixture>_<seq>`), and a
   second arrival of a seq is a retry: the same id and the same body as the first;
4. a seq first arrives only once every lower seq the endpoint is owed was accepted (answered 2xx):
   the next change of a match goes only after the previous one was answered;
5. at the end, the seqs the receiver accepted are exactly the ones it is owed: the log's entries
   committed from the endpoint's creation on (`scoreline.webhooks.filling`), which is the whole
   log, 1 .. version, for a match whose first entry came after the endpoint was registered.
Seqs the log committed before the endpoint existed are not owed; one that arrives anyway is judged
by rules 1 to 3 and not counted as missing or extra.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from standardwebhooks import Webhook

from devkit.soak.model import Violation

CHECK = "webhooks"
EVENT_TYPE = "match.change"


@dataclass(frozen=True)
class Received:
    """One request a receiver got, as it got it, and what it answered (0: it answered nothing)."""

    webhook_id: str | None
    timestamp: str | None
    signature: str | None
    body: bytes
    status: int

    @property
    def accepted(self) -> bool:
        return 200 <= self.status < 300


@dataclass(frozen=True)
class LogEntry:
    """One entry of a match's log (`timeline_item`) and when its commit began."""

    seq: int
    kind: str
    target_seq: int | None
    body: Any
    committed_at: datetime


@dataclass(frozen=True)
class Endpoint:
    """The receiver's registration: its endpoint id, secret and creation time."""

    receiver: str
    id: int
    secret: str
    created_at: datetime


def signature_valid(secret: str, received: Received) -> bool:
    """Rule 1, without the freshness window (the check runs minutes after the arrival)."""
    if not (received.webhook_id and received.timestamp and received.signature):
        return False
    if not received.timestamp.isdigit():
        return False
    moment = datetime.fromtimestamp(int(received.timestamp), tz=UTC)
    expected = Webhook(secret).sign(received.webhook_id, moment, received.body)
    return expected in received.signature.split(" ")


def _seq_ranges(seqs: Sequence[int]) -> list[tuple[int, int]]:
    ranges: list[tuple[int, int]] = []
    for seq in sorted(seqs):
        if ranges and seq == ranges[-1][1] + 1:
            ranges[-1] = (ranges[-1][0], seq)
        else:
            ranges.append((seq, seq))
    return ranges


def _seqs_named(first: int, last: int) -> str:
    return f"seq {first}" if first == last else f"seqs {first}-{last}"


def _parsed(body: bytes) -> tuple[int, int, dict[str, Any]] | str:
    """(fixture, seq, the whole document) of a body, or why it is not a `match.change`."""
    try:
        document = json.loads(body)
    except ValueError:
        return "its body is not JSON"
    if not isinstance(document, dict) or document.get("type") != EVENT_TYPE:
        return f"its body is not a {EVENT_TYPE}"
    fixture, seq = document.get("fixture_id"), document.get("seq")
    if not isinstance(fixture, int) or not isinstance(seq, int):
        return "its body names no fixture_id and seq"
    return fixture, seq, document


def _against_log(document: Mapping[str, Any], entry: LogEntry) -> str | None:
    said = {key: document.get(key) for key in ("kind", "target_seq", "body")}
    held = {"kind": entry.kind, "target_seq": entry.target_seq, "body": entry.body}
    wrong = [key for key in said if said[key] != held[key]]
    if not wrong:
        return None
    return "; ".join(f"its {key} is {said[key]!r}, the log has {held[key]!r}" for key in wrong)


def check_receiver(
    endpoint: Endpoint, journal: Sequence[Received], logs: Mapping[int, Sequence[LogEntry]]
) -> list[Violation]:
    """Every broken promise in one receiver's journal (see the module docstring).

    `logs` holds the log of every match of the partner's competitions, as Postgres has it after the run.
    """
    violations: list[Violation] = []
    name = endpoint.receiver

    def broken(fixture: int | str, seq: int | str, detail: str) -> None:
        violations.append(Violation(CHECK, f"{name} fixture {fixture} seq {seq}", detail))

    entries = {fixture: {entry.seq: entry for entry in log} for fixture, log in logs.items()}
    owed = {
        fixture: sorted(entry.seq for entry in log if entry.committed_at >= endpoint.created_at)
        for fixture, log in logs.items()
    }
    first: dict[tuple[int, int], dict[str, Any]] = {}
    accepted: dict[int, set[int]] = {fixture: set() for fixture in logs}
    for index, received in enumerate(journal):
        parsed = _parsed(received.body)
        if isinstance(parsed, str):
            broken("?", "?", f"request {index + 1} ({received.webhook_id}): {parsed}")
            continue
        fixture, seq, document = parsed
        if not signature_valid(endpoint.secret, received):
            broken(fixture, seq, f"the signature of {received.webhook_id} does not verify with its secret")
        expected_id = f"msg_{endpoint.id}_{fixture}_{seq}"
        if received.webhook_id != expected_id:
            broken(fixture, seq, f"webhook-id {received.webhook_id}, not {expected_id}")
        if fixture not in entries:
            broken(fixture, seq, "a match not in the partner's competitions")
            continue
        entry = entries[fixture].get(seq)
        if entry is None:
            broken(fixture, seq, "the log has no such seq")
            continue
        mismatch = _against_log(document, entry)
        if mismatch is not None:
            broken(fixture, seq, mismatch)
        earlier = first.get((fixture, seq))
        if earlier is None:
            first[(fixture, seq)] = document
            waiting = [s for s in owed[fixture] if s < seq and s not in accepted[fixture]]
            if waiting and seq in owed[fixture]:
                broken(fixture, seq, f"arrived before seq {waiting[0]} was answered 2xx")
        elif document != earlier:
            broken(fixture, seq, f"the retry {received.webhook_id} has another body than its first arrival")
        if received.accepted:
            accepted[fixture].add(seq)
    for fixture in sorted(logs):
        missing = [seq for seq in owed[fixture] if seq not in accepted[fixture]]
        for low, high in _seq_ranges(missing):
            never = "never arrived" if all((fixture, s) not in first for s in range(low, high + 1)) else ""
            violations.append(
                Violation(
                    CHECK,
                    f"{name} fixture {fixture} {_seqs_named(low, high)}",
                    never or "never accepted (answered 2xx) by the end",
                )
            )
    return violations


def not_owed(endpoint: Endpoint, logs: Mapping[int, Sequence[LogEntry]]) -> int:
    """Entries committed before the endpoint existed (reported: the check cannot ask for them)."""
    return sum(1 for log in logs.values() for entry in log if entry.committed_at < endpoint.created_at)


def complete(endpoint: Endpoint, journal: Sequence[Received], logs: Mapping[int, Sequence[LogEntry]]) -> bool:
    """Every owed seq was accepted (the catch-up wait ends on it)."""
    accepted: set[tuple[int, int]] = set()
    for received in journal:
        parsed = _parsed(received.body)
        if received.accepted and not isinstance(parsed, str):
            accepted.add((parsed[0], parsed[1]))
    return all(
        (fixture, entry.seq) in accepted
        for fixture, log in logs.items()
        for entry in log
        if entry.committed_at >= endpoint.created_at
    )
