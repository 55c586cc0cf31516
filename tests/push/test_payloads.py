"""Payloads (pure): the content-state schema, each event's required keys, and 413 trimming."""

from __future__ import annotations

import json

import pytest

from activities.push.payloads import MAX_PAYLOAD_BYTES, FixtureNames, content_state, variants
from devkit.simulators.apns.live_activity import live_activity_problem
from domain.moments import KeyMoment
from domain.pushes import LiveState, PushInput
from tests.push.composed import build

pytestmark = pytest.mark.unit

NAMES = FixtureNames("Riverside FC", "Harbour United", "Premier League")
STATE = LiveState(home=2, away=1, state="live_second_half", minute=71, version=9)


def request(kind: str = "update", **fields: object) -> PushInput:
    return PushInput.model_validate(
        {
            "fixture_id": 7,
            "event_key": "v9",
            "kind": kind,
            "state": STATE,
            "timestamp": 1_790_000_000,
            **fields,
        }
    )


def test_content_state_leaves_optional_fields_out_instead_of_null() -> None:
    """Swift's default decoder chokes on a null where it expects a value: absent keys, never null."""
    bare = content_state(LiveState(state="half_time", version=3), None, NAMES)
    assert bare == {
        "homeName": "Riverside FC",
        "awayName": "Harbour United",
        "homeScore": 0,
        "awayScore": 0,
        "state": "half_time",
        "version": 3,
    }
    full = content_state(
        STATE.model_copy(update={"detail": "187/4"}), KeyMoment(kind="goal", side="away"), NAMES
    )
    assert full["minute"] == 71 and full["detail"] == "187/4"
    assert full["lastMoment"] == {"kind": "goal", "side": "away"}


def test_every_event_is_what_a_device_accepts() -> None:
    """start carries attributes and an alert; update a stale date; end a dismissal date."""
    start = build(request("start"), NAMES)
    update = build(request(alert=True, moment=KeyMoment(kind="red_card", side="home")), NAMES)
    end = build(request("end", dismiss_after_seconds=0), NAMES)
    for payload in (start, update, end):
        assert live_activity_problem(payload, now=1_790_000_000) is None
    assert start["aps"]["attributes"] == {
        "fixtureId": 7,
        "homeTeam": "Riverside FC",
        "awayTeam": "Harbour United",
        "competition": "Premier League",
    }
    assert start["aps"]["input-push-token"] == 1
    assert update["aps"]["alert"]["title"] == "Red card: Riverside FC"
    assert update["aps"]["alert"]["body"] == "Riverside FC 2-1 Harbour United (71')"
    assert update["aps"]["stale-date"] == 1_790_000_000 + 900
    assert end["aps"]["dismissal-date"] == 1_790_000_000
    assert "alert" not in build(request(), NAMES)["aps"]


def test_a_payload_that_fits_is_sent_whole() -> None:
    payload = build(request(alert=True), NAMES)
    first = variants(payload)[0]
    assert json.loads(first) == payload


def test_oversized_payload_loses_its_alert_before_any_state() -> None:
    """Too large: alert body, then the alert, then optional state fields, and never past 4096 bytes."""
    long_names = FixtureNames("R" * 700, "H" * 700)
    payload = build(
        request(
            alert=True,
            moment=KeyMoment(kind="goal", side="home"),
            state=STATE.model_copy(update={"detail": "d" * 1000}),
        ),
        long_names,
    )
    found = variants(payload)
    assert found and all(len(body) <= MAX_PAYLOAD_BYTES for body in found)
    first = json.loads(found[0])["aps"]
    assert len(json.dumps(payload).encode()) > MAX_PAYLOAD_BYTES
    assert first["content-state"]["detail"] == "d" * 1000, "state fields are kept while the alert can give"
    assert len(first["alert"]["body"]) <= 64
    last = json.loads(found[-1])["aps"]
    assert "alert" not in last and "detail" not in last["content-state"]


def test_state_fields_go_when_the_alert_is_not_enough_and_start_keeps_an_alert() -> None:
    """Past the alert, optional state goes (lastMoment, detail) while names and score stay."""
    long_names = FixtureNames("R" * 1500, "H" * 1500)
    update = request(
        alert=True, moment=KeyMoment(kind="goal"), state=STATE.model_copy(update={"detail": "d" * 1000})
    )
    aps = json.loads(variants(build(update, long_names))[0])["aps"]
    assert "alert" not in aps
    assert "lastMoment" not in aps["content-state"] and "detail" not in aps["content-state"]
    assert aps["content-state"]["minute"] == 71 and aps["content-state"]["homeName"] == "R" * 1500

    start = json.loads(variants(build(request("start"), FixtureNames("R" * 900, "H" * 900)))[0])["aps"]
    assert len(start["alert"]["title"]) <= 32, "a start keeps a (short) alert: Apple requires one"
    assert variants(build(request(), FixtureNames("R" * 3000, "H" * 3000))) == ()
