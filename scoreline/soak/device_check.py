"""The devices' end-of-run check as pure logic: journal lines and what the phones did in, violations out.

The APNs simulator's journal file (`simulators.apns.journal_file`) is the record of what reached
a phone; the phones (`scoreline.soak.devices`) add what only they know: which matches they
followed and when that was confirmed, which update token they reported for which activity, and
when they deleted the app; Postgres adds which matches kicked off and ended and which key moments
Scoreline decided to alert (`MatchFacts`). The journal is streamed through `DeviceLedger`, which
keeps a few counters per token instead of the records (a soak's file holds millions).

Words used below:

- *accepted*: APNs answered 200 and the phone would not drop it (`dropped_by_device` empty). Only
  accepted pushes count as having reached a phone.
- *activity*: one update token the phone reported (`PUT /v1/devices/{id}/live-activities/{f}`)
  for one generation of one fixture's Live Activity.
- *key moment*: an `update` push carrying `aps.alert` (Scoreline alerts only key moments on
  updates: `domain.push_plan.pace`; the `start` and `end` alerts are checked as starts and ends).
  It is identified by (fixture, generation, `content-state.version`): one change makes one push
  with the scoreboard version it produced, sent as the same bytes to every activity (and gated in
  `effect_log` as `v<version>`/`la.alert`), so the version names the moment on every device and
  across retries. An alert trimmed away to fit 4096 bytes counts as not alerted: no alert showed.
- *dead*: a token APNs answered 410, or 400 `BadDeviceToken` (Scoreline deactivates both).
- `GRACE_S`: how long Scoreline is given to act on something before its absence is a violation
  (a late follower's start walk, a fan-out over 10,000 phones under faults). Anything that became
  due within `GRACE_S` of the horizon (when the check reads the journal) is not judged.

The rules (each violation names fixture, device and token):

1. **start**: a phone gets at most one accepted start per (fixture, generation) on its
   push-to-start token. A confirmed follow is owed a first start, of whichever generation: at
   once if a generation was running then and did not end within `GRACE_S` (a follow that meets
   the match closing may legitimately get none: the design starts followers "at once" only while
   it plays; the moment Postgres shows the match became over bounds that too, since an end that
   reached no phone leaves no mark in the journal), else at the next generation's kick-off (a
   Test followed overnight starts when play resumes); with no start in the journal at all, when Postgres says the match kicked off. It is
   judged `GRACE_S` after that moment. Each later generation is owed to a phone that got the one
   before it. Nothing is owed to a phone whose push-to-start token died, at any time (we do not
   try to tell whether the start was owed before the death), nor after the phone deleted the app.
   A start for a fixture the phone never asked to follow is a violation.
2. **key moments**: an activity gets each key moment of its fixture and generation at most once.
   It must get the key moments after the state its start showed, up to its end's state, whose
   fan-out began (its first `effect_log` claim) either after APNs took the first push for its
   token (from then on Scoreline knew the token: a skipped moment is a lost alert; by time, not
   by version, as an older routine update can reach a new token after a newer moment's walk had
   passed it) or more than `GRACE_S` after the phone reported the token (before that, the fan-out
   may have read its targets before the report). A dead or deleted token owes
   only the moments below the newest state it got. A moment whose request was on its way when
   its worker was SIGKILLed is excused, and counted (`alerts_in_doubt_at_kill`): Postgres has its
   claim `in_doubt`, marked as being sent at most `IN_FLIGHT_S` before a SIGKILL of a worker, and
   APNs answered no request carrying it for that token since the mark, or did so at most
   `ANSWER_WRITE_S` before the kill (the worker died before it could write the answer down).
   Scoreline sends an alert at most once (a second would show twice), and nothing can tell
   whether a request cut off by a kill reached APNs; an answer APNs gave longer before the kill
   proves the claim was held past its request, so that one is not excused (the soak of
   2026-12-03, seed 16, held goal alerts marked through a 429 backoff).
3. **order**: the pushes APNs answered 200 on one activity token (updates and the end, dropped by
   the phone or not) have non-decreasing `aps.timestamp`.
4. **end**: an activity gets at most one accepted `end` with an alert (the result banner); an
   end after the first without one is Scoreline sending an end again whose earlier request a
   SIGKILL left unknown (`PushInput.resent_quietly`), which the ended activity drops. One is
   due when its generation ended
   (the fixture is over in Postgres, an `end` of that or a newer generation went out, or a newer
   generation started), unless its token died or the app was deleted first. An activity reported
   while the end was going out that never got it is a violation: it would stay on the screen.
5. **dead tokens**: no push reaches APNs for a token more than `DEAD_GRACE_S` after APNs answered
   it 410 or `BadDeviceToken` (requests already in flight then are excused). A death whose
   worker was SIGKILLed at most `ANSWER_WRITE_S` after the answer, or at most
   `ANSWERED_AFTER_KILL_S` before it (the request had left; its answer found no one), died with
   it (neither Postgres nor the other workers heard of it): the pushes after it are excused, and counted
   (`deaths_lost_at_kill`), up to the one whose own 410 Scoreline learns it from again. After our own
   `/_sim/unregister`, Scoreline cannot know before APNs tells it: the first push after it gets
   the 410, and the rule applies from there.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from scoreline.soak.model import Violation

CHECK = "devices"
GRACE_S = 60.0
DEAD_GRACE_S = 2.0
IN_FLIGHT_S = 3.0
"""How long before a worker's SIGKILL a marked claim counts as in flight (rule 2): its request
leaves within `SendPolicy.look_kept` (2 s) of the look that marked it or never, and a request
that had not left by then has its mark taken off (`activities.push.look_lapse`), a write given
`SENDING_FENCE_MARGIN_S` (1 s) as the activity's mark is. Kept apart from those settings: the
check must not follow a change in what it checks."""
ANSWER_WRITE_S = 1.0
"""How long after APNs answered a marked claim's request a worker's SIGKILL still counts as
cutting it off before the answer was written (rule 2): a worker unmarks it right after the
answer, but under the soak's load that write can take a while (seed 17 was killed about 0.3 s
after a 500)."""

ANSWERED_AFTER_KILL_S = 2.0
"""How long after a worker's SIGKILL APNs can still answer one of its requests (rule 5): a request
written before the kill still reaches APNs, and the answer finds no one to read it (the 30-minute
soak's seed 25: a 410 journalled about a second after its worker's SIGKILL, the next attempt sent
the update to the token again and learnt the death from it)."""

START_MISSING = "start never reached the phone"
START_TWICE = "start reached the phone"
START_UNFOLLOWED = "start for a match the phone never followed"
ALERT_MISSING = "key moment never alerted"
ALERT_TWICE = "key moment alerted"
OUT_OF_ORDER = "update out of timestamp order"
END_MISSING = "no end reached the activity"
END_TWICE = "end's alert reached the activity"
AFTER_DEAD = "sent to a dead token"


@dataclass(frozen=True)
class Push:
    """One journal `push` line, reduced to what the rules read."""

    seq: int
    at: float
    token: str
    status: int | None
    reason: str | None = None
    dropped: str | None = None
    event: str | None = None
    timestamp: float | None = None
    version: int | None = None
    alert: bool = False
    fixture_id: int | None = None
    """`attributes.fixtureId` (starts only)."""
    generation: int = 1
    """`attributes.generation` (starts only; absent = 1)."""

    @property
    def accepted(self) -> bool:
        return self.status == 200 and self.dropped is None

    @property
    def kills(self) -> bool:
        """APNs said the token is gone: Scoreline must never use it again."""
        return self.status == 410 or (self.status == 400 and self.reason == "BadDeviceToken")


@dataclass(frozen=True)
class Unregister:
    """One journal `unregister` line: the token answers 410 after push `after_seq`."""

    after_seq: int
    at: float
    token: str


@dataclass(frozen=True)
class ActivityReport:
    """An update token a phone reported, and when the API confirmed it."""

    token: str
    fixture_id: int
    generation: int
    reported_at: float


@dataclass(frozen=True)
class PhoneRecord:
    """What one phone did: its device id, tokens, confirmed follows and reports, app deletion."""

    device: str
    push_to_start_token: str
    follows: Mapping[int, float]
    """Fixture id → when the API confirmed the follow (2xx)."""
    asked: frozenset[int]
    """Every fixture the phone tried to follow (confirmed or not: a lost answer may have followed)."""
    activities: tuple[ActivityReport, ...] = ()
    deleted_at: float | None = None


@dataclass(frozen=True)
class MatchFacts:
    """From Postgres: matches that kicked off, matches over, the key moments Scoreline alerted and
    those left in doubt; from the soak's stack, when it SIGKILLed a worker."""

    kicked_off: frozenset[int] = frozenset()
    over: frozenset[int] = frozenset()
    alerts: Mapping[tuple[int, int], Mapping[int, float]] = field(default_factory=dict)
    """(fixture, generation) → alert version → when its fan-out first claimed a target."""
    over_at: Mapping[int, float] = field(default_factory=dict)
    """Over fixture → epoch of its first change to an over state (not of the board's last
    change: a ball corrected after the result moves that, and seed 5 judged 647 follows of a
    finished match as owed a start)."""
    in_doubt: Mapping[tuple[str, int], float] = field(default_factory=dict)
    """(activity token, alert version) → when its claim, now `in_doubt`, was marked as being sent."""
    worker_kills: tuple[float, ...] = ()
    """When each SIGKILL of a worker was sent (epoch seconds)."""
    claims: Mapping[tuple[str, int], str] | None = None
    """(activity token, alert version) → how its `effect_log` row stands, in words: named in a
    missing alert's violation, so a failed run's last lines tell why (a CI log keeps only those);
    None when Postgres was not read."""
    starts: Mapping[tuple[str, int], str] | None = None
    """(device id, fixture) → how the phone's start stands in Postgres, in words (its follow, its
    push-to-start token, its activities and their `la.start` claims, the match's followers-waiting
    mark): named in a missing start's violation, for the same reason as `claims`; None when
    Postgres was not read."""

    def killed_around(self, answered_at: float) -> bool:
        """Whether a worker was SIGKILLed at most `ANSWERED_AFTER_KILL_S` before APNs answered at
        `answered_at` or at most `ANSWER_WRITE_S` after: the answer may have died with it,
        unwritten."""
        return any(
            answered_at - ANSWERED_AFTER_KILL_S <= killed <= answered_at + ANSWER_WRITE_S
            for killed in self.worker_kills
        )

    def killed_in_flight(self, token: str, version: int, answered_at: float | None) -> bool:
        """Whether the alert's claim was marked at most `IN_FLIGHT_S` before a worker's SIGKILL
        that cut its request off: APNs had not answered it since the mark (`answered_at`, its
        latest answer), or answered it at most `ANSWER_WRITE_S` before the kill."""
        marked_at = self.in_doubt.get((token, version))
        if marked_at is None:
            return False
        return any(
            marked_at <= killed <= marked_at + IN_FLIGHT_S
            and (answered_at is None or answered_at < marked_at or killed - answered_at <= ANSWER_WRITE_S)
            for killed in self.worker_kills
        )


def parse_line(line: str) -> Push | Unregister | None:
    """A journal line as a record; None for a line that is not whole JSON (the one being written)."""
    try:
        document = json.loads(line)
    except json.JSONDecodeError:
        return None
    if not isinstance(document, dict):
        return None
    at = datetime.fromisoformat(str(document.get("received_at"))).timestamp()
    if document.get("kind") == "unregister":
        return Unregister(int(document["after_seq"]), at, str(document["token"]).lower())
    token = document.get("token")
    if not isinstance(token, str):
        return None
    return _push(document, token.lower(), at)


def _push(document: dict[str, Any], token: str, at: float) -> Push:
    payload = document.get("payload")
    aps = payload.get("aps") if isinstance(payload, dict) else None
    aps = aps if isinstance(aps, dict) else {}
    state = aps.get("content-state")
    attributes = aps.get("attributes")
    attributes = attributes if isinstance(attributes, dict) else {}
    version = state.get("version") if isinstance(state, dict) else None
    timestamp = aps.get("timestamp")
    fixture_id = attributes.get("fixtureId")
    return Push(
        seq=int(document["seq"]),
        at=at,
        token=token,
        status=document.get("status"),
        reason=document.get("reason"),
        dropped=document.get("dropped_by_device"),
        event=aps.get("event"),
        timestamp=float(timestamp) if isinstance(timestamp, int | float) else None,
        version=version if isinstance(version, int) else None,
        alert="alert" in aps,
        fixture_id=fixture_id if isinstance(fixture_id, int) else None,
        generation=int(attributes.get("generation") or 1),
    )


@dataclass
class _TokenLog:
    """What one token of ours was sent, as counters."""

    dead: Push | None = None
    after_dead: list[tuple[Push, Push]] = field(default_factory=list)
    """Pushes more than `DEAD_GRACE_S` after the token's latest death, each with that death."""
    last_timestamp: float | None = None
    disorder: tuple[float, float, int] | None = None
    """The first regression: (newest timestamp before, the older one sent, its seq)."""
    first_at: float | None = None
    """When APNs took the first update or end for it: from then on Scoreline knew the token."""
    max_version: int | None = None
    alerts: Counter[int] = field(default_factory=Counter)
    answered_alerts: dict[int, float] = field(default_factory=dict)
    """Alert version → when APNs last answered a request for it, whatever its status."""
    end_versions: list[int | None] = field(default_factory=list)
    end_alerts: int = 0
    updates: int = 0
    starts: Counter[tuple[int, int]] = field(default_factory=Counter)
    start_times: dict[tuple[int, int], list[float]] = field(default_factory=dict)
    start_versions: dict[tuple[int, int], int | None] = field(default_factory=dict)
    pushes: int = 0


class DeviceLedger:
    """Streams the journal, keeping per token of ours only what the rules need."""

    def __init__(self, phones: Iterable[PhoneRecord]) -> None:
        self.phones = tuple(phones)
        self._starters = {phone.push_to_start_token.lower() for phone in self.phones}
        self._activities = {
            report.token.lower(): report for phone in self.phones for report in phone.activities
        }
        self._logs: dict[str, _TokenLog] = {}
        self._kickoffs: dict[tuple[int, int], float] = {}
        self._alerts: dict[tuple[int, int], dict[int, float]] = {}
        self._ends: dict[tuple[int, int], float] = {}
        self.unregistered = 0
        self.in_doubt_at_kill = 0
        """Missing alerts excused as in flight when their worker was killed (rule 2)."""
        self.deaths_lost_at_kill = 0
        """Pushes to a dead token excused: its death's worker was killed before writing it (rule 5)."""

    def add(self, entry: Push | Unregister) -> None:
        """Take one journal record (in journal order)."""
        if isinstance(entry, Unregister):
            if entry.token in self._starters or entry.token in self._activities:
                self.unregistered += 1
            return
        if entry.token in self._starters:
            self._add_start(entry, self._log(entry))
        elif entry.token in self._activities:
            self._add_activity_push(entry, self._log(entry), self._activities[entry.token])

    def _log(self, push: Push) -> _TokenLog:
        log = self._logs.setdefault(push.token, _TokenLog())
        log.pushes += 1
        if log.dead is not None and push.at > log.dead.at + DEAD_GRACE_S:
            log.after_dead.append((push, log.dead))
            if push.kills:
                log.dead = push  # learnt again: the pushes after it are judged by this death
        elif log.dead is None and push.kills:
            log.dead = push
        return log

    def _add_start(self, push: Push, log: _TokenLog) -> None:
        if push.event != "start" or push.fixture_id is None or push.status != 200:
            return
        key = (push.fixture_id, push.generation)
        self._kickoffs.setdefault(key, push.at)
        if push.accepted:
            log.starts[key] += 1
            log.start_times.setdefault(key, []).append(push.at)
            log.start_versions.setdefault(key, push.version)

    def _add_activity_push(self, push: Push, log: _TokenLog, report: ActivityReport) -> None:
        key = (report.fixture_id, report.generation)
        if push.event == "update" and push.alert and push.version is not None:
            self._alerts.setdefault(key, {}).setdefault(push.version, push.at)
            log.answered_alerts[push.version] = max(push.at, log.answered_alerts.get(push.version, push.at))
        if push.event == "end":
            self._ends.setdefault(key, push.at)
        if push.status != 200 or push.event not in ("update", "end"):
            return
        if push.timestamp is not None:
            if (
                log.last_timestamp is not None
                and push.timestamp < log.last_timestamp
                and log.disorder is None
            ):
                log.disorder = (log.last_timestamp, push.timestamp, push.seq)
            log.last_timestamp = max(push.timestamp, log.last_timestamp or push.timestamp)
        log.first_at = push.at if log.first_at is None else log.first_at
        if push.version is not None:
            log.max_version = max(push.version, log.max_version or push.version)
        if not push.accepted:
            return
        if push.event == "end":
            log.end_versions.append(push.version)
            log.end_alerts += push.alert
        else:
            log.updates += 1
            if push.alert and push.version is not None:
                log.alerts[push.version] += 1

    # --- the verdict ---------------------------------------------------------------------------

    def violations(self, facts: MatchFacts, horizon: float) -> list[Violation]:
        """Every broken rule (module docstring), judged as of `horizon` (epoch seconds)."""
        found: list[Violation] = []
        for phone in self.phones:
            found += self._start_violations(phone, facts, horizon)
            for report in phone.activities:
                found += self._activity_violations(phone, report, facts, horizon)
        for token, log in self._logs.items():
            late = [(push, death) for push, death in log.after_dead if not facts.killed_around(death.at)]
            self.deaths_lost_at_kill += len(log.after_dead) - len(late)
            if late:
                death = late[0][1]
                found.append(
                    Violation(
                        CHECK,
                        f"token {_short(token)}",
                        f"{AFTER_DEAD}: {len(late)} pushes after APNs answered {death.status} "
                        f"{death.reason} at seq {death.seq}",
                    )
                )
        return found

    def figures(self) -> dict[str, int]:
        """Counts from the journal: pushes to our tokens, accepted starts, updates and ends; and,
        once `violations` ran, the alerts it excused as in flight at a kill and the pushes to
        dead tokens whose death a kill cut off."""
        logs = self._logs.values()
        return {
            "pushes": sum(log.pushes for log in logs),
            "starts": sum(sum(log.starts.values()) for log in logs),
            "updates": sum(log.updates for log in logs),
            "ends": sum(len(log.end_versions) for log in logs),
            "unregistered": self.unregistered,
            "alerts_in_doubt_at_kill": self.in_doubt_at_kill,
            "deaths_lost_at_kill": self.deaths_lost_at_kill,
        }

    def _start_violations(self, phone: PhoneRecord, facts: MatchFacts, horizon: float) -> list[Violation]:
        log = self._logs.get(phone.push_to_start_token.lower(), _TokenLog())
        found: list[Violation] = []
        for (fixture, generation), count in sorted(log.starts.items()):
            subject = _subject(fixture, phone, phone.push_to_start_token, generation)
            if fixture not in phone.asked:
                found.append(Violation(CHECK, subject, START_UNFOLLOWED))
            if count > 1:
                found.append(
                    Violation(
                        CHECK,
                        subject,
                        f"{START_TWICE} {count} times {_times(log.start_times[(fixture, generation)])}, "
                        f"{_reported(phone, fixture, generation)}",
                    )
                )
        for fixture, chance in self._follows_due(phone, log, facts, horizon):
            if not any(count for (f, _), count in log.starts.items() if f == fixture):
                detail = f"{START_MISSING}: owed {_times([chance])}, follow confirmed {_times([phone.follows[fixture]])}"
                found.append(
                    Violation(
                        CHECK,
                        _subject(fixture, phone, phone.push_to_start_token, 1),
                        detail + _start_words(phone, fixture, facts),
                    )
                )
        for fixture, generation, kickoff in self._renewals_due(phone, log, horizon):
            if log.starts[(fixture, generation)] == 0:
                subject = _subject(fixture, phone, phone.push_to_start_token, generation)
                detail = f"{START_MISSING}: owed {_times([kickoff])}"
                found.append(Violation(CHECK, subject, detail + _start_words(phone, fixture, facts)))
        return found

    def _follows_due(
        self, phone: PhoneRecord, log: _TokenLog, facts: MatchFacts, horizon: float
    ) -> list[tuple[int, float]]:
        """The followed fixtures owed a first start, of whichever generation (rule 1), each with
        the moment it became owed."""
        if log.dead is not None:
            return []
        due: list[tuple[int, float]] = []
        for fixture, followed_at in sorted(phone.follows.items()):
            chance = self._first_chance(fixture, followed_at, facts)
            if chance is not None and _owed(chance, phone, horizon):
                due.append((fixture, chance))
        return due

    def _first_chance(self, fixture: int, followed_at: float, facts: MatchFacts) -> float | None:
        """When Scoreline could first start a follow confirmed at `followed_at`: then, if a
        generation was running and did not end within `GRACE_S`; else the next generation's
        kick-off; None if none came (with no start in the journal at all, Postgres says whether
        the match kicked off)."""
        over_at = facts.over_at.get(fixture)
        if over_at is not None and followed_at >= over_at - GRACE_S:
            return None  # the follow met the match closing (or over): no start is owed
        generations = sorted((g, at) for (f, g), at in self._kickoffs.items() if f == fixture)
        if not generations:
            return followed_at if fixture in facts.kicked_off else None
        for generation, kickoff in generations:
            ended = self._ends.get((fixture, generation))
            if kickoff > followed_at:
                return kickoff
            if ended is None or ended > followed_at + GRACE_S:
                return followed_at
        return None

    def _renewals_due(
        self, phone: PhoneRecord, log: _TokenLog, horizon: float
    ) -> list[tuple[int, int, float]]:
        """The generations after the first this phone is owed (each one started after one it
        got), with their kick-offs."""
        if log.dead is not None:
            return []
        return [
            (fixture, generation, kickoff)
            for (fixture, generation), kickoff in sorted(self._kickoffs.items())
            if generation > 1 and log.starts[(fixture, generation - 1)] > 0 and _owed(kickoff, phone, horizon)
        ]

    def _activity_violations(
        self, phone: PhoneRecord, report: ActivityReport, facts: MatchFacts, horizon: float
    ) -> list[Violation]:
        log = self._logs.get(report.token.lower(), _TokenLog())
        subject = _subject(report.fixture_id, phone, report.token, report.generation)
        found = [
            Violation(CHECK, subject, f"{ALERT_TWICE} {count} times: version {version}")
            for version, count in sorted(log.alerts.items())
            if count > 1
        ]
        for version in self._alerts_due(phone, report, log, facts, horizon):
            if log.alerts[version]:
                continue
            if facts.killed_in_flight(report.token.lower(), version, log.answered_alerts.get(version)):
                self.in_doubt_at_kill += 1
            else:
                detail = f"{ALERT_MISSING}: version {version}"
                if facts.claims is not None:
                    detail += f" (claim: {facts.claims.get((report.token.lower(), version), 'none')})"
                found.append(Violation(CHECK, subject, detail))
        if log.disorder is not None:
            newest, older, seq = log.disorder
            found.append(
                Violation(CHECK, subject, f"{OUT_OF_ORDER}: {older:.15g} after {newest:.15g} (seq {seq})")
            )
        if log.end_alerts > 1:
            found.append(Violation(CHECK, subject, f"{END_TWICE} {log.end_alerts} times"))
        elif not log.end_versions and self._end_due(phone, report, log, facts, horizon):
            found.append(Violation(CHECK, subject, END_MISSING))
        return found

    def _alerts_due(
        self, phone: PhoneRecord, report: ActivityReport, log: _TokenLog, facts: MatchFacts, horizon: float
    ) -> list[int]:
        """The key-moment versions this activity is owed (rule 2)."""
        key = (report.fixture_id, report.generation)
        # A moment's fan-out began at its first claim (Postgres) or, for one Postgres does not
        # show, its first push (the journal): whichever is earlier, as a claim precedes its push.
        claimed, pushed = facts.alerts.get(key, {}), self._alerts.get(key, {})
        moments = {
            version: min(claimed.get(version, at), pushed.get(version, at))
            for version, at in {**claimed, **pushed}.items()
        }
        starter = self._logs.get(phone.push_to_start_token.lower(), _TokenLog())
        shown = starter.start_versions.get(key)
        end = log.end_versions[0] if log.end_versions else None
        gone = log.dead is not None or phone.deleted_at is not None
        due: list[int] = []
        for version, first_at in sorted(moments.items()):
            known = (log.first_at is not None and first_at > log.first_at) or (
                first_at > report.reported_at + GRACE_S
            )
            if (
                known
                and (shown is None or version > shown)
                and (end is None or version <= end)
                and (not gone or (log.max_version is not None and version < log.max_version))
                and first_at + GRACE_S <= horizon
            ):
                due.append(version)
        return due

    def _end_due(
        self, phone: PhoneRecord, report: ActivityReport, log: _TokenLog, facts: MatchFacts, horizon: float
    ) -> bool:
        """Whether this activity is owed an end (rule 4)."""
        if log.dead is not None:
            return False
        fixture, generation = report.fixture_id, report.generation
        ended = [at for (f, g), at in self._ends.items() if f == fixture and g >= generation]
        ended += [at for (f, g), at in self._kickoffs.items() if f == fixture and g > generation]
        if not ended:
            return report.fixture_id in facts.over and _owed(report.reported_at, phone, horizon)
        return _owed(min(ended), phone, horizon)


def _owed(since: float, phone: PhoneRecord, horizon: float) -> bool:
    """Something that became due at `since` is judged once Scoreline had `GRACE_S` for it, and
    only if the app was still installed by then."""
    deadline = since + GRACE_S
    return deadline <= horizon and (phone.deleted_at is None or phone.deleted_at > deadline)


def _subject(fixture: int, phone: PhoneRecord, token: str, generation: int) -> str:
    name = f"fixture {fixture} device {phone.device} token {_short(token)}"
    return name if generation == 1 else f"{name} generation {generation}"


def clock(epoch: float) -> str:
    """A moment as UTC clock time, to find it in the workers' logs."""
    return datetime.fromtimestamp(epoch, UTC).strftime("%H:%M:%S.%f")[:-3]


def _times(moments: Iterable[float]) -> str:
    return "at " + ", ".join(clock(at) for at in moments)


def _reported(phone: PhoneRecord, fixture: int, generation: int) -> str:
    """When the phone's report of that activity's token was accepted, if it was: a start sent
    again after its doubt (`START_DOUBT_GRACE_S`) means no report had come by then."""
    for report in phone.activities:
        if (report.fixture_id, report.generation) == (fixture, generation):
            return f"token reported {_times([report.reported_at])}"
    return "token never reported"


def _start_words(phone: PhoneRecord, fixture: int, facts: MatchFacts) -> str:
    """How Postgres shows the phone's start, when it was read (`MatchFacts.starts`)."""
    if facts.starts is None:
        return ""
    return f" (postgres: {facts.starts.get((phone.device, fixture), 'no follow')})"


def _short(token: str) -> str:
    return f"{token[:12]}…"
