"""Standard Webhooks signing: `whsec_` secrets and the `webhook-id|timestamp|signature` headers.

The signature is the reference library's (`standardwebhooks`, by the spec's authors, no
dependencies): `v1,` + base64 HMAC-SHA256 of `{id}.{timestamp}.{body}` keyed by the secret's
base64-decoded bytes. Using it rather than our own HMAC means a partner's off-the-shelf verifier
and our signer are the same code. During a rotation both secrets sign, space-separated, so a
receiver that has either one accepts the message.
"""

from __future__ import annotations

import base64
import secrets
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Final

from standardwebhooks import Webhook

SECRET_PREFIX: Final = "whsec_"
SECRET_BYTES: Final = 32
"""Random bytes in a secret (the spec asks for 24 to 64)."""


def new_secret() -> str:
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode()


def message_id(endpoint_id: int, fixture_id: int, seq: int) -> str:
    """The `webhook-id`: the same on every retry of one change to one endpoint (the receiver's
    idempotency key), different for every other change or endpoint."""
    return f"msg_{endpoint_id}_{fixture_id}_{seq}"


def signed_headers(signing_secrets: Sequence[str], msg_id: str, at: datetime, body: bytes) -> dict[str, str]:
    """The three headers for `body` sent at `at` (whole unix seconds), one signature per secret."""
    if not signing_secrets:
        raise ValueError("a message needs at least one signing secret")
    moment = datetime.fromtimestamp(int(at.timestamp()), tz=UTC)
    signatures = [Webhook(secret).sign(msg_id, moment, body) for secret in signing_secrets]
    return {
        "webhook-id": msg_id,
        "webhook-timestamp": str(int(moment.timestamp())),
        "webhook-signature": " ".join(signatures),
    }
