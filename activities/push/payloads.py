"""Live Activity payloads (`start`, `update`, `end`), the content-state schema, and 413 trimming.

Pure. The publisher fills a published push (`la_push`) from a `PushInput` and the fixture's names
(`content_state`, `alert`, `attributes`); the drainer composes each request from those columns
(`compose`), so every activity gets the newest state with the one alert it still owes.

The content-state is what the app's `ActivityAttributes.ContentState` decodes with a default
`JSONDecoder`, so keys are the Swift property names (camelCase) and an optional field is left out
rather than sent as `null` (a `null` has broken decoding in the field; a dropped push is silent):

    homeName    String   home team name
    awayName    String   away team name
    homeScore   Int      goals (football) or runs (cricket)
    awayScore   Int
    state       String   normalised match state: live_first_half, half_time, finished, ...
    minute      Int?     match minute, when the provider gives one
    detail      String?  one extra line, e.g. a cricket innings "187/4 (20 ov)"
    lastMoment  {kind: String, side: String?, minute: Int?}?   the last key moment (goal, red card ...)
    cricket     {...}?   a cricket match's line (below)
    version     Int      scoreboard version; a device never shows a lower one after a higher

The cricket line (`domain.cricket.live.CricketLine`), what cricket widgets show:

    batting       String?  home | away: the side batting (or that batted last)
    runs, wickets Int      its innings so far, `overs` String "18.4"
    other         String?  the other side's latest innings, "173/6"
    striker, nonStriker  {name: String?, runs: Int, balls: Int}?
    bowler        String?  "Name 3.5-0-28-1" (overs-maidens-runs-wickets)
    lastSix       [String] the last six deliveries: "W", "4", "0", "1lb", "2wd", "1nb"
    target, need, ballsLeft  Int?   in a chase; requiredRate Double?
    superOver     Bool

The static attributes (`MatchActivityAttributes`) are `fixtureId`, `homeTeam`, `awayTeam`,
`competition` (optional) and `generation` (Int?, absent = 1): which of the follower's activities
for this fixture it is (a long match renews its activity before Apple's 8-hour cap, a Test starts
one a day). The app sends it back with the activity's update token, so a late report for an
activity that has ended never attaches to the one that replaced it.

APNs refuses a body over 4096 bytes with 413 `PayloadTooLarge`. `variants` gives the payload and
ever smaller versions of it: the alert is trimmed first (body shortened, then title only, then gone
except on `start`, where Apple requires one), then the content-state's optional fields are dropped
(`lastMoment`, `detail`, `minute`). The sender starts with the first that fits and moves to the
next on a 413.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from domain.cricket.live import BatterLine, CricketLine
from domain.moments import KeyMoment
from domain.pushes import LiveState, PushInput
from domain.snapshot import MatchState

INNINGS_OVER_STATES = frozenset({MatchState.INNINGS_BREAK.value, MatchState.FINISHED.value})
"""A cricket alert sent with one of these states also closed an innings (a wicket off the last ball)."""

ATTRIBUTES_TYPE = "MatchActivityAttributes"
MAX_PAYLOAD_BYTES = 4096
ALERT_BODY_SHORT = 64
ALERT_TITLE_SHORT = 32
OPTIONAL_STATE_FIELDS = ("lastMoment", "detail", "minute", "cricket")
"""Dropped in this order when a payload is too large: the least useful first."""

Payload = dict[str, Any]

_MOMENT_TITLES = {
    "goal": "GOAL! {team}",
    "penalty_goal": "GOAL! {team} (penalty)",
    "own_goal": "Own goal",
    "red_card": "Red card: {team}",
    "second_yellow": "Red card: {team}",
    "wicket": "Wicket! {team}",
    "fifty": "Fifty! {team}",
    "hundred": "Hundred! {team}",
    "innings_end": "End of innings",
    "retraction": "Decision reversed",
}


@dataclass(frozen=True)
class FixtureNames:
    """The fixture's names as stored on its row (teams and competition)."""

    home: str
    away: str
    competition: str | None = None


def attributes(push: PushInput, names: FixtureNames) -> Payload:
    """The start's static attributes (`MatchActivityAttributes`), for `la_push.attributes`."""
    document: Payload = {"fixtureId": push.fixture_id, "homeTeam": names.home, "awayTeam": names.away}
    if names.competition:
        document["competition"] = names.competition
    if push.generation > 1:
        document["generation"] = push.generation
    return document


def compose(
    event: str,
    stamp: int,
    state: Payload,
    *,
    stale_date: int,
    dismissal_date: int,
    alert: Payload | None = None,
    attributes: Payload | None = None,
) -> Payload:
    """One request's (untrimmed) payload: the wanted push's state at its `stamp`, with `alert`.

    A start carries `attributes` and its own alert, made from them (Apple requires one there).
    """
    aps: Payload = {"timestamp": stamp, "event": event, "content-state": state}
    if event == "start":
        aps["attributes-type"] = ATTRIBUTES_TYPE
        aps["attributes"] = attributes or {}
        # iOS 18+: ask ActivityKit to mint the new activity's update token, which the app reports.
        aps["input-push-token"] = 1
        alert = start_alert(attributes or {}, cricket="cricket" in state)
    if event == "end":
        aps["dismissal-date"] = dismissal_date
    else:
        aps["stale-date"] = stale_date
    if alert is not None:
        aps["alert"] = alert
    return {"aps": aps}


def start_alert(attributes: Payload, *, cricket: bool) -> dict[str, str]:
    """A start's alert, from its attributes: "Riverside FC v Harbour United", "Kick-off · League"."""
    title = f"{attributes.get('homeTeam', '')} v {attributes.get('awayTeam', '')}"
    opening = "Play under way" if cricket else "Kick-off"
    competition = attributes.get("competition")
    body = f"{opening} · {competition}" if competition else opening
    return {"title": title, "body": body, "sound": "default"}


def content_state(state: LiveState, moment: KeyMoment | None, names: FixtureNames) -> Payload:
    """The ContentState document (see the module docstring for the schema)."""
    document: Payload = {
        "homeName": names.home,
        "awayName": names.away,
        "homeScore": state.home,
        "awayScore": state.away,
        "state": state.state,
    }
    if state.minute is not None:
        document["minute"] = state.minute
    if state.detail:
        document["detail"] = state.detail
    if moment is not None:
        last: Payload = {"kind": moment.kind}
        if moment.side is not None:
            last["side"] = moment.side
        if moment.minute is not None:
            last["minute"] = moment.minute
        document["lastMoment"] = last
    if state.cricket is not None:
        document["cricket"] = cricket_state(state.cricket)
    document["version"] = state.version
    return document


def cricket_state(line: CricketLine) -> Payload:
    """The cricket block of the content-state (camelCase, absent fields left out)."""
    block: Payload = {
        "runs": line.runs,
        "wickets": line.wickets,
        "overs": line.overs,
        "lastSix": list(line.last_six),
        "superOver": line.super_over,
    }
    optional: dict[str, Any] = {
        "batting": line.batting,
        "other": line.other,
        "striker": _batter(line.striker),
        "nonStriker": _batter(line.non_striker),
        "bowler": line.bowler,
        "target": line.target,
        "need": line.need,
        "ballsLeft": line.balls_left,
        "requiredRate": line.required_rate,
    }
    block.update({key: value for key, value in optional.items() if value is not None})
    return block


def _batter(batter: BatterLine | None) -> Payload | None:
    if batter is None:
        return None
    document: Payload = {"runs": batter.runs, "balls": batter.balls}
    if batter.name:
        document["name"] = batter.name
    return document


def alert(push: PushInput, names: FixtureNames) -> dict[str, str]:
    """The alert's title and body; the sound is the app's default."""
    score = score_line(push.state, names)
    cricket = push.state.cricket is not None
    if push.kind == "start":
        return start_alert(attributes(push, names), cricket=cricket)
    if push.kind == "end":
        title, body = ("Result" if cricket else "Full time"), score
    elif push.moment is not None:
        team = names.home if push.moment.side == "home" else names.away if push.moment.side else ""
        template = _MOMENT_TITLES.get(push.moment.kind, push.moment.kind.replace("_", " ").capitalize())
        title, body = template.format(team=team).strip(" :"), score
        if cricket and push.moment.kind != "innings_end" and push.state.state in INNINGS_OVER_STATES:
            title = f"{title} · End of innings"
    else:
        title, body = push.state.state.replace("_", " ").capitalize(), score
    return {"title": title, "body": body, "sound": "default"}


def score_line(state: LiveState, names: FixtureNames) -> str:
    """`Riverside FC 1-0 Harbour United (23')`; in cricket `CSK 176/4 (18.4 ov) · RCB 173/6`."""
    cricket = state.cricket
    if cricket is not None and cricket.batting is not None:
        batting, other = (names.home, names.away) if cricket.batting == "home" else (names.away, names.home)
        text = f"{batting} {cricket.runs}/{cricket.wickets} ({cricket.overs} ov)"
        return f"{text} · {other} {cricket.other}" if cricket.other else text
    line = f"{names.home} {state.home}-{state.away} {names.away}"
    return f"{line} ({state.minute}')" if state.minute is not None else line


def encode(payload: Payload) -> bytes:
    """Compact UTF-8 JSON: the bytes APNs measures against its limit."""
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()


def variants(payload: Payload, limit: int = MAX_PAYLOAD_BYTES) -> tuple[bytes, ...]:
    """The payload and its trimmed versions that fit in `limit` bytes, largest first.

    Empty when even the smallest does not fit (the push cannot be sent).
    """
    found: list[bytes] = []
    current = payload
    for step in _TRIM_STEPS:
        current = step(current)
        body = encode(current)
        if len(body) <= limit and (not found or body != found[-1]):
            found.append(body)
    return tuple(found)


def _clip(text: str, length: int) -> str:
    return text if len(text) <= length else text[: length - 1] + "…"


def _with_aps(payload: Payload, key: str, value: Any) -> Payload:
    """A copy of `payload` with `aps[key]` set to `value`, or removed when `value` is None."""
    aps = dict(payload["aps"])
    if value is None:
        aps.pop(key, None)
    else:
        aps[key] = value
    return {**payload, "aps": aps}


def _keep(payload: Payload) -> Payload:
    return payload


def _short_alert_body(payload: Payload) -> Payload:
    alert = payload["aps"].get("alert")
    if not isinstance(alert, dict) or "body" not in alert:
        return payload
    return _with_aps(payload, "alert", {**alert, "body": _clip(alert["body"], ALERT_BODY_SHORT)})


def _title_only(payload: Payload) -> Payload:
    alert = payload["aps"].get("alert")
    if not isinstance(alert, dict):
        return payload
    short = {"title": _clip(alert.get("title", ""), ALERT_TITLE_SHORT)}
    if "sound" in alert:
        short["sound"] = alert["sound"]
    return _with_aps(payload, "alert", short)


def _no_alert(payload: Payload) -> Payload:
    if payload["aps"].get("event") == "start" or "alert" not in payload["aps"]:
        return payload  # a start without an alert is dropped by the device
    return _with_aps(payload, "alert", None)


def _without_state_field(name: str) -> Callable[[Payload], Payload]:
    def step(payload: Payload) -> Payload:
        state = payload["aps"].get("content-state")
        if not isinstance(state, dict) or name not in state:
            return payload
        return _with_aps(payload, "content-state", {k: v for k, v in state.items() if k != name})

    return step


_TRIM_STEPS: tuple[Callable[[Payload], Payload], ...] = (
    _keep,
    _short_alert_body,
    _title_only,
    _no_alert,
    *(_without_state_field(name) for name in OPTIONAL_STATE_FIELDS),
)
