"""Key material on disk: the provider signing key (Apple `.p8` style) and the TLS certificate.

Both are created on first start and reused afterwards, so a sender configured with the private key,
or a client that trusts the certificate, keeps working across simulator restarts.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
import re
import tempfile
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

CERT_FILE = "cert.pem"
CERT_KEY_FILE = "key.pem"
_PUBLIC_SUFFIX = ".pub.pem"
_KEY_ID = re.compile(r"^[A-Za-z0-9]{1,64}$")
_CERT_LIFETIME = dt.timedelta(days=365)
# A certificate this close to expiry is replaced at start rather than failing mid-session.
_CERT_RENEW_BEFORE = dt.timedelta(days=7)


def signing_key_paths(directory: Path, key_id: str) -> tuple[Path, Path]:
    """The (private `.p8`, public PEM) file names used for `key_id`."""
    if not _KEY_ID.match(key_id):
        raise ValueError(f"key id must be alphanumeric (Apple uses 10 characters), got {key_id!r}")
    return directory / f"AuthKey_{key_id}.p8", directory / f"AuthKey_{key_id}{_PUBLIC_SUFFIX}"


def ensure_signing_key(directory: Path, key_id: str) -> tuple[Path, Path]:
    """Create, or reuse, the ES256 provider key `AuthKey_<key_id>.p8` and its public half.

    The private key is PKCS#8 PEM like the file Apple's developer portal hands out, so the sender
    reads it exactly as it would a real one. An existing private key is never replaced: the
    sender may already hold it. The public file is rewritten whenever it does not match.

    Returns:
        (private key path, public key path)
    """
    directory.mkdir(parents=True, exist_ok=True)
    private_path, public_path = signing_key_paths(directory, key_id)
    if not private_path.exists():
        fresh = ec.generate_private_key(ec.SECP256R1())
        pem = fresh.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        _create_exclusive(private_path, pem)
    private_key = _load_p256_private_key(private_path)
    public_pem = private_key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    if not public_path.exists() or public_path.read_bytes() != public_pem:
        _replace(public_path, public_pem, mode=0o644)
    return private_path, public_path


def load_public_keys(directory: Path) -> dict[str, ec.EllipticCurvePublicKey]:
    """Every `AuthKey_<KEYID>.pub.pem` in `directory`, by key id."""
    keys: dict[str, ec.EllipticCurvePublicKey] = {}
    for path in sorted(directory.glob(f"AuthKey_*{_PUBLIC_SUFFIX}")):
        key = serialization.load_pem_public_key(path.read_bytes())
        if isinstance(key, ec.EllipticCurvePublicKey) and isinstance(key.curve, ec.SECP256R1):
            keys[path.name.removeprefix("AuthKey_").removesuffix(_PUBLIC_SUFFIX)] = key
    return keys


def ensure_tls_certificate(directory: Path, host: str) -> tuple[Path, Path]:
    """Create, or reuse, a self-signed P-256 certificate for `localhost`, 127.0.0.1, ::1 and `host`.

    Clients trust the certificate file itself as their CA (`cafile=`), so it is marked as a CA
    and carries key identifiers, which keeps strict X.509 verification happy too. An existing
    pair is reused only while it is intact, matching, valid for another week and covers `host`.

    Returns:
        (certificate path, private key path)
    """
    directory.mkdir(parents=True, exist_ok=True)
    cert_path, key_path = directory / CERT_FILE, directory / CERT_KEY_FILE
    if _certificate_reusable(cert_path, key_path, host):
        return cert_path, key_path
    key = ec.generate_private_key(ec.SECP256R1())
    cert = _self_signed(key, _subject_alt_names(host))
    _replace(
        key_path,
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        ),
        mode=0o600,
    )
    _replace(cert_path, cert.public_bytes(serialization.Encoding.PEM), mode=0o644)
    return cert_path, key_path


def _load_p256_private_key(path: Path) -> ec.EllipticCurvePrivateKey:
    key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    if not isinstance(key, ec.EllipticCurvePrivateKey) or not isinstance(key.curve, ec.SECP256R1):
        raise ValueError(f"{path} is not a P-256 (ES256) private key")
    return key


def _subject_alt_names(host: str) -> list[x509.GeneralName]:
    names: list[x509.GeneralName] = [
        x509.DNSName("localhost"),
        x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
        x509.IPAddress(ipaddress.ip_address("::1")),
    ]
    extra = _host_name(host)
    if extra is not None and extra not in names:
        names.append(extra)
    return names


def _host_name(host: str) -> x509.GeneralName | None:
    if host in ("", "0.0.0.0", "::"):  # wildcard binds are reached through the names above
        return None
    try:
        return x509.IPAddress(ipaddress.ip_address(host))
    except ValueError:
        return x509.DNSName(host)


def _self_signed(key: ec.EllipticCurvePrivateKey, names: list[x509.GeneralName]) -> x509.Certificate:
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Scoreline APNs simulator")])
    now = dt.datetime.now(dt.UTC)
    public = key.public_key()
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(public)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + _CERT_LIFETIME)
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(public), critical=False)
        .sign(key, hashes.SHA256())
    )


def _certificate_reusable(cert_path: Path, key_path: Path, host: str) -> bool:
    try:
        cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
        key = _load_p256_private_key(key_path)
    except (OSError, ValueError):
        return False
    if cert.public_key() != key.public_key():
        return False
    if cert.not_valid_after_utc - _CERT_RENEW_BEFORE < dt.datetime.now(dt.UTC):
        return False
    try:
        names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return False
    return all(name in names for name in _subject_alt_names(host))


def _write_temp(path: Path, data: bytes, mode: int) -> Path:
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    os.chmod(name, mode)
    return Path(name)


def _replace(path: Path, data: bytes, *, mode: int) -> None:
    """Write atomically, so a reader never sees half a PEM file."""
    os.replace(_write_temp(path, data, mode), path)


def _create_exclusive(path: Path, data: bytes) -> None:
    """Write a new private key without ever clobbering one another process created meanwhile."""
    temp = _write_temp(path, data, 0o600)
    try:
        os.link(temp, path)
    except FileExistsError:
        pass
    finally:
        temp.unlink()
