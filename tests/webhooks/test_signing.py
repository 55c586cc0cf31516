"""Signing, checked against the Standard Webhooks spec's own algorithm and the reference verifier."""

from __future__ import annotations

import base64
import hashlib
import hmac
from datetime import UTC, datetime

import pytest
from standardwebhooks import Webhook

from scoreline.webhooks.endpoints import signing_secrets
from scoreline.webhooks.signing import SECRET_PREFIX, message_id, new_secret, signed_headers

pytestmark = pytest.mark.unit

AT = datetime(2026, 3, 14, 15, 0, 7, 900_000, tzinfo=UTC)


def _spec_signature(secret: str, msg_id: str, timestamp: str, body: bytes) -> str:
    """The spec, written out: HMAC-SHA256 of `id.timestamp.body`, keyed by the base64 after `whsec_`."""
    key = base64.b64decode(secret.removeprefix("whsec_"))
    digest = hmac.new(key, f"{msg_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def test_the_spec_test_vector() -> None:
    """The example in the Standard Webhooks specification."""
    secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    headers = signed_headers(
        [secret],
        "msg_p5jXN8AQM9LWM0D4loKWxJek",
        datetime.fromtimestamp(1614265330, UTC),
        b'{"test": 2432232314}',
    )
    assert headers["webhook-signature"] == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
    assert headers["webhook-timestamp"] == "1614265330"


def test_signatures_match_the_spec_algorithm_and_the_reference_verifier() -> None:
    secret = new_secret()
    body = '{"type":"match.change","fixture_id":1,"seq":2,"note":"é"}'.encode()
    headers = signed_headers([secret], "msg_1_2_3", AT, body)
    assert headers["webhook-id"] == "msg_1_2_3"
    assert headers["webhook-timestamp"] == str(int(AT.timestamp()))
    assert headers["webhook-signature"] == _spec_signature(
        secret, "msg_1_2_3", headers["webhook-timestamp"], body
    )
    now = datetime.now(UTC)
    fresh = signed_headers([secret], "msg_1_2_3", now, body)
    assert Webhook(secret).verify(body, fresh)["seq"] == 2


def test_during_a_rotation_either_secret_verifies() -> None:
    old, new = new_secret(), new_secret()
    body = b'{"seq":1}'
    headers = signed_headers([new, old], "msg_1_1_1", datetime.now(UTC), body)
    assert len(headers["webhook-signature"].split(" ")) == 2
    for secret in (old, new):
        Webhook(secret).verify(body, headers)
    with pytest.raises(Exception, match="No matching signature"):
        Webhook(new_secret()).verify(body, headers)


def test_secrets_are_whsec_and_at_least_24_random_bytes() -> None:
    secret = new_secret()
    assert secret.startswith(SECRET_PREFIX)
    assert len(base64.b64decode(secret.removeprefix(SECRET_PREFIX))) >= 24
    assert secret != new_secret()


def test_the_previous_secret_signs_only_until_its_overlap_ends() -> None:
    until = datetime(2026, 3, 15, tzinfo=UTC)
    assert signing_secrets("new", "old", until, datetime(2026, 3, 14, tzinfo=UTC)) == ["new", "old"]
    assert signing_secrets("new", "old", until, until) == ["new"]
    assert signing_secrets("new", None, None, until) == ["new"]


def test_the_message_id_is_stable_per_change_and_endpoint() -> None:
    assert message_id(4, 93000001, 7) == "msg_4_93000001_7" == message_id(4, 93000001, 7)
    assert message_id(5, 93000001, 7) != message_id(4, 93000001, 7)
