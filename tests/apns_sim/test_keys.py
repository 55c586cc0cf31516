"""Key material on disk: created once, reused on restart, usable by the sender and by TLS clients."""

from __future__ import annotations

import ipaddress
import stat
import time
from pathlib import Path

import jwt
import pytest
from cryptography import x509

from devkit.simulators.apns.keys import ensure_signing_key, ensure_tls_certificate, load_public_keys


def test_signing_key_is_an_apple_style_p8_and_is_reused(tmp_path: Path) -> None:
    """The .p8 is PKCS#8 PEM, private to its owner, stable across calls, and verifies with the public file."""
    private_path, public_path = ensure_signing_key(tmp_path, "ABC123DEFG")
    first = private_path.read_bytes()
    again = ensure_signing_key(tmp_path, "ABC123DEFG")

    assert private_path.name == "AuthKey_ABC123DEFG.p8"
    assert first.startswith(b"-----BEGIN PRIVATE KEY-----")
    assert stat.S_IMODE(private_path.stat().st_mode) == 0o600
    assert again == (private_path, public_path)
    assert private_path.read_bytes() == first
    token = jwt.encode({"iss": "TEAM123456", "iat": int(time.time())}, first.decode(), algorithm="ES256")
    assert jwt.decode(token, public_path.read_text(), algorithms=["ES256"])["iss"] == "TEAM123456"
    assert list(load_public_keys(tmp_path)) == ["ABC123DEFG"]


def test_public_key_is_restored_from_the_private_key(tmp_path: Path) -> None:
    """A lost or stale public file is rewritten from the .p8, which itself is never replaced."""
    _, public_path = ensure_signing_key(tmp_path, "KEY1")
    original_public = public_path.read_bytes()
    public_path.write_text("stale")

    ensure_signing_key(tmp_path, "KEY1")

    assert public_path.read_bytes() == original_public


def test_key_id_must_be_a_safe_file_name(tmp_path: Path) -> None:
    """Key ids become file names, so only alphanumerics are allowed."""
    with pytest.raises(ValueError, match="alphanumeric"):
        ensure_signing_key(tmp_path, "../escape")


def test_tls_certificate_covers_localhost_and_is_reused(tmp_path: Path) -> None:
    """The certificate names localhost, 127.0.0.1 and ::1, and the same pair is returned next time."""
    cert_path, key_path = ensure_tls_certificate(tmp_path, "127.0.0.1")
    pem = cert_path.read_bytes()

    assert ensure_tls_certificate(tmp_path, "127.0.0.1") == (cert_path, key_path)
    assert cert_path.read_bytes() == pem
    names = x509.load_pem_x509_certificate(pem).extensions.get_extension_for_class(
        x509.SubjectAlternativeName
    )
    assert names.value.get_values_for_type(x509.DNSName) == ["localhost"]
    assert set(names.value.get_values_for_type(x509.IPAddress)) == {
        ipaddress.ip_address("127.0.0.1"),
        ipaddress.ip_address("::1"),
    }
    assert stat.S_IMODE(key_path.stat().st_mode) == 0o600


@pytest.mark.parametrize("damage", ["new-host", "corrupt-cert", "other-key"])
def test_tls_certificate_is_replaced_when_unusable(tmp_path: Path, damage: str) -> None:
    """A certificate that misses the host, is unreadable or does not match its key is regenerated."""
    cert_path, key_path = ensure_tls_certificate(tmp_path, "localhost")
    original = cert_path.read_bytes()
    host = "localhost"
    if damage == "new-host":
        host = "sim.scoreline.test"
    elif damage == "corrupt-cert":
        cert_path.write_text("garbage")
    else:
        ensure_tls_certificate(tmp_path / "other", "localhost")
        key_path.write_bytes((tmp_path / "other" / "key.pem").read_bytes())

    ensure_tls_certificate(tmp_path, host)

    assert cert_path.read_bytes() != original
    cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert host in names.get_values_for_type(x509.DNSName)
