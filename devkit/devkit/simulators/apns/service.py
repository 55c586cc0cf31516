"""Decides the answer to one push, the way APNs would, and writes it to the journal.

Transport-free: the HTTP/2 layer hands over a complete request and gets back what to send, so the
rules can be read in one place and in Apple's order.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from devkit.simulators.apns import rules
from devkit.simulators.apns.faults import Fault, FaultAction, FaultInjector
from devkit.simulators.apns.journal import Journal, PushRecord
from devkit.simulators.apns.live_activity import (
    is_update_older_than,
    live_activity_problem,
    parse_payload,
    timestamp_of,
)
from devkit.simulators.apns.provider_token import ConnectionTokenState, ProviderTokenVerifier, TokenClaims


@dataclass(frozen=True)
class Answer:
    """What to do with one stream: answer it, or (for faults) end the whole connection."""

    apns_id: str
    status: int | None = 200
    reason: str | None = None
    timestamp_ms: int | None = None
    delay_s: float = 0.0
    action: FaultAction = "respond"

    def headers(self, body: bytes) -> list[tuple[str, str]]:
        """Response headers: `apns-id` always (aioapns matches on it), JSON type on errors."""
        headers = [(":status", str(self.status)), ("apns-id", self.apns_id)]
        if body:
            headers += [("content-type", "application/json"), ("content-length", str(len(body)))]
        else:
            # Sandbox APNs adds this id for the Push Notifications Console's delivery log.
            headers.append(("apns-unique-id", str(uuid.uuid4())))
        return headers

    def body(self) -> bytes:
        """Empty on success; otherwise `{"reason": ...}` (plus `timestamp` in ms for 410)."""
        if self.status == 200 or self.reason is None:
            return b""
        document: dict[str, Any] = {"reason": self.reason}
        if self.timestamp_ms is not None:
            document["timestamp"] = self.timestamp_ms
        return json.dumps(document, separators=(",", ":")).encode()


@dataclass(frozen=True)
class _Verdict:
    rejection: rules.Rejection | None = None
    claims: TokenClaims | None = None
    dropped_by_device: str | None = None


class PushService:
    """APNs' decision logic plus the simulator's state: dead tokens, faults, journal."""

    def __init__(
        self,
        *,
        bundle_id: str,
        verifier: ProviderTokenVerifier,
        journal: Journal,
        faults: FaultInjector,
        strict_payloads: bool,
    ) -> None:
        self._bundle_id = bundle_id
        self._verifier = verifier
        self._journal = journal
        self._faults = faults
        self._strict = strict_payloads
        self._unregistered: dict[str, int] = {}
        # Newest Live Activity `aps.timestamp` accepted per token: the device discards older updates.
        self._newest_timestamp: dict[str, float] = {}

    @property
    def unregistered_count(self) -> int:
        """How many tokens answer 410."""
        return len(self._unregistered)

    def unregister(self, token: str, timestamp_ms: int | None = None) -> int:
        """Make `token` answer 410 `Unregistered` from now on; returns the timestamp reported."""
        stamp = int(time.time() * 1000) if timestamp_ms is None else timestamp_ms
        self._unregistered[token.lower()] = stamp
        self._journal.unregistered(token.lower(), stamp)
        return stamp

    def handle(
        self, request: rules.PushRequest, *, connection_id: int, stream_id: int, auth: ConnectionTokenState
    ) -> Answer:
        """Answer one complete request and journal it."""
        apns_id = request.header("apns-id") or str(uuid.uuid4())
        token = request.token
        payload, payload_problem = parse_payload(request.body)
        fault = self._faults.take(token)
        if fault is not None and (fault.action != "respond" or fault.status is not None):
            answer = self._faulty_answer(fault, apns_id)
            verdict = _Verdict()
        else:
            verdict = self._judge(request, auth, payload, payload_problem)
            answer = self._answer(verdict, apns_id, token)
            if fault is not None:
                answer = replace(answer, delay_s=fault.latency_ms / 1000)
        self._journal.record(
            PushRecord(
                seq=self._journal.next_seq(),
                received_at=datetime.now(UTC).isoformat(timespec="milliseconds"),
                connection_id=connection_id,
                stream_id=stream_id,
                method=request.method,
                path=request.path,
                token=token,
                headers={name: value for name, value in request.headers if name != "authorization"},
                jwt=verdict.claims,
                payload=None if payload_problem else payload,
                payload_bytes=request.body_size,
                apns_id=apns_id,
                status=answer.status,
                reason=answer.reason,
                dropped_by_device=verdict.dropped_by_device,
                fault_id=None if fault is None else fault.id,
                latency_ms=int(answer.delay_s * 1000),
            )
        )
        return answer

    def _answer(self, verdict: _Verdict, apns_id: str, token: str | None) -> Answer:
        if verdict.rejection is None:
            return Answer(apns_id)
        status, reason = verdict.rejection.status, verdict.rejection.reason
        timestamp = self._unregistered.get((token or "").lower()) if status == 410 else None
        return Answer(apns_id, status, reason, timestamp)

    @staticmethod
    def _faulty_answer(fault: Fault, apns_id: str) -> Answer:
        timestamp = int(time.time() * 1000) if fault.status == 410 else None
        return Answer(apns_id, fault.status, fault.reason, timestamp, fault.latency_ms / 1000, fault.action)

    def _judge(
        self, request: rules.PushRequest, auth: ConnectionTokenState, payload: Any, problem: str | None
    ) -> _Verdict:
        """Apple's checks in Apple's order; the first failure decides."""
        rejection = rules.check_route(request) or rules.check_headers(request)
        token = request.token
        if rejection is not None or token is None:
            return _Verdict(rejection)
        rejection = rules.check_device_token(token)
        if rejection is not None:
            return _Verdict(rejection)
        checked = self._verifier.check(request.header("authorization"), auth)
        if checked.reason is not None:
            return _Verdict(rules.Rejection(checked.status, checked.reason), checked.claims)
        rejection = (
            rules.check_topic(request, self._bundle_id)
            or self._check_registered(token)
            or rules.check_payload_size(request)
        )
        if rejection is not None:
            return _Verdict(rejection, checked.claims)
        return self._judge_payload(request, token.lower(), payload, problem, checked.claims)

    def _check_registered(self, token: str) -> rules.Rejection | None:
        return rules.Rejection(410, "Unregistered") if token.lower() in self._unregistered else None

    def _judge_payload(
        self,
        request: rules.PushRequest,
        token: str,
        payload: Any,
        problem: str | None,
        claims: TokenClaims | None,
    ) -> _Verdict:
        """What APNs never checks but the phone does: reject it (strict) or just note it."""
        live_activity = request.header("apns-push-type") == "liveactivity"
        if problem is None and live_activity:
            problem = live_activity_problem(payload)
        if problem is not None:
            if self._strict:
                return _Verdict(rules.Rejection(400, problem), claims)
            return _Verdict(None, claims, problem)
        if live_activity:
            return _Verdict(None, claims, self._out_of_order(payload, token))
        return _Verdict(None, claims)

    def _out_of_order(self, payload: dict[str, Any], token: str) -> str | None:
        """`StaleTimestamp` for an update older than the newest seen for the token.

        Never a rejection, even in strict mode: concurrent or retried sends legitimately arrive
        out of order, and the device simply keeps the newest state.
        """
        newest = self._newest_timestamp.get(token)
        if is_update_older_than(payload, newest):
            return "StaleTimestamp"
        timestamp = timestamp_of(payload)
        if timestamp is not None and (newest is None or timestamp > newest):
            self._newest_timestamp[token] = timestamp
        return None
