"""Pacing (pure): what is a key moment, who waits, what is stale; and the limits around sending."""

from __future__ import annotations

from datetime import UTC, datetime

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from activities.push.limiter import AdaptiveLimit
from activities.push.outcomes import Verdict, classify
from activities.push.pacing import LastSent, decide
from activities.push.provider_token import ProviderTokens
from domain.moments import KeyMoment
from domain.progress import IngestSummary, MatchProgress
from domain.push_plan import pace, update_push
from domain.pushes import LiveState, PushInput
from domain.snapshot import MatchState

pytestmark = pytest.mark.unit


def test_key_moments_go_at_once_with_an_alert() -> None:
    goal = pace("live_first_half", "live_first_half", (KeyMoment(kind="goal", side="home"),), minute=23)
    assert (goal.priority, goal.alert, goal.routine) == (10, True, False)
    assert goal.moment == KeyMoment(kind="goal", side="home", minute=23)
    card = pace(
        "live_first_half",
        "live_first_half",
        (KeyMoment(kind="yellow_card", side="away"), KeyMoment(kind="red_card", side="away")),
    )
    assert card.moment is not None and card.moment.kind == "red_card"


def test_period_changes_and_corrections_go_at_once_without_an_alert() -> None:
    half_time = pace("live_first_half", "half_time", ())
    assert (half_time.priority, half_time.alert, half_time.routine) == (10, False, False)
    var = pace("live_first_half", "live_first_half", (KeyMoment(kind="retraction"),))
    assert (var.priority, var.alert) == (10, False)
    assert var.moment == KeyMoment(kind="retraction")


def test_anything_else_is_routine() -> None:
    tick = pace("live_second_half", "live_second_half", (KeyMoment(kind="corner", side="home"),))
    assert (tick.priority, tick.alert, tick.routine) == (5, False, True)


def test_update_push_for_the_workflow() -> None:
    summary = IngestSummary(
        fixture_id=7,
        version=42,
        previous_version=41,
        state=MatchState.LIVE_SECOND_HALF,
        home=2,
        away=1,
        minute=71,
        key_moments=("goal:away",),
    )
    at = datetime(2026, 11, 29, 15, 30, tzinfo=UTC)
    built = update_push(
        7, MatchProgress(version=41, state=MatchState.LIVE_SECOND_HALF, home=1, away=1), summary, at
    )
    assert (built.event_key, built.effect, built.priority, built.timestamp) == (
        "v42",
        "la.alert",
        10,
        int(at.timestamp()),
    )
    assert built.state == LiveState(home=2, away=1, state="live_second_half", minute=71, version=42)


def _push(version: int, timestamp: int = 1000, routine: bool = True) -> PushInput:
    return PushInput(
        fixture_id=7,
        event_key=f"v{version}",
        kind="update",
        routine=routine,
        state=LiveState(state="live_first_half", version=version),
        timestamp=timestamp,
    )


def test_decide_drops_older_states_and_spaces_routine_updates() -> None:
    last = LastSent(version=5, timestamp=1000, routine_at=100.0)
    assert decide(last, _push(4, 1001), now=200.0, min_interval=5).action == "stale"
    assert decide(last, _push(6, 999), now=200.0, min_interval=5).action == "stale"
    waiting = decide(last, _push(6, 1001), now=102.0, min_interval=5)
    assert (waiting.action, waiting.until) == ("wait", 105.0)
    assert decide(last, _push(6, 1001), now=105.0, min_interval=5).action == "send"
    assert decide(last, _push(6, 1001, routine=False), now=102.0, min_interval=5).action == "send"
    assert decide(last, _push(5, 1000), now=102.0, min_interval=5).action == "send", "this very push, resumed"
    assert decide(LastSent(), _push(1), now=0.0, min_interval=5).action == "send"


@pytest.mark.parametrize(
    ("status", "reason", "verdict"),
    [
        (200, None, Verdict.SENT),
        (400, "BadDeviceToken", Verdict.DEACTIVATE),
        (410, "Unregistered", Verdict.DEACTIVATE),
        (410, "ExpiredToken", Verdict.DEACTIVATE),
        (413, "PayloadTooLarge", Verdict.TRIM),
        (403, "ExpiredProviderToken", Verdict.REFRESH_TOKEN),
        (403, "InvalidProviderToken", Verdict.CONFIG_ERROR),
        (400, "TopicDisallowed", Verdict.CONFIG_ERROR),
        (429, "TooManyRequests", Verdict.THROTTLED),
        (429, "TooManyProviderTokenUpdates", Verdict.NEW_CONNECTION),
        (500, "InternalServerError", Verdict.RETRY),
        (503, "ServiceUnavailable", Verdict.RETRY),
        (400, "DeviceTokenNotForTopic", Verdict.REJECT),
    ],
)
def test_every_apns_answer_has_one_action(status: int, reason: str | None, verdict: Verdict) -> None:
    assert classify(status, reason) is verdict


def test_adaptive_limit_halves_on_throttling_and_grows_back() -> None:
    limit = AdaptiveLimit(ceiling=64, floor=8, cooldown=0.0)
    limit.throttled()
    limit.throttled()
    assert (limit.limit, limit.lowest) == (16, 16)
    for _ in range(2000):
        limit.succeeded()
    assert limit.limit == 64
    for _ in range(10):
        limit.throttled()
    assert limit.limit == 8, "never below the floor"


def test_provider_token_rotates_before_an_hour_and_refreshes_at_most_every_20_minutes() -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    now = [1_000_000.0]
    tokens = ProviderTokens(pem, "KEY1234567", "TEAM123456", clock=lambda: now[0])
    first = tokens.current()
    claims = jwt.decode(first.value, key.public_key(), algorithms=["ES256"])
    assert claims == {"iss": "TEAM123456", "iat": 1_000_000}
    assert jwt.get_unverified_header(first.value)["kid"] == "KEY1234567"
    now[0] += 49 * 60
    assert tokens.current() is first
    now[0] += 60
    rotated = tokens.current()
    assert rotated.issued_at == int(now[0]) and tokens.minted == 2

    assert tokens.refresh(rotated) is True
    forced = tokens.current()
    assert forced != rotated and tokens.minted == 3
    assert tokens.refresh(first) is True, "a stale rejection: the current token is newer already"
    now[0] += 19 * 60
    assert tokens.refresh(forced) is False and tokens.minted == 3
    now[0] += 60
    assert tokens.refresh(forced) is True and tokens.minted == 4
