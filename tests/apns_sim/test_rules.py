"""The device-token rule, which must accept Live Activity tokens longer than classic device tokens."""

from __future__ import annotations

import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from devkit.simulators.apns.rules import check_device_token

pytestmark = pytest.mark.unit

hex_bytes = st.binary(min_size=16, max_size=256).map(bytes.hex)


@given(hex_bytes, st.booleans())
def test_whole_hex_bytes_of_any_plausible_length_are_accepted(token: str, upper: bool) -> None:
    """16 to 256 bytes of hex, in either case, is a well-formed token (80-byte LA tokens included)."""
    assert check_device_token(token.upper() if upper else token) is None


@given(hex_bytes, st.integers(min_value=0), st.characters(blacklist_characters=string.hexdigits))
def test_any_non_hex_character_is_a_bad_device_token(token: str, position: int, junk: str) -> None:
    """One foreign character anywhere makes it 400 BadDeviceToken."""
    at = position % (len(token) + 1)
    rejection = check_device_token(token[:at] + junk + token[at:])

    assert rejection is not None
    assert (rejection.status, rejection.reason) == (400, "BadDeviceToken")


@given(st.binary(min_size=16, max_size=255).map(bytes.hex))
def test_half_bytes_are_rejected(token: str) -> None:
    """An odd number of hex digits cannot be a token."""
    assert check_device_token(token + "a") is not None
