"""The devices' end-of-run check as pure logic: what each phone keeps, against what the matches
published.

Three records meet here. The APNs simulator's journal (`devkit.simulators.apns.journal_file`) is what
reached a phone; the phones (`devkit.soak.devices`) add what only they know: the follows the API
confirmed, each update token they reported for an activity (or had refused), the tokens they
rotated, the app deleted; Postgres adds what each match published (`la_push`: every start, update
and end with its stamp, which is its `aps.timestamp`, its content-state version, its alert and its
stale date). The soak's fault records add when a worker was killed or paused and when APNs or
Postgres was down. The journal is streamed through `DeviceLedger`, which keeps only the accepted
pushes to the phones' own tokens.

A phone is modelled as ActivityKit behaves (`phone_view`): an accepted start on the push-to-start
token creates the activity, which then takes pushes on whichever update token the app reported
for it; it shows the push with the newest `aps.timestamp`, drops an older one (with its alert),
and once it shows an end it takes nothing more. The order requests reached APNs in is not judged,
nor what was sent to a dead token: a phone sees neither.

Words used below:

- *accepted*: APNs answered 200 and the simulator's phone did not drop it (`dropped_by_device`).
- *dead*: APNs answered the token 410 or 400 `BadDeviceToken`, or the token was unregistered at
  the simulator (the app was deleted, or the phone rotated the token).
- *activity*: one (device, fixture, generation); its tokens are every update token the phone made
  for it, the newest last.
- *key moment*: a published `update` carrying an alert, named (fixture, generation, content-state
  version). The alert a push carries is matched to the published one by its text (an alert rides on
  the next request, with the newest state); one trimmed to fit 4096 bytes by its prefix.
- *cut*: `HORIZON_GRACE_S` before the check. Only what was owed before the cut is judged.

The rules (each violation names fixture, device and token):

1. **start**: at most one accepted start per (device, fixture, generation); a second is excused
   (and counted, `starts_again_unreported`) if the phone's report of the first's token had not been
   confirmed when the second reached APNs: Scoreline resends a start whose outcome it lost only when
   no report came. A confirmed follow is owed a start of the generation running when it was
   confirmed and of every later one (a follow overnight: the next one), unless the push-to-start
   token died or the app was deleted. It is judged only if the generation ran, from the follow on,
   for `HORIZON_GRACE_S` while APNs and Postgres were up: a follow as the whistle blows, or while
   nothing could be sent, may meet the end instead. A start for a fixture the phone never asked to
   follow is a violation.
2. **what the phone shows**: an activity whose newest token is alive, reported before the cut, on
   a phone that kept the app, shows the newest state published before the cut for its generation:
   if that is an end (of its generation or a newer one), it shows an end with that end's final
   content-state version, however late its token was reported; otherwise a state at least as new.
3. **alerts**: an activity shows each key moment's alert at most once. It is owed the alert of a
   key moment published before the cut while it had a live, reported token, unless the first
   accepted push to it after the publish (with that moment's stamp or newer) carries the alert of
   that or a newer moment (where that push came quietly before the stale date, the first later
   push with an alert counts instead if it came within `HORIZON_GRACE_S` and its alert is no newer
   than the quiet push's state: a drainer in doubt sends the state alone first; if instead the
   token died or the app went within that time, nothing could show the alert after:
   `alerts_lost_token_dead`) (`alerts_replaced`: the phone showed the newer one), or arrived after the
   moment's own `stale_date` (`alerts_expired`), or its outcome may have been lost between the
   publish and that push: APNs answered nothing to a request carrying it (the connection dropped
   with it: `alerts_lost_unanswered`), or after the publish and before that push a worker was
   SIGKILLed or SIGSTOPped, or APNs began dropping every connection mid-request
   (`alerts_lost_at_interruption`: only what was on its way when the interruption began can be cut
   off, so one already under way excuses nothing). Scoreline then sends the state without the
   alert, so that no alert shows twice.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from devkit.soak.model import Violation

CHECK = "devices"
HORIZON_GRACE_S = 120.0
"""How long a user gives the system to put their phone right: two minutes after a push was
published, a follow confirmed or a token reported (the run waits as long after its last fault
before checking). It is a user's patience, not derived from any delay of the delivery code (its
lease, backoff cap or start grace): if those grew past it, phones would be wrong for longer than
a user accepts, and the soak should say so."""

START_MISSING = "start never reached the phone"
START_TWICE = "start reached the phone again after its token report was confirmed"
START_UNFOLLOWED = "start for a match the phone never followed"
END_MISSING = "the phone does not show the end"
STATE_BEHIND = "the phone shows an older state"
ALERT_MISSING = "key moment's alert never shown"
ALERT_TWICE = "key moment's alert shown"

FIGURES = (
    "pushes",
    "starts",
    "updates",
    "ends",
    "unregistered",
    "starts_again_unreported",
    "alerts_replaced",
    "alerts_expired",
    "alerts_lost_unanswered",
    "alerts_lost_token_dead",
    "alerts_lost_at_interruption",
)
"""The ledger's figures, in the report's order."""

Alert = tuple[str, str]
"""An alert's (title, body); a bare string alert is its body."""


@dataclass(frozen=True, slots=True)
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
    alert: Alert | None = None
    fixture_id: int | None = None
    """`attributes.fixtureId` (starts only)."""
    generation: int = 1
    """`attributes.generation` (starts only; absent = 1)."""

    @property
    def accepted(self) -> bool:
        return self.status == 200 and self.dropped is None

    @property
    def kills(self) -> bool:
        """APNs said the token is gone."""
        return self.status == 410 or (self.status == 400 and self.reason == "BadDeviceToken")


@dataclass(frozen=True)
class Unregister:
    """One journal `unregister` line: the token answers 410 after push `after_seq`."""

    after_seq: int
    at: float
    token: str


@dataclass(frozen=True)
class ActivityReport:
    """An update token a phone made for one activity, and when the API answered its report."""

    token: str
    fixture_id: int
    generation: int
    reported_at: float
    refused: int | None = None
    """The API's final status when it refused the report: the phone still shows the activity."""


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
    """Every report, in the order the phone made them (a rotated token's new one after the old)."""
    deleted_at: float | None = None


@dataclass(frozen=True)
class Published:
    """One `la_push` row: a push a match published."""

    fixture_id: int
    stamp: float
    event: str
    generation: int
    version: int | None
    alert: Alert | None
    stale_date: float
    at: float
    """When it was published (`created_at`, epoch seconds)."""


@dataclass(frozen=True)
class Span:
    """A stretch of time (epoch seconds); an instant one for a SIGKILL."""

    began: float
    ended: float

    def began_within(self, began: float, ended: float) -> bool:
        return began <= self.began <= ended


@dataclass(frozen=True)
class MatchFacts:
    """From Postgres, what the matches published; from the soak's fault records, the workers'
    interruptions and the outages of APNs and Postgres."""

    published: tuple[Published, ...] = ()
    interruptions: tuple[Span, ...] = ()
    """Each SIGKILL (an instant) and SIGSTOP (until its SIGCONT) of a worker, and each APNs outage
    that drops connections mid-request: what began when a request was on its way may cut it off."""
    outages: tuple[Span, ...] = ()
    """When APNs answered nothing useful or Postgres was down: no start could go then."""
    words: Mapping[tuple[str, int], str] | None = None
    """(device id, fixture) → how Postgres shows the follow and its activities, in words: named in
    a violation, so a failed run's last lines tell why (a CI log keeps only those); None when
    Postgres was not read."""


@dataclass(frozen=True)
class Shown:
    """What an activity shows: the newest push it took."""

    timestamp: float
    event: str
    version: int | None


def phone_view(start: Push | None, pushes: Iterable[Push]) -> tuple[Shown | None, list[Push]]:
    """What an activity created by `start` shows after taking `pushes` (accepted, to any of its
    tokens), and the pushes it took, in arrival order: an older `timestamp` than the one shown is
    dropped, and nothing is taken after an end."""
    shown = None
    if start is not None and start.timestamp is not None:
        shown = Shown(start.timestamp, "start", start.version)
    taken: list[Push] = []
    for push in sorted(pushes, key=lambda push: push.seq):
        if push.timestamp is None or push.event is None:
            continue
        if shown is not None and (shown.event == "end" or push.timestamp < shown.timestamp):
            continue
        shown = Shown(push.timestamp, push.event, push.version)
        taken.append(push)
    return shown, taken


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


def alert_of(value: object) -> Alert | None:
    """An `aps.alert` (or `la_push.alert`) as (title, body)."""
    if isinstance(value, str):
        return ("", value)
    if isinstance(value, dict):
        return (str(value.get("title") or ""), str(value.get("body") or ""))
    return None


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
        alert=alert_of(aps.get("alert")),
        fixture_id=fixture_id if isinstance(fixture_id, int) else None,
        generation=int(attributes.get("generation") or 1),
    )


@dataclass
class _Match:
    """One fixture's published pushes, by stamp."""

    pushes: list[Published] = field(default_factory=list)

    def starts(self) -> dict[int, float]:
        """Generation → when its start was published."""
        found: dict[int, float] = {}
        for push in self.pushes:
            if push.event == "start":
                found.setdefault(push.generation, push.at)
        return found

    def closed(self, generation: int) -> float | None:
        """When the generation ended: an end of it or a newer one, or a newer one's start."""
        return min(
            (
                push.at
                for push in self.pushes
                if (push.event == "end" and push.generation >= generation)
                or (push.event == "start" and push.generation > generation)
            ),
            default=None,
        )

    def of(self, generation: int, cut: float) -> list[Published]:
        """What an activity of `generation` should show, published by `cut`: its own starts and
        updates, and the ends of it or a newer generation."""
        return [
            push
            for push in self.pushes
            if push.at <= cut
            and (
                (push.event != "end" and push.generation == generation)
                or (push.event == "end" and push.generation >= generation)
            )
        ]

    def moment(self, push: Push, generation: int) -> tuple[int, int | None]:
        """The key moment whose alert `push` carries, as (generation, version): the newest
        published alert with this text (or, trimmed, this prefix) no newer than the push's state;
        the push's own state when none matches."""
        assert push.alert is not None and push.timestamp is not None
        candidates = [
            published
            for published in self.pushes
            if published.alert is not None
            and published.stamp <= push.timestamp
            and published.event != "start"
            and (published.generation == generation or published.event == "end")
        ]
        for matches in (_same, _trimmed):
            found = [published for published in candidates if matches(push.alert, published.alert)]
            if found:
                newest = max(found, key=lambda published: published.stamp)
                return newest.generation, newest.version
        return generation, push.version


def _same(sent: Alert, published: Alert | None) -> bool:
    return sent == published


def _trimmed(sent: Alert, published: Alert | None) -> bool:
    """`sent` is `published` cut to fit: each part a prefix (less its ellipsis) or gone."""
    if published is None:
        return False
    return all(
        part.rstrip("…") == "" or full.startswith(part.rstrip("…"))
        for part, full in zip(sent, published, strict=True)
    )


class DeviceLedger:
    """Streams the journal, keeping the accepted pushes to the phones' own tokens."""

    def __init__(self, phones: Iterable[PhoneRecord]) -> None:
        self.phones = tuple(phones)
        self._starters = {phone.push_to_start_token.lower() for phone in self.phones}
        self._updates = {report.token.lower() for phone in self.phones for report in phone.activities}
        self.accepted: dict[str, list[Push]] = {}
        """Token → its accepted starts (a push-to-start token) or updates and ends, in journal order."""
        self.unanswered: dict[str, list[Push]] = {}
        """Update token → requests carrying an alert that APNs answered nothing (connection dropped)."""
        self.deaths: dict[str, float] = {}
        """Token → when APNs first answered it dead or the simulator was told it is gone."""
        self.counts: Counter[str] = Counter()
        """The journal's figures, then (once `violations` ran) the excuses it counted."""

    def add(self, entry: Push | Unregister) -> None:
        """Take one journal record (in journal order)."""
        if entry.token not in self._starters and entry.token not in self._updates:
            return
        if isinstance(entry, Unregister):
            self.counts["unregistered"] += 1
            self.deaths.setdefault(entry.token, entry.at)
            return
        self.counts["pushes"] += 1
        if entry.kills:
            self.deaths.setdefault(entry.token, entry.at)
        wanted = ("start",) if entry.token in self._starters else ("update", "end")
        if entry.status is None and entry.alert is not None and entry.event in wanted:
            self.unanswered.setdefault(entry.token, []).append(entry)
        if entry.accepted and entry.event in wanted:
            self.accepted.setdefault(entry.token, []).append(entry)
            self.counts[f"{entry.event}s"] += 1

    def figures(self) -> dict[str, int]:
        """The journal's counts, and (once `violations` ran) the excuses it counted."""
        return {key: self.counts[key] for key in FIGURES}

    def violations(self, facts: MatchFacts, horizon: float) -> list[Violation]:
        """Every broken rule (module docstring), judged as of `horizon` (epoch seconds)."""
        matches: dict[int, _Match] = {}
        for published in sorted(facts.published, key=lambda published: published.stamp):
            matches.setdefault(published.fixture_id, _Match()).pushes.append(published)
        judge = _Judge(self, facts, matches, horizon)
        return [violation for phone in self.phones for violation in judge.phone(phone)]


@dataclass
class _Judge:
    """The rules for one horizon, over one ledger and one set of facts."""

    ledger: DeviceLedger
    facts: MatchFacts
    matches: Mapping[int, _Match]
    horizon: float

    @property
    def cut(self) -> float:
        return self.horizon - HORIZON_GRACE_S

    def phone(self, phone: PhoneRecord) -> list[Violation]:
        starts: dict[tuple[int, int], list[Push]] = {}
        for push in self.ledger.accepted.get(phone.push_to_start_token.lower(), []):
            if push.fixture_id is not None:
                starts.setdefault((push.fixture_id, push.generation), []).append(push)
        found = self._starts(phone, starts)
        activities: dict[tuple[int, int], list[ActivityReport]] = {}
        for report in phone.activities:
            activities.setdefault((report.fixture_id, report.generation), []).append(report)
        for key, reports in activities.items():
            start = starts.get(key, [None])[0]
            found += self._activity(phone, reports, start)
        return found

    # --- rule 1 --------------------------------------------------------------------------------

    def _starts(self, phone: PhoneRecord, starts: Mapping[tuple[int, int], list[Push]]) -> list[Violation]:
        token = phone.push_to_start_token
        found: list[Violation] = []
        for (fixture, generation), pushes in sorted(starts.items()):
            subject = _subject(fixture, phone, token, generation)
            if fixture not in phone.asked:
                found.append(Violation(CHECK, subject, START_UNFOLLOWED))
            confirmed = min(
                (
                    report.reported_at
                    for report in phone.activities
                    if (report.fixture_id, report.generation) == (fixture, generation)
                    and report.refused is None
                ),
                default=None,
            )
            again = [push for push in pushes[1:] if confirmed is not None and confirmed < push.at]
            self.ledger.counts["starts_again_unreported"] += len(pushes) - 1 - len(again)
            if again:
                detail = f"{START_TWICE}: {len(pushes)} starts {_times(p.at for p in pushes)}"
                found.append(
                    Violation(CHECK, subject, f"{detail}, token reported {_times([confirmed or 0])}")
                )
        if phone.deleted_at is not None or token.lower() in self.ledger.deaths:
            return found
        for fixture, followed_at in sorted(phone.follows.items()):
            for generation, since in self._owed_starts(fixture, followed_at):
                if (fixture, generation) not in starts:
                    detail = (
                        f"{START_MISSING}: owed {_times([since])}, follow confirmed {_times([followed_at])}"
                    )
                    subject = _subject(fixture, phone, token, generation)
                    found.append(Violation(CHECK, subject, detail + self._words(phone, fixture)))
        return found

    def _owed_starts(self, fixture: int, followed_at: float) -> Iterator[tuple[int, float]]:
        """(generation, owed since) for each start a follow confirmed at `followed_at` is owed."""
        match = self.matches.get(fixture, _Match())
        for generation, started_at in sorted(match.starts().items()):
            since = max(followed_at, started_at)
            closed = match.closed(generation)
            until = self.horizon if closed is None else min(closed, self.horizon)
            if _up_time(since, until, self.facts.outages) >= HORIZON_GRACE_S:
                yield generation, since

    # --- rules 2 and 3 -------------------------------------------------------------------------

    def _activity(
        self, phone: PhoneRecord, reports: Sequence[ActivityReport], start: Push | None
    ) -> list[Violation]:
        fixture, generation = reports[0].fixture_id, reports[0].generation
        match = self.matches.get(fixture, _Match())
        pushes = sorted(
            (push for report in reports for push in self.ledger.accepted.get(report.token.lower(), [])),
            key=lambda push: push.seq,
        )
        shown, taken = phone_view(start, pushes)
        subject = _subject(fixture, phone, reports[-1].token, generation)
        found: list[Violation] = []
        alerted: dict[tuple[int, int | None], list[float]] = {}
        for push in taken:
            # An end's alert is the result's banner, not a key moment (the end's own rule).
            if push.alert is not None and push.event == "update":
                alerted.setdefault(match.moment(push, generation), []).append(push.at)
        for (_, version), times in sorted(alerted.items(), key=lambda item: (item[0][0], item[0][1] or 0)):
            if len(times) > 1:
                detail = f"{ALERT_TWICE}: {len(times)} times, version {version} {_times(times)}"
                found.append(Violation(CHECK, subject, detail))
        problem = self._shows(phone, reports, match, shown)
        if problem is not None:
            found.append(Violation(CHECK, subject, problem + self._words(phone, fixture)))
        unanswered = [
            push for report in reports for push in self.ledger.unanswered.get(report.token.lower(), [])
        ]
        for problem in self._alerts_owed(phone, reports, match, pushes, unanswered):
            found.append(Violation(CHECK, subject, problem + self._words(phone, fixture)))
        return found

    def _gone(self, phone: PhoneRecord, report: ActivityReport) -> bool:
        """Nothing can reach the activity any more: its newest token is dead, or the app is gone."""
        return phone.deleted_at is not None or report.token.lower() in self.ledger.deaths

    def _death(self, phone: PhoneRecord, report: ActivityReport) -> float | None:
        """When the activity's newest token died or the app went, whichever came first."""
        ends = [at for at in (self.ledger.deaths.get(report.token.lower()), phone.deleted_at) if at]
        return min(ends, default=None)

    def _shows(
        self, phone: PhoneRecord, reports: Sequence[ActivityReport], match: _Match, shown: Shown | None
    ) -> str | None:
        """Rule 2: what the activity shows, against the newest state published before the cut."""
        newest = reports[-1]
        if self._gone(phone, newest) or newest.reported_at > self.cut:
            return None
        owed = match.of(newest.generation, self.cut)
        if not owed:
            return None
        expected = owed[-1]
        refused = "" if newest.refused is None else f" (its token report was refused {newest.refused})"
        if expected.event == "end":
            ends = {
                push.stamp: push for push in match.of(newest.generation, self.horizon) if push.event == "end"
            }
            end = ends.get(shown.timestamp) if shown is not None and shown.event == "end" else None
            if end is None or shown is None or shown.version != end.version:
                return (
                    f"{END_MISSING} (version {expected.version}, published {_times([expected.at])}): "
                    f"it shows {_shown(shown)}{refused}"
                )
            return None
        if shown is None or shown.timestamp < expected.stamp:
            return (
                f"{STATE_BEHIND}: {_shown(shown)}, the newest published is version {expected.version} "
                f"{_times([expected.at])}{refused}"
            )
        return None

    def _alerts_owed(
        self,
        phone: PhoneRecord,
        reports: Sequence[ActivityReport],
        match: _Match,
        pushes: Sequence[Push],
        unanswered: Sequence[Push],
    ) -> Iterator[str]:
        """Rule 3: the key moments whose alert the activity is owed and never showed."""
        generation = reports[0].generation
        for moment in match.of(generation, self.cut):
            if (
                moment.event != "update"
                or moment.alert is None
                or not self._reachable(phone, reports, moment)
            ):
                continue
            since = [p for p in pushes if p.at > moment.at and (p.timestamp or 0) >= moment.stamp]
            ended = next((i for i, p in enumerate(since) if p.event == "end"), None)
            if ended is not None:
                since = since[: ended + 1]  # an ended activity takes nothing more, alerts included
            if not since and self._gone(phone, reports[-1]):
                continue
            first = since[0] if since else None
            if first is not None and first.alert is None and first.at <= moment.stale_date:
                # A drainer in doubt sends the state alone, and the alert it held back once APNs
                # answers: an alert no newer than that state, within the user's patience.
                held = next((p for p in since if p.alert is not None), None)
                if (
                    held is not None
                    and held.at <= first.at + HORIZON_GRACE_S
                    and (match.moment(held, generation)[1] or 0) <= (first.version or 0)
                ):
                    first = held
                elif held is None and _within(self._death(phone, reports[-1]), since[-1].at, first.at):
                    # The token died (or the app went) after the last push and while the held alert
                    # could still follow: nothing could show it after that.
                    self.ledger.counts["alerts_lost_token_dead"] += 1
                    continue
            if first is not None:
                carried = None if first.alert is None else match.moment(first, generation)
                version = moment.version or 0
                if carried is not None and (carried[1] or 0) >= version:
                    if (carried[1] or 0) > version:
                        self.ledger.counts["alerts_replaced"] += 1
                    continue
                if first.at > moment.stale_date:
                    self.ledger.counts["alerts_expired"] += 1
                    continue
            until = self.horizon if first is None else first.at
            if any(
                moment.at < push.at <= until
                and (push.timestamp or 0) >= moment.stamp
                and (match.moment(push, generation)[1] or 0) >= (moment.version or 0)
                for push in unanswered
            ):
                self.ledger.counts["alerts_lost_unanswered"] += 1
                continue
            if any(span.began_within(moment.at, until) for span in self.facts.interruptions):
                self.ledger.counts["alerts_lost_at_interruption"] += 1
                continue
            after = "no push reached it since" if first is None else f"the next push {_pushed(first)}"
            yield f"{ALERT_MISSING}: version {moment.version} published {_times([moment.at])}, {after}"

    def _reachable(self, phone: PhoneRecord, reports: Sequence[ActivityReport], moment: Published) -> bool:
        """Whether the activity had a live, reported token when `moment` was published."""
        current = None
        for report in reports:
            if report.refused is None and report.reported_at <= moment.at:
                current = report
        if current is None or (phone.deleted_at is not None and phone.deleted_at <= moment.at):
            return False
        died = self.ledger.deaths.get(current.token.lower())
        return died is None or died > moment.at

    def _words(self, phone: PhoneRecord, fixture: int) -> str:
        if self.facts.words is None:
            return ""
        return f" (postgres: {self.facts.words.get((phone.device, fixture), 'no follow')})"


def _within(death: float | None, last_push: float, quiet_push: float) -> bool:
    """A death after the last push and within the user's patience after the quiet one."""
    return death is not None and last_push <= death <= quiet_push + HORIZON_GRACE_S


def _up_time(began: float, ended: float, outages: Iterable[Span]) -> float:
    """Seconds of [began, ended] outside every outage."""
    down = 0.0
    reached = began
    for span in sorted(outages, key=lambda span: span.began):
        low, high = max(span.began, reached), min(span.ended, ended)
        if high > low:
            down += high - low
            reached = max(reached, high)
    return max(0.0, ended - began - down)


def _subject(fixture: int, phone: PhoneRecord, token: str, generation: int) -> str:
    name = f"fixture {fixture} device {phone.device} token {_short(token)}"
    return name if generation == 1 else f"{name} generation {generation}"


def _shown(shown: Shown | None) -> str:
    if shown is None:
        return "nothing"
    return f"{shown.event} version {shown.version} (timestamp {shown.timestamp:.15g})"


def _pushed(push: Push) -> str:
    carried = "no alert" if push.alert is None else f"alert {push.alert[0]!r}"
    return f"{_times([push.at])} (version {push.version}) carried {carried}"


def clock(epoch: float) -> str:
    """A moment as UTC clock time, to find it in the workers' logs."""
    return datetime.fromtimestamp(epoch, UTC).strftime("%H:%M:%S.%f")[:-3]


def _times(moments: Iterable[float]) -> str:
    return "at " + ", ".join(clock(at) for at in moments)


def _short(token: str) -> str:
    return f"{token[:12]}…"
