"""Tokens: readable prefix, enough randomness, stored as a sha-256 and recognised by shape."""

from __future__ import annotations

import hashlib

import pytest

from scoreline.accounts.tokens import hash_token, new_token, token_kind

pytestmark = pytest.mark.unit


def test_tokens_carry_their_kind_and_are_never_repeated() -> None:
    """A desk token starts `sl_desk_`, an operator's `sl_op_`, and 1,000 tokens are all distinct."""
    desk, operator = new_token("desk"), new_token("operator")
    assert desk.startswith("sl_desk_") and token_kind(desk) == "desk"
    assert operator.startswith("sl_op_") and token_kind(operator) == "operator"
    assert len({new_token("desk") for _ in range(1000)}) == 1000


def test_the_hash_is_sha256_hex_of_the_token() -> None:
    """What the database stores is the plain sha-256 hex digest, never the token."""
    token = new_token("operator")
    assert hash_token(token) == hashlib.sha256(token.encode()).hexdigest()
    assert token not in hash_token(token)


@pytest.mark.parametrize(
    "token",
    [
        "",
        "sl_desk_",
        "sl_desk_short",
        "sl_admin_" + "a" * 43,
        "sl_desk_" + "a" * 44,
        "sl_op_" + "!" * 43,
        "Bearer x",
    ],
)
def test_anything_we_never_issue_has_no_kind(token: str) -> None:
    """Malformed tokens are recognised without asking the database."""
    assert token_kind(token) is None
